#!/usr/bin/env python3
"""make_random_moe.py CONFIG OUT [--layers N] [--tokenizer DIR] [--seed S]

A random-weight Hugging Face folder of a Qwen3-MoE model (config.json from CONFIG, e.g.
bench/gpu/configs/qwen3-30b-a3b.json, its stack cut to --layers; model-*.safetensors in bf16 with
transformers' per-expert names; DIR's tokenizer files), so that radiance (rad-convert) and llama.cpp
(convert_hf_to_gguf.py) read the same weights for a side by side. Weights are normal with the
config's initializer_range, drawn on the GPU when there is one; norms are 1. It computes nothing
meaningful but moves exactly the bytes (and routes as unevenly as) a model of that shape does.
"""
import argparse
import json
import os
import shutil

import torch
from safetensors.torch import save_file

SHARD_BYTES = 4 << 30


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--tokenizer", default="")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cfg = json.load(open(args.config))
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
    os.makedirs(args.out, exist_ok=True)
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    if args.tokenizer:
        for f in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(args.tokenizer, f)):
                shutil.copy(os.path.join(args.tokenizer, f), args.out)

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    gen = torch.Generator(device=dev).manual_seed(args.seed)
    std = cfg.get("initializer_range", 0.02)
    d, hd = cfg["hidden_size"], cfg["head_dim"]
    hq, hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    E, F, V = cfg["num_experts"], cfg["moe_intermediate_size"], cfg["vocab_size"]

    def rnd(*shape):
        return (torch.randn(*shape, generator=gen, device=dev, dtype=torch.float32) * std).to(torch.bfloat16).cpu()

    def ones(n):
        return torch.ones(n, dtype=torch.bfloat16)

    shard, shard_bytes, index, n = {}, 0, {}, 0

    def put(name, t):
        nonlocal shard, shard_bytes, n
        shard[name] = t
        shard_bytes += t.numel() * 2
        if shard_bytes >= SHARD_BYTES:
            flush()

    def flush():
        nonlocal shard, shard_bytes, n
        if not shard:
            return
        n += 1
        fname = f"model-{n:05d}.safetensors"
        save_file(shard, os.path.join(args.out, fname), metadata={"format": "pt"})
        for k in shard:
            index[k] = fname
        shard, shard_bytes = {}, 0

    put("model.embed_tokens.weight", rnd(V, d))
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        put(p + "input_layernorm.weight", ones(d))
        put(p + "post_attention_layernorm.weight", ones(d))
        put(p + "self_attn.q_proj.weight", rnd(hq * hd, d))
        put(p + "self_attn.k_proj.weight", rnd(hkv * hd, d))
        put(p + "self_attn.v_proj.weight", rnd(hkv * hd, d))
        put(p + "self_attn.o_proj.weight", rnd(d, hq * hd))
        put(p + "self_attn.q_norm.weight", ones(hd))
        put(p + "self_attn.k_norm.weight", ones(hd))
        put(p + "mlp.gate.weight", rnd(E, d))
        for e in range(E):
            x = f"{p}mlp.experts.{e}."
            put(x + "gate_proj.weight", rnd(F, d))
            put(x + "up_proj.weight", rnd(F, d))
            put(x + "down_proj.weight", rnd(d, F))
    put("model.norm.weight", ones(d))
    put("lm_head.weight", rnd(V, d))
    flush()
    json.dump({"metadata": {}, "weight_map": index}, open(os.path.join(args.out, "model.safetensors.index.json"), "w"))
    print(f"make_random_moe: {args.out}: {cfg['num_hidden_layers']} layers, {n} shards")


if __name__ == "__main__":
    main()

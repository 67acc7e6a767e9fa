#!/usr/bin/env python3
"""make_random_llama.py OUT [--shape llama3.1-8b] [--layers N] [--seed S] [--config-only]

A random-weight checkpoint with the real shapes of Llama-3.1-8B (hidden 4096, 32 layers, 32
query / 8 kv heads of 128, MLP 14336, vocab 128256, llama3 rope scaling, theta 500000), written
by transformers in bf16 as a Hugging Face folder, so speed measurements use the real geometry
without downloading weights. Weights are drawn as transformers initialises them (normal, std
initializer_range) on the GPU when there is one. --layers shortens the stack for quick checks.
--config-only writes config.json alone (no torch), for `rad-convert OUT --random-weights SEED`,
which draws the weights itself in a few seconds.
"""
import argparse
import json
import os
import time

from transformers import LlamaConfig

SHAPES = {
    "llama3.1-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                        num_key_value_heads=8, head_dim=128, vocab_size=128256, max_position_embeddings=131072,
                        rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
                        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                        bos_token_id=128000, eos_token_id=128001),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", default="llama3.1-8b", choices=sorted(SHAPES))
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config-only", action="store_true")
    args = ap.parse_args()
    kw = dict(SHAPES[args.shape])
    if args.layers:
        kw["num_hidden_layers"] = args.layers
    cfg = LlamaConfig(**kw, torch_dtype="bfloat16")
    if args.config_only:
        cfg.architectures = ["LlamaForCausalLM"]
        cfg.save_pretrained(args.out)
        print(json.dumps({"out": args.out, "config_only": True, "layers": cfg.num_hidden_layers}))
        return
    import torch  # only for drawing the weights here
    from transformers import LlamaForCausalLM
    torch.manual_seed(args.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    t = time.time()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device(dev):
        model = LlamaForCausalLM(cfg)
    model.eval()
    model.save_pretrained(args.out, safe_serialization=True, max_shard_size="20GB")
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({"out": args.out, "params": n, "layers": cfg.num_hidden_layers, "seconds": round(time.time() - t, 1)}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""make_random_hf.py OUT --shape qwen2.5-0.5b|llama3.2-1b [--tokenizer DIR] [--seed S]

A random-weight Hugging Face folder (config.json, model.safetensors in bf16, the tokenizer files
of DIR) with a real model's shapes, written in plain Python (no numpy or torch), for CPU speed
comparisons on machines that have neither. Weights are bf16 with random sign and mantissa and an
exponent drawn around 2^-6 (|w| in [2^-7, 2^-5)), norms are 1, biases 0: a model that computes
nothing meaningful but moves exactly the bytes a real one does.
"""
import argparse
import json
import os
import random
import shutil
import struct

SHAPES = {
    "qwen2.5-0.5b": dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=896, intermediate_size=4864,
                         num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                         max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
                         hidden_act="silu", bos_token_id=151643, eos_token_id=151643, torch_dtype="bfloat16"),
    "llama3.2-1b": dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=2048, intermediate_size=8192,
                        num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=128256,
                        max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True,
                        hidden_act="silu", bos_token_id=128000, eos_token_id=128001, torch_dtype="bfloat16",
                        rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 8192}),
}

# High byte of a little-endian bf16: sign bit random, exponent 0x78..0x7b (2^-7 .. 2^-4).
HIGH = bytes(((b & 0x80) | 0x3C | ((b >> 5) & 0x01)) for b in range(256))


def random_bf16(n, rng):
    raw = bytearray(rng.randbytes(2 * n))
    raw[1::2] = bytes(raw[1::2]).translate(HIGH)
    return bytes(raw)


def tensors(cfg):
    h, ff, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", h // nh)
    bias = cfg["model_type"] == "qwen2"
    yield "model.embed_tokens.weight", [cfg["vocab_size"], h], "rand"
    for l in range(L):
        p = f"model.layers.{l}."
        yield p + "input_layernorm.weight", [h], "one"
        for name, rows in (("q_proj", nh * hd), ("k_proj", nkv * hd), ("v_proj", nkv * hd)):
            yield p + f"self_attn.{name}.weight", [rows, h], "rand"
            if bias:
                yield p + f"self_attn.{name}.bias", [rows], "zero"
        yield p + "self_attn.o_proj.weight", [h, nh * hd], "rand"
        yield p + "post_attention_layernorm.weight", [h], "one"
        yield p + "mlp.gate_proj.weight", [ff, h], "rand"
        yield p + "mlp.up_proj.weight", [ff, h], "rand"
        yield p + "mlp.down_proj.weight", [h, ff], "rand"
    yield "model.norm.weight", [h], "one"
    if not cfg["tie_word_embeddings"]:
        yield "lm_head.weight", [cfg["vocab_size"], h], "rand"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", default="qwen2.5-0.5b", choices=sorted(SHAPES))
    ap.add_argument("--tokenizer", help="folder with tokenizer.json (and tokenizer_config.json) to copy")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cfg = dict(SHAPES[args.shape])
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    specs = list(tensors(cfg))
    header, off = {}, 0
    for name, shape, _ in specs:
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + 2 * n]}
        off += 2 * n
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    one, zero = struct.pack("<H", 0x3F80), b"\0\0"
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj)
        for name, shape, kind in specs:
            n = header[name]["data_offsets"][1] // 2 - header[name]["data_offsets"][0] // 2
            if kind == "rand":
                for start in range(0, n, 1 << 24):  # 32 MiB at a time
                    f.write(random_bf16(min(1 << 24, n - start), rng))
            else:
                f.write((one if kind == "one" else zero) * n)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    if args.tokenizer:
        for fn in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(args.tokenizer, fn)):
                shutil.copy(os.path.join(args.tokenizer, fn), args.out)
    print(json.dumps({"out": args.out, "shape": args.shape, "bytes": off}))


if __name__ == "__main__":
    main()

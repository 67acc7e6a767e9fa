#!/usr/bin/env python3
"""hf_bench.py MODEL_DIR [--prefill 512,4096] [--decode-tokens 128]

Hugging Face transformers on the same checkpoint, for the side-by-side table in
docs/PERFORMANCE.md: bf16 weights, sdpa attention, one GPU. Prefill: one forward over N random
tokens (median of 5 after a warm-up, CUDA-synchronised). Decode: batch 1, greedy, a DynamicCache,
N new tokens after a 128-token prompt; tokens/s over the decode steps only.
"""
import argparse
import json
import statistics
import time

import torch
from transformers import AutoModelForCausalLM


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--prefill", default="512,4096")
    ap.add_argument("--decode-tokens", type=int, default=128)
    args = ap.parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16, attn_implementation="sdpa").cuda().eval()
    vocab = model.config.vocab_size
    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    with torch.inference_mode():
        for n in [int(x) for x in args.prefill.split(",") if x]:
            ids = torch.randint(10, 30000, (1, n), device="cuda", generator=g)
            s = timed(lambda: model(ids, use_cache=False, logits_to_keep=1), 5)
            rows.append({"case": "prefill", "size": n, "seconds": s, "tokens_per_s": n / s})
        ids = torch.randint(10, 30000, (1, 128), device="cuda", generator=g)

        def decode():
            out = model(ids, use_cache=True, logits_to_keep=1)
            cache, nxt = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(args.decode_tokens):
                out = model(nxt, past_key_values=cache, use_cache=True)
                cache, nxt = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            torch.cuda.synchronize()
            return time.perf_counter() - t

        decode()
        s = statistics.median([decode() for _ in range(3)])
        rows.append({"case": "decode", "size": 1, "seconds": s, "tokens_per_s": args.decode_tokens / s})
    print(f"{'case':<10} {'size':>8} {'seconds':>10} {'tokens/s':>12}   (transformers {__import__('transformers').__version__}, sdpa, bf16)")
    for r in rows:
        print(f"{r['case']:<10} {r['size']:>8} {r['seconds']:>10.4f} {r['tokens_per_s']:>12.1f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

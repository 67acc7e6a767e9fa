#!/usr/bin/env python3
"""hf_bench.py MODEL_DIR [--prefill 512,4096] [--decode-tokens 128] [--static-compile]

Hugging Face transformers on the same checkpoint, for the side-by-side table in
docs/PERFORMANCE.md: bf16 weights, sdpa attention, one GPU. Prefill: one forward over N random
tokens (median of 5 after a warm-up, CUDA-synchronised). Decode: batch 1, greedy, a DynamicCache,
N new tokens after a 128-token prompt; tokens/s over the decode steps only.

--static-compile adds transformers' fastest batch-1 setting, "if it runs": generate() with a
static cache and the forward compiled by torch.compile (mode reduce-overhead, CUDA graphs);
decode tokens/s from generate(N + 1 tokens) minus generate(1 token), medians of 3 after two
warm-ups (the compile happens there). A failure prints its reason as the row.
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


def static_compiled_decode(model, ids, n):
    try:
        model.generation_config.cache_implementation = "static"
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)

        def gen(tokens):
            torch.cuda.synchronize()
            t = time.perf_counter()
            model.generate(ids, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False)
            torch.cuda.synchronize()
            return time.perf_counter() - t

        for _ in range(2):
            gen(n + 1), gen(1)
        s = statistics.median([gen(n + 1) for _ in range(3)]) - statistics.median([gen(1) for _ in range(3)])
        return {"case": "decode-static-compile", "size": 1, "seconds": s, "tokens_per_s": n / s}
    except Exception as e:  # "if it runs": the reason is the result
        return {"case": "decode-static-compile", "size": 1, "seconds": 0.0, "tokens_per_s": 0.0,
                "error": f"{type(e).__name__}: {str(e)[:300]}"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--prefill", default="512,4096")
    ap.add_argument("--decode-tokens", type=int, default=128)
    ap.add_argument("--static-compile", action="store_true")
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
        if args.static_compile:
            rows.append(static_compiled_decode(model, ids, args.decode_tokens))
    print(f"{'case':<10} {'size':>8} {'seconds':>10} {'tokens/s':>12}   (transformers {__import__('transformers').__version__}, sdpa, bf16)")
    for r in rows:
        print(f"{r['case']:<10} {r['size']:>8} {r['seconds']:>10.4f} {r['tokens_per_s']:>12.1f}", r.get("error", ""))
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

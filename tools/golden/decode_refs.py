#!/usr/bin/env python3
"""Teacher-forced decode references for golden fixtures: transformers' float32 logits at every
position of a prompt's greedy continuation, so rad-golden can check each decode step's logits (not
only the prompt's) against an independent reference.

For each promptN of DIR/golden.safetensors (ids, greedy) it runs one float32 forward of
ids + greedy and writes, to OUT (default DIR/decode.safetensors):

  promptN.decode_tokens  int32 [G]     the tokens fed at positions n .. n+G-1 (the greedy ones)
  promptN.decode_logits  float32 [G, V] the logits at those positions: row k predicts the token
                                       after decode_tokens[k], so argmax(row k) is greedy[k+1]

It checks that argmax of every row but the last is the fixture's next greedy token (transformers'
generate() decoded with a cache; a full forward can differ from it only at float32 near-ties,
which are reported).

usage: decode_refs.py DIR [OUT]   (where torch and transformers are installed: the H200 machine)
"""
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM


def decode_refs(model, golden):
    tensors = {}
    mismatches = []
    for i in range(100):
        key = f"prompt{i}"
        if f"{key}.ids" not in golden:
            break
        ids = golden[f"{key}.ids"].long()
        greedy = golden[f"{key}.greedy"].long()
        n, g = ids.shape[0], greedy.shape[0]
        full = torch.cat([ids, greedy]).unsqueeze(0)
        with torch.no_grad():
            logits = model(full).logits[0, n:n + g].float().contiguous()
        top = logits.argmax(-1)
        for k in range(g - 1):
            if int(top[k]) != int(greedy[k + 1]):
                row = logits[k]
                gap = float(row[top[k]] - row[greedy[k + 1]])
                mismatches.append(f"{key} step {k}: full forward {int(top[k])}, generate {int(greedy[k + 1])} (gap {gap:.3g})")
        tensors[f"{key}.decode_tokens"] = greedy.to(torch.int32).contiguous()
        tensors[f"{key}.decode_logits"] = logits
    return tensors, mismatches


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    d = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(d, "decode.safetensors")
    model = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
    tensors, mismatches = decode_refs(model, load_file(os.path.join(d, "golden.safetensors")))
    import transformers
    save_file(tensors, out, metadata={"reference": "float32 forward of the bf16 checkpoint over prompt + greedy",
                                      "torch": torch.__version__, "transformers": transformers.__version__,
                                      "made_by": "tools/golden/decode_refs.py"})
    for m in mismatches:
        print("note:", m)
    print(os.path.basename(os.path.normpath(d)), "->", out, len(tensors) // 2, "prompts,", len(mismatches), "near-ties")


if __name__ == "__main__":
    main()

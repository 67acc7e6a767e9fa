#!/usr/bin/env python3
"""transformers' greedy continuations of the demo model (models/demo) for a list of prompts, as
JSON: the independent reference the restart-under-load test compares the served tokens with.

  [{"prompt": TEXT, "prompt_ids": [...], "generated_ids": [...], "text": TEXT}, ...]

prompt_ids are the tokenizer's encoding with its special tokens (the BOS the server adds to a
completion prompt); generated_ids are up to MAX greedy tokens from a float32 CPU load (stopping at
</s>); text is Hugging Face's decode of prompt + generation minus its decode of the prompt.

usage: demo_greedy.py MODEL_DIR OUT.json MAX PROMPT [PROMPT ...]   (torch + transformers: the H200 machine)
"""
import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        sys.exit(2)
    model_dir, out, max_new, prompts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    rows = []
    for p in prompts:
        ids = tok(p, return_tensors="pt").input_ids
        with torch.no_grad():
            full = model.generate(ids, max_new_tokens=max_new, do_sample=False, eos_token_id=tok.eos_token_id,
                                  pad_token_id=tok.eos_token_id)[0]
        gen = full[ids.shape[1]:].tolist()
        text = tok.decode(full.tolist(), skip_special_tokens=True)[len(tok.decode(ids[0].tolist(), skip_special_tokens=True)):]
        rows.append({"prompt": p, "prompt_ids": ids[0].tolist(), "generated_ids": gen, "text": text})
    import transformers
    with open(out, "w") as f:
        json.dump({"made_by": "tools/golden/demo_greedy.py", "torch": torch.__version__,
                   "transformers": transformers.__version__, "max_new_tokens": max_new, "samples": rows}, f, indent=1)
    print(out, len(rows), "prompts")


if __name__ == "__main__":
    main()

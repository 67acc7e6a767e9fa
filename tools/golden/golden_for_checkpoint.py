#!/usr/bin/env python3
"""Writes DIR/golden.safetensors for an existing checkpoint (e.g. the random Llama-3.1-8B shape of
make_random_llama.py), in rad-golden's format: promptN.ids (int32), promptN.logits (float32
[n, vocab], transformers' float32 forward of the stored bf16 weights) and promptN.greedy (int32,
GREEDY tokens), so rad-golden can check a big model, e.g. at --tp 2 on two cards.

  python3 tools/golden/golden_for_checkpoint.py DIR [--lengths 40,96] [--greedy 16] [--device cuda]
  python3 tools/golden/golden_for_checkpoint.py DIR --bf16-baseline

--bf16-baseline measures transformers itself in bfloat16 (sdpa) against that float32 reference, with
rad-golden's two numbers (relative logit error, teacher-forced top-1 agreement): the yardstick for
a bf16 engine on a big random-weight model, whose near-flat logits make top-1 ties common.

Runs on a card when there is one, in float32 with TF32 off (the reference stays float32 math).
"""
import argparse
import os
import time

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--lengths", default="40,96")
    ap.add_argument("--greedy", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--bf16-baseline", action="store_true")
    a = ap.parse_args()
    if a.bf16_baseline:
        return baseline(a)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    t0 = time.time()
    model = AutoModelForCausalLM.from_pretrained(a.dir, dtype=torch.float32, attn_implementation="eager").to(a.device).eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    vocab = model.config.vocab_size
    gen = torch.Generator().manual_seed(a.seed)
    tensors = {}
    for i, n in enumerate(int(x) for x in a.lengths.split(",")):
        ids = torch.randint(10, min(vocab, 30000), (1, n), generator=gen)
        with torch.no_grad():
            logits = model(ids.to(a.device)).logits[0].float().cpu()
            greedy = model.generate(ids.to(a.device), max_new_tokens=a.greedy, min_new_tokens=a.greedy,
                                    do_sample=False)[0, n:].cpu()
        tensors[f"prompt{i}.ids"] = ids[0].to(torch.int32).contiguous()
        tensors[f"prompt{i}.logits"] = logits.contiguous()
        tensors[f"prompt{i}.greedy"] = greedy.to(torch.int32).contiguous()
    import transformers
    save_file(tensors, os.path.join(a.dir, "golden.safetensors"),
              metadata={"reference": "float32 forward of the bf16 checkpoint (TF32 off)", "torch": torch.__version__,
                        "transformers": transformers.__version__, "made_by": "tools/golden/golden_for_checkpoint.py"})
    print(f"golden for {a.dir}: prompts {a.lengths}, {a.greedy} greedy tokens, {time.time() - t0:.0f} s on {a.device}")


def baseline(a):
    from safetensors.torch import load_file
    ref = load_file(os.path.join(a.dir, "golden.safetensors"))
    model = AutoModelForCausalLM.from_pretrained(a.dir, dtype=torch.bfloat16, attn_implementation="sdpa").to(a.device).eval()
    agree = total = 0
    for i in range(len([k for k in ref if k.endswith(".ids")])):
        ids = ref[f"prompt{i}.ids"].to(torch.long)[None]
        want = ref[f"prompt{i}.logits"]
        with torch.no_grad():
            got = model(ids.to(a.device)).logits[0].float().cpu()
        rel = (got - want).norm() / want.norm()
        agree += int((got.argmax(-1) == want.argmax(-1)).sum())
        total += want.shape[0]
        print(f"transformers bf16 vs float32: prompt{i} logits rel_err={rel:.4f}")
    print(f"transformers bf16 vs float32: teacher-forced top-1 agreement {agree / total:.4f} ({agree}/{total} positions)")


if __name__ == "__main__":
    main()

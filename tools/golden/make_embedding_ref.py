#!/usr/bin/env python3
"""Embedding references from transformers, for POST /v1/embeddings (issue 40's check: "embeddings
against transformers' hidden states on a fixture, pooled and normalised, 1e-4 on the host").

For each input it runs the model's base (AutoModel: last_hidden_state, the final norm applied, as
the head reads it) in float32 on the CPU, pools as the folder says (sentence-transformers'
1_Pooling/config.json: pooling_mode_lasttoken or pooling_mode_mean_tokens; last token when absent)
and L2-normalises (when modules.json has a Normalize module, or no sentence-transformers files at
all, as the server does), and writes

    {"model": DIR, "pooling": "last"|"mean", "normalize": bool,
     "cases": [{"input": TEXT, "ids": [...], "embedding": [...]}, ...]}

ids are the tokenizer's with its special tokens (add_special_tokens=True), which is what the
server sends for text. Compare with the server's answer for "input": ids (tests/integration/
embeddings_http.py has the HTTP helpers), tolerance 1e-4.

usage: make_embedding_ref.py MODEL_DIR OUT.json [TEXT ...]
(needs torch and transformers: run it on the GPU machine or wherever they are installed)
"""
import json
import os
import sys

import torch
from transformers import AutoModel, AutoTokenizer

DEFAULT_TEXTS = [
    "Call me Ishmael.",
    "Some years ago, never mind how long precisely, having little or no money in my purse.",
    "The whale!",
]


def pooling_of(folder):
    modules = os.path.join(folder, "modules.json")
    normalize, pool_dir, st = True, "1_Pooling", False
    if os.path.exists(modules):
        st = True
        mods = json.load(open(modules))
        normalize = any("Normalize" in m.get("type", "") for m in mods)
        for m in mods:
            if "Pooling" in m.get("type", ""):
                pool_dir = m.get("path", pool_dir)
    cfg = os.path.join(folder, pool_dir, "config.json")
    mode = "last"
    if os.path.exists(cfg):
        c = json.load(open(cfg))
        if c.get("pooling_mode_mean_tokens"):
            mode = "mean"
        elif not c.get("pooling_mode_lasttoken"):
            raise SystemExit(f"{cfg}: a pooling mode the server does not serve")
    return mode, normalize if st else True


def main():
    folder, out = sys.argv[1], sys.argv[2]
    texts = sys.argv[3:] or DEFAULT_TEXTS
    mode, normalize = pooling_of(folder)
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, torch_dtype=torch.float32).eval()
    cases = []
    for t in texts:
        ids = tok(t, add_special_tokens=True)["input_ids"]
        with torch.no_grad():
            h = model(input_ids=torch.tensor([ids])).last_hidden_state[0].double()
        v = h[-1] if mode == "last" else h.mean(dim=0)
        if normalize:
            v = v / v.norm()
        cases.append({"input": t, "ids": ids, "embedding": [float(x) for x in v]})
    json.dump({"model": folder, "pooling": mode, "normalize": normalize, "cases": cases}, open(out, "w"))
    print(f"wrote {len(cases)} embeddings ({mode} pooling, normalize {normalize}) to {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""make_kquant_fixtures.py OUT --tokenizer DIR --llamacpp-py DIR --quantize BIN

On the GPU machine (transformers, torch, numpy; llama.cpp's converter and llama-quantize built by
bench/peers/llamacpp-build.sh): GGUF files whose K-quant blocks llama.cpp itself wrote, small
enough to commit, for the ggml importer's tests.

A random Llama (hidden 256, one layer, rows that are whole 256-value super-blocks) is saved by
transformers in f32, converted by convert_hf_to_gguf.py (--outtype f32) and quantised by
llama-quantize to each of Q4_K_M, Q5_K_M and Q6_K. Each file is then cut to the layer's tensors
(the vocabulary-sized embedding and head and the tokenizer's arrays would make it megabytes),
keeping the architecture's metadata, and written to OUT/<type>.gguf. OUT/reference.json records,
for every tensor kept, its ggml type and the SHA-256 of the f32 values gguf-py's own
dequantisation gives (little-endian bytes, row-major), so a reader written apart from gguf-py
(tools/gguf/dequant_gguf.py) can be checked against it bit for bit; OUT/config.json is the HF
config of the model.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

TYPES = ["Q4_K_M", "Q5_K_M", "Q6_K"]


def make_model(work, tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = json.load(open(os.path.join(tokenizer, "tokenizer.json")))
    vocab = len(tok["model"]["vocab"]) + len(tok.get("added_tokens", []))
    cfg = LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=1, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=vocab, max_position_embeddings=2048, rms_norm_eps=1e-5,
                      rope_theta=500000.0, tie_word_embeddings=False, torch_dtype="float32")
    torch.manual_seed(7)
    model = LlamaForCausalLM(cfg).to(torch.float32)
    with torch.no_grad():  # norms away from one, so a norm read as another tensor shows
        for n, p in model.named_parameters():
            if "norm" in n:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(work, safe_serialization=True)
    for f in os.listdir(tokenizer):
        shutil.copy(os.path.join(tokenizer, f), work)
    return cfg


def cut(src, dst, gguf):
    """dst: src's metadata (less the tokenizer's arrays) and its blk.* and output_norm tensors."""
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"]
    arch = bytes(arch.parts[arch.data[0]]).decode()
    w = gguf.GGUFWriter(dst, arch)
    for name, field in r.fields.items():
        if name.startswith("GGUF.") or name.startswith("tokenizer.") or name == "general.architecture":
            continue
        t = field.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            continue
        val = field.contents()
        w.add_key_value(name, val, t)
    kept = []
    for t in r.tensors:
        if not (t.name.startswith("blk.") or t.name == "output_norm.weight"):
            continue
        shape = [int(d) for d in reversed(t.shape.tolist())]  # numpy order: rows first
        w.add_tensor(t.name, t.data, raw_shape=t.data.shape, raw_dtype=t.tensor_type)
        kept.append((t, shape))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return kept


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--llamacpp-py", required=True)
    ap.add_argument("--quantize", required=True)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.llamacpp_py, "gguf-py"))
    import gguf
    import numpy as np
    from gguf.quants import dequantize

    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kquant-")
    cfg = make_model(os.path.join(work, "hf"), a.tokenizer)
    f32 = os.path.join(work, "f32.gguf")
    subprocess.run([sys.executable, os.path.join(a.llamacpp_py, "convert_hf_to_gguf.py"), os.path.join(work, "hf"), "--outtype",
                    "f32", "--outfile", f32], check=True, stdout=subprocess.DEVNULL)
    ref = {"llamacpp_commit": open(os.path.join(a.llamacpp_py, "LLAMACPP_COMMIT")).read().strip(), "files": {}}
    for ty in TYPES:
        q = os.path.join(work, ty + ".gguf")
        subprocess.run([a.quantize, f32, q, ty], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dst = os.path.join(a.out, ty.lower() + ".gguf")
        kept = cut(q, dst, gguf)
        entries = {}
        for t, shape in kept:
            vals = dequantize(t.data, t.tensor_type).astype("<f4").reshape(shape)
            entries[t.name] = {"type": t.tensor_type.name, "shape": shape,
                               "sha256_f32": hashlib.sha256(np.ascontiguousarray(vals).tobytes()).hexdigest(),
                               "sum": float(vals.astype(np.float64).sum())}
        ref["files"][ty.lower() + ".gguf"] = entries
        print(f"{ty}: {os.path.getsize(dst)} bytes, " + ", ".join(sorted({e['type'] for e in entries.values()})))
    json.dump(ref, open(os.path.join(a.out, "reference.json"), "w"), indent=1)
    c = cfg.to_dict()
    c["architectures"] = ["LlamaForCausalLM"]
    json.dump(c, open(os.path.join(a.out, "config.json"), "w"), indent=1, default=str)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()

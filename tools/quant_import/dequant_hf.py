#!/usr/bin/env python3
"""dequant_hf.py IN_DIR OUT_DIR

A Hugging Face folder stored quantised (GPTQ / AWQ int4, fine-grained or compressed-tensors fp8)
back as plain weights: each quantised linear's reference dequantisation in f32 (OUT_DIR's
model.safetensors, `PREFIX.weight`), every other tensor as stored, and config.json without its
quantization_config. It is what rad-convert's `import` is checked against
(tests/unit/convert/test_hf_import.cpp). Plain Python, written from the formats' published
dequantisations, not from quantise_hf.py's packing nor radiance's code:

  GPTQ  (AutoGPTQ's dequantisation: unpack qweight along K and qzeros along N, +1 on the zeros of
        checkpoint_format "gptq", then w[n][k] = (q - z[g_idx[k]][n]) * s[g_idx[k]][n]); g_idx is
        honoured whatever it holds (act-order included)
  AWQ   (AutoAWQ's unpacking: every word's 8 nibbles put back with the reverse order
        [0,4,1,5,2,6,3,7]); w[n][k] = (q - z[k/G][n]) * s[k/G][n]
  fp8   w[n][k] = e4m3(weight[n][k]) * scale of (n, k)'s block / row / tensor (blocks of
        weight_block_size, or a config group's weights.block_structure)
  int8  (compressed-tensors int-quantized) the same with the signed byte's value

Each product is rounded to f32, as torch's f32 arithmetic gives it.
"""
import json
import os
import shutil
import struct
import sys

import st_io

AWQ_REVERSE = [0, 4, 1, 5, 2, 6, 3, 7]  # column c of a word sits in nibble AWQ_REVERSE[c]


def words(raw):
    return struct.unpack(f"<{len(raw) // 4}I", raw)


def e4m3(b):
    """The value of an e4m3fn byte (bias 7, no infinities)."""
    sign = -1.0 if b & 0x80 else 1.0
    e, m = (b >> 3) & 15, b & 7
    if e == 15 and m == 7:
        return float("nan")
    if e == 0:
        return sign * m / 512.0
    return sign * (8 + m) * 2.0 ** (e - 10)


def gptq(t, prefix, qc):
    qweight, qzeros, scales = (t[prefix + s] for s in (".qweight", ".qzeros", ".scales"))
    k_cols, n_rows = qweight[1][0] * 8, qweight[1][1]
    n_groups = scales[1][0]
    group = k_cols // n_groups
    g_idx = struct.unpack(f"<{k_cols}i", t[prefix + ".g_idx"][2]) if prefix + ".g_idx" in t else [k // group for k in range(k_cols)]
    offset = 1 if qc.get("checkpoint_format", qc.get("format", "gptq")) == "gptq" else 0
    qw, qz, sc = words(qweight[2]), words(qzeros[2]), st_io.floats(scales[0], scales[2])
    zero = [[((qz[g * (n_rows // 8) + n // 8] >> (4 * (n % 8))) & 15) + offset for n in range(n_rows)] for g in range(n_groups)]
    out = [0.0] * (n_rows * k_cols)
    for k in range(k_cols):
        g = g_idx[k]
        for n in range(n_rows):
            q = (qw[(k // 8) * n_rows + n] >> (4 * (k % 8))) & 15
            out[n * k_cols + k] = st_io.f32((q - zero[g][n]) * sc[g * n_rows + n])
    return n_rows, k_cols, out


def awq(t, prefix):
    qweight, qzeros, scales = (t[prefix + s] for s in (".qweight", ".qzeros", ".scales"))
    k_cols, n_rows = qweight[1][0], qweight[1][1] * 8
    n_groups = scales[1][0]
    group = k_cols // n_groups
    qw, qz, sc = words(qweight[2]), words(qzeros[2]), st_io.floats(scales[0], scales[2])
    words_a_row = n_rows // 8

    def unpack(ws, row, n):
        return (ws[row * words_a_row + n // 8] >> (4 * AWQ_REVERSE[n % 8])) & 15

    out = [0.0] * (n_rows * k_cols)
    for k in range(k_cols):
        g = k // group
        for n in range(n_rows):
            out[n * k_cols + k] = st_io.f32((unpack(qw, k, n) - unpack(qz, g, n)) * sc[g * n_rows + n])
    return n_rows, k_cols, out


def block_size(qc):
    for g in qc.get("config_groups", {}).values():
        if (g.get("weights") or {}).get("block_structure"):
            return g["weights"]["block_structure"]
    return qc.get("weight_block_size", [128, 128])


def fp8(t, prefix, qc):
    w = t[prefix + ".weight"]
    value = (lambda b: b - 256 if b > 127 else b) if w[0] == "I8" else e4m3
    n_rows, k_cols = w[1]
    name = prefix + ".weight_scale_inv" if prefix + ".weight_scale_inv" in t else prefix + ".weight_scale"
    s_dtype, s_shape, s_raw = t[name]
    s = st_io.floats(s_dtype, s_raw)
    if len(s_shape) == 2 and s_shape != [n_rows, 1]:  # blocks [br, bc]: a grid of [ceil(N/br), ceil(K/bc)]
        br, bc = block_size(qc)
        gc = s_shape[1]
        at = lambda n, k: s[(n // br) * gc + k // bc]
    elif s_shape == [n_rows, 1]:
        at = lambda n, k: s[n]
    else:
        at = lambda n, k: s[0]
    codes = w[2]
    return n_rows, k_cols, [st_io.f32(value(codes[n * k_cols + k]) * at(n, k)) for n in range(n_rows) for k in range(k_cols)]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(os.path.join(src, "config.json")) as f:
        cfg = json.load(f)
    qc = cfg.pop("quantization_config")
    method = qc["quant_method"]
    index = os.path.join(src, "model.safetensors.index.json")
    t = {}
    if os.path.exists(index):  # shards: every file the index names
        with open(index) as f:
            for file in sorted(set(json.load(f)["weight_map"].values())):
                t.update(st_io.read(os.path.join(src, file)))
    else:
        t = st_io.read(os.path.join(src, "model.safetensors"))
    prefixes = sorted({n.rsplit(".", 1)[0] for n in t if n.endswith(".qweight") or t[n][0] in ("F8_E4M3", "I8")})
    out = {n: v for n, v in t.items() if n.rsplit(".", 1)[0] not in prefixes}
    for p in prefixes:
        if method == "gptq":
            n_rows, k_cols, w = gptq(t, p, qc)
        elif method == "awq":
            n_rows, k_cols, w = awq(t, p)
        else:
            n_rows, k_cols, w = fp8(t, p, qc)
        out[p + ".weight"] = ("F32", [n_rows, k_cols], struct.pack(f"<{len(w)}f", *w))
    os.makedirs(dst, exist_ok=True)
    st_io.write(os.path.join(dst, "model.safetensors"), out)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    for extra in ("generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        if os.path.exists(os.path.join(src, extra)):
            shutil.copyfile(os.path.join(src, extra), os.path.join(dst, extra))


if __name__ == "__main__":
    main()

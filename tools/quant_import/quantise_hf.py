#!/usr/bin/env python3
"""quantise_hf.py SRC_DIR OUT_DIR --format FORMAT [--group G] [--sym] [--act] [--damage KIND]

Writes a Hugging Face folder whose linear projections (every *_proj.weight but the head) are stored
quantised the way a checkpoint from the Hub stores them, with config.json's quantization_config;
the embedding, the norms and lm_head are copied as stored. Plain Python, written from the formats'
published layouts (AutoGPTQ / GPTQModel, AutoAWQ, transformers' FineGrainedFP8Config,
compressed-tensors), sharing nothing with radiance nor with dequant_hf.py (the reference reader):

  gptq, gptq_v2, gptq_act   qweight i32 [K/8, N]: q(k, n) in bits 4*(k%8) of word [k/8][n]
                            qzeros i32 [K/G, N/8]: z(g, n) in bits 4*(n%8) of word [g][n/8], stored
                            as z - 1 by "gptq" (AutoGPTQ's original format), as z by "gptq_v2"
                            scales f16 [K/G, N]; g_idx i32 [K]
                            gptq_act (or --act with gptq / gptq_v2): desc_act, the columns
                            quantised in a random order (seeded by K, so the linears that read
                            one input share it, as GPTQ's Hessian order does), so
                            g_idx[k] = (position of k in that order) // G
  awq                       qweight i32 [K, N/8]: nibble j of word [k][n/8] holds column
                            8*(n/8) + [0,2,4,6,1,3,5,7][j]; qzeros i32 [K/G, N/8] likewise;
                            scales f16 [K/G, N]; w = (q - z) * s (no offset)
  fp8                       weight F8_E4M3 [N, K], weight_scale_inv f32 [ceil(N/128), ceil(K/128)]
  ct_fp8_channel            compressed-tensors float-quantized: weight F8_E4M3, weight_scale f32 [N, 1]
  ct_fp8_tensor             the same with one weight_scale f32 [1]
  ct_fp8_block              the same with weight_scale f32 [ceil(N/128), ceil(K/128)] (strategy block)
  ct_int8_channel           compressed-tensors int-quantized: weight I8 [N, K], weight_scale f32 [N, 1]

int4 groups are min/max round-to-nearest over the group's range widened to hold 0 (--sym: a
zero point of 8 and the scale from the largest magnitude); fp8 codes are e4m3 rounded to nearest
even from w / scale, scale = amax / 448 (int8: round(w / scale) with scale = amax / 127). The numbers only need to be plausible: the import is
checked against dequant_hf.py's reading of whatever was written.

--shards 2 writes the tensors into two files and model.safetensors.index.json, as the Hub's larger
checkpoints are (a linear's tensors may then lie in different files).

--damage makes a folder the import must refuse: drop_qzeros (no .qzeros tensors), short_scales
(layer 0's q_proj scales lose their last group), zero_nibble_15 (gptq: layer 0's q_proj first zero
point 0, stored as nibble 15), act_uneven_group (act-order: layer 0's q_proj g_idx puts one
column of group 1 in group 0), act_parts_differ (act-order: layer 0's q_proj quantised in another
order than k_proj and v_proj), stray_g_idx (awq: layer 0's q_proj gets a g_idx; compressed-tensors:
a weight_g_idx, as its actorder "group" writes).
"""
import argparse
import bisect
import json
import os
import random
import shutil
import struct

import st_io

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # nibble j of a word holds column AWQ_ORDER[j]


def is_projection(name):
    return name.endswith("_proj.weight")


def int4_groups(w, n_rows, k_cols, group, sym, order):
    """Per row n and group g (over the columns order[g*G:(g+1)*G]): f16 scale, zero, codes."""
    scales, zeros, codes = {}, {}, [[0] * k_cols for _ in range(n_rows)]
    for n in range(n_rows):
        row = w[n * k_cols:(n + 1) * k_cols]
        for g in range(k_cols // group):
            cols = order[g * group:(g + 1) * group]
            xs = [row[k] for k in cols]
            if sym:
                m = max(abs(x) for x in xs) or 1.0
                s = st_io.f32(struct.unpack("<e", struct.pack("<e", 2 * m / 15))[0])
                z = 8
            else:
                lo, hi = min(0.0, min(xs)), max(0.0, max(xs))
                if lo == hi:
                    lo, hi = -1.0, 1.0
                s = struct.unpack("<e", struct.pack("<e", (hi - lo) / 15))[0]
                z = min(15, max(0, round(-lo / s)))
            scales[g, n], zeros[g, n] = s, z
            for k in cols:
                codes[n][k] = min(15, max(0, round(row[k] / s) + z))
    return scales, zeros, codes


def i32_bytes(words):
    return struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])


def pack_gptq(w, n_rows, k_cols, group, sym, v1, act, damage):
    order = list(range(k_cols))
    if act:  # a random order stands in for the Hessian's descending one (the same for one input)
        random.Random(1000 + k_cols + (7 if damage == "act_parts_differ" else 0)).shuffle(order)
    scales, zeros, codes = int4_groups(w, n_rows, k_cols, group, sym, order)
    g_idx = [0] * k_cols
    for pos, k in enumerate(order):
        g_idx[k] = pos // group
    if damage == "act_uneven_group":
        g_idx[order[group]] = 0
    n_groups = k_cols // group
    if damage == "zero_nibble_15":
        zeros[0, 0] = 0
    qweight = [0] * (k_cols // 8 * n_rows)
    for k in range(k_cols):
        for n in range(n_rows):
            qweight[(k // 8) * n_rows + n] |= codes[n][k] << (4 * (k % 8))
    qzeros = [0] * (n_groups * n_rows // 8)
    for g in range(n_groups):
        for n in range(n_rows):
            z = (zeros[g, n] - 1) & 15 if v1 else zeros[g, n]
            qzeros[g * (n_rows // 8) + n // 8] |= z << (4 * (n % 8))
    sc = [scales[g, n] for g in range(n_groups) for n in range(n_rows)]
    return {
        "qweight": ("I32", [k_cols // 8, n_rows], i32_bytes(qweight)),
        "qzeros": ("I32", [n_groups, n_rows // 8], i32_bytes(qzeros)),
        "scales": ("F16", [n_groups, n_rows], struct.pack(f"<{len(sc)}e", *sc)),
        "g_idx": ("I32", [k_cols], struct.pack(f"<{k_cols}i", *g_idx)),
    }


def pack_awq(w, n_rows, k_cols, group):
    scales, zeros, codes = int4_groups(w, n_rows, k_cols, group, False, list(range(k_cols)))
    n_groups = k_cols // group
    qweight = []
    for k in range(k_cols):
        for c0 in range(0, n_rows, 8):
            word = 0
            for j in range(8):
                word |= codes[c0 + AWQ_ORDER[j]][k] << (4 * j)
            qweight.append(word)
    qzeros = []
    for g in range(n_groups):
        for c0 in range(0, n_rows, 8):
            word = 0
            for j in range(8):
                word |= zeros[g, c0 + AWQ_ORDER[j]] << (4 * j)
            qzeros.append(word)
    sc = [scales[g, n] for g in range(n_groups) for n in range(n_rows)]
    return {
        "qweight": ("I32", [k_cols, n_rows // 8], i32_bytes(qweight)),
        "qzeros": ("I32", [n_groups, n_rows // 8], i32_bytes(qzeros)),
        "scales": ("F16", [n_groups, n_rows], struct.pack(f"<{len(sc)}e", *sc)),
    }


def e4m3_table():
    """(value, code) of every finite positive e4m3fn code, ascending: bias 7, 0x7f is NaN."""
    out = []
    for c in range(0x7F):
        e, m = c >> 3, c & 7
        out.append((m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7), c))
    return out


E4M3 = e4m3_table()
E4M3_VALUES = [v for v, _ in E4M3]


def to_e4m3(x):
    """x as an e4m3fn byte: nearest, ties to the even code, saturating at 448."""
    a = abs(x)
    i = bisect.bisect_left(E4M3_VALUES, a)
    if i >= len(E4M3):
        c = 0x7E
    elif i == 0 or E4M3_VALUES[i] == a:
        c = E4M3[i][1]
    else:
        lo, hi = E4M3[i - 1], E4M3[i]
        d_lo, d_hi = a - lo[0], hi[0] - a
        c = lo[1] if d_lo < d_hi or (d_lo == d_hi and lo[1] % 2 == 0) else hi[1]
    return c | (0x80 if x < 0 else 0)


def to_i8(x):
    """x rounded to the nearest integer (ties to even), clamped to [-127, 127], as a byte."""
    return min(127, max(-127, round(x))) & 0xFF


def pack_fp8(w, n_rows, k_cols, mode, int8=False, ct=False):
    """mode block: 128 x 128 scales; channel: a scale a row; tensor: one scale. int8: I8 codes."""
    top, code = (127.0, to_i8) if int8 else (448.0, to_e4m3)
    if mode == "block":
        br = bc = 128
    elif mode == "channel":
        br, bc = 1, k_cols
    else:
        br, bc = n_rows, k_cols
    gr, gc = -(-n_rows // br), -(-k_cols // bc)
    scale = [[0.0] * gc for _ in range(gr)]
    for i in range(gr):
        for j in range(gc):
            amax = max(abs(w[n * k_cols + k]) for n in range(i * br, min(n_rows, (i + 1) * br))
                       for k in range(j * bc, min(k_cols, (j + 1) * bc)))
            scale[i][j] = st_io.f32(amax / top) or 1.0
    codes = bytes(code(w[n * k_cols + k] / scale[n // br][k // bc]) for n in range(n_rows) for k in range(k_cols))
    dtype = "I8" if int8 else "F8_E4M3"
    flat = [s for r in scale for s in r]
    raw = struct.pack(f"<{len(flat)}f", *flat)
    if mode == "block" and not ct:
        return {"weight": (dtype, [n_rows, k_cols], codes), "weight_scale_inv": ("F32", [gr, gc], raw)}
    shape = [gr, gc] if mode == "block" else [n_rows, 1] if mode == "channel" else [1]
    return {"weight": (dtype, [n_rows, k_cols], codes), "weight_scale": ("F32", shape, raw)}


def quant_config(fmt, group, sym, act):
    if fmt.startswith("gptq"):
        return {"quant_method": "gptq", "bits": 4, "group_size": group, "desc_act": act, "sym": sym,
                "true_sequential": True, "checkpoint_format": "gptq_v2" if fmt == "gptq_v2" else "gptq"}
    if fmt == "awq":
        return {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": True, "version": "gemm"}
    if fmt == "fp8":
        return {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    strategy = fmt.rsplit("_", 1)[1]
    weights = {"num_bits": 8, "type": "int" if "int8" in fmt else "float", "symmetric": True, "strategy": strategy,
               "dynamic": False}
    if strategy == "block":
        weights["block_structure"] = [128, 128]
    return {"quant_method": "compressed-tensors", "format": "int-quantized" if "int8" in fmt else "float-quantized",
            "quantization_status": "compressed", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None, "weights": weights}}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--format", required=True,
                    choices=["gptq", "gptq_v2", "gptq_act", "awq", "fp8", "ct_fp8_channel", "ct_fp8_tensor", "ct_fp8_block",
                             "ct_int8_channel"])
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--sym", action="store_true")
    ap.add_argument("--act", action="store_true")
    ap.add_argument("--damage", choices=["drop_qzeros", "short_scales", "zero_nibble_15", "act_uneven_group", "act_parts_differ",
                                         "stray_g_idx"])
    ap.add_argument("--shards", type=int, default=1)
    a = ap.parse_args()
    a.act = a.act or a.format == "gptq_act"
    src = st_io.read(os.path.join(a.src, "model.safetensors"))
    out = {}
    for name, (dtype, shape, raw) in src.items():
        if not is_projection(name):
            out[name] = (dtype, shape, raw)
            continue
        prefix, (n_rows, k_cols) = name[:-len(".weight")], shape
        w = st_io.floats(dtype, raw)
        if a.format.startswith("gptq"):
            parts = pack_gptq(w, n_rows, k_cols, a.group, a.sym, a.format != "gptq_v2", a.act,
                              a.damage if ".layers.0.self_attn.q_proj" in name else None)
        elif a.format == "awq":
            parts = pack_awq(w, n_rows, k_cols, a.group)
        else:
            mode = "block" if a.format.endswith("block") or a.format == "fp8" else a.format.rsplit("_", 1)[1]
            parts = pack_fp8(w, n_rows, k_cols, mode, int8="int8" in a.format, ct=a.format.startswith("ct_"))
        if a.damage == "stray_g_idx" and ".layers.0.self_attn.q_proj" in name:
            g_idx = struct.pack(f"<{k_cols}i", *[k // a.group for k in range(k_cols)])
            parts["g_idx" if a.format == "awq" else "weight_g_idx"] = ("I32", [k_cols], g_idx)
        if a.damage == "drop_qzeros":
            parts.pop("qzeros", None)
        if a.damage == "short_scales" and ".layers.0.self_attn.q_proj" in name:
            dt, shp, raw_s = parts["scales"]
            row = len(raw_s) // shp[0]
            parts["scales"] = (dt, [shp[0] - 1, shp[1]], raw_s[:-row])
        for suffix, t in parts.items():
            out[prefix + "." + suffix] = t
    os.makedirs(a.out, exist_ok=True)
    if a.shards == 1:
        st_io.write(os.path.join(a.out, "model.safetensors"), out)
    else:  # names dealt round-robin, so a linear's qweight, qzeros and scales land in different files
        weight_map = {}
        for i in range(a.shards):
            file = f"model-{i + 1:05d}-of-{a.shards:05d}.safetensors"
            part = {n: t for j, (n, t) in enumerate(sorted(out.items())) if j % a.shards == i}
            st_io.write(os.path.join(a.out, file), part)
            weight_map.update({n: file for n in part})
        with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f, indent=2)
    with open(os.path.join(a.src, "config.json")) as f:
        cfg = json.load(f)
    cfg["quantization_config"] = quant_config(a.format, a.group, a.sym, a.act)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    for extra in ("generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        if os.path.exists(os.path.join(a.src, extra)):
            shutil.copyfile(os.path.join(a.src, extra), os.path.join(a.out, extra))


if __name__ == "__main__":
    main()

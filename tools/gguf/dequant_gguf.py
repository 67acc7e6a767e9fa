#!/usr/bin/env python3
"""dequant_gguf.py IN.gguf HF_DIR OUT_DIR

A GGUF file's weights back as a Hugging Face folder of f32 safetensors (OUT_DIR/model.safetensors,
HF_DIR's config.json copied beside it): the reference rad-convert's `ggml` import is checked
against (tests/unit/convert/test_gguf_import.cpp). Plain Python, written from the formats'
published layouts, sharing no code with radiance: GGUF v3 (llama.cpp's docs/gguf.md), and gguf-py's
dequantisation (gguf/quants.py):

  Q8_0  blocks of 34 bytes: f16 d, 32 int8 q;  x = d * q
  Q4_0  blocks of 18 bytes: f16 d, 16 bytes;   x[j] = d * ((b[j] & 15) - 8), x[j + 16] = d * ((b[j] >> 4) - 8)
  Q4_K  super-blocks of 256 in 144 bytes: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins (8 sub-blocks
        of 32), 128 bytes of nibbles in 4 chunks of 32 bytes (low nibbles values 0-31 of the chunk's
        64, high nibbles 32-63);  x = f32(d * sc) * q - f32(dmin * m)
  Q5_K  as Q4_K with 32 bytes qh after the scales: a value's fifth bit is bit 2c (low nibble) or
        2c + 1 (high nibble) of qh[l] for chunk c
  Q4_1, Q5_0, Q5_1  blocks of 32 (dequant_legacy says how)
  Q6_K  super-blocks of 256 in 210 bytes: ql[128], qh[64], int8 scales[16], f16 d;
        x = f32(d * sc) * (q - 32), q = 4 bits of ql and 2 of qh

Each product and difference is rounded to f32 (numpy's f32 arithmetic). A llama's attn_q / attn_k rows are put
back in transformers' order (llama.cpp's converter moves row a * hd/2 + b of each head to 2b + a),
and the tensors renamed to transformers' names (the inverse of export_gguf.py's map).
"""
import json
import os
import shutil
import struct
import sys

TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 30: ("BF16", 1, 2), 8: ("Q8_0", 32, 34), 2: ("Q4_0", 32, 18),
         3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24),
         12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210)}
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
PER_LAYER = {"attn_norm.weight": "input_layernorm.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
             "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
             "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
             "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
             "attn_v.bias": "self_attn.v_proj.bias", "attn_q_norm.weight": "self_attn.q_norm.weight",
             "attn_k_norm.weight": "self_attn.k_norm.weight", "ffn_gate.weight": "mlp.gate_proj.weight",
             "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight"}
TOP = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
       "output.weight": "lm_head.weight"}


class Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.d, self.p)
        self.p += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("Q")
        s = self.d[self.p:self.p + n].decode("utf-8", "replace")
        self.p += n
        return s

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.take("I"), self.take("Q")
            return [self.value(et) for _ in range(n)]
        fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}[t]
        return self.take(fmt)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def k_scale_min(k, j):
    """Sub-block j's 6-bit scale and min from the 12 packed bytes k (gguf-py's get_scale_min_k4)."""
    if j < 4:
        return k[j] & 63, k[j + 4] & 63
    return (k[j + 4] & 0xF) | ((k[j - 4] >> 6) << 4), (k[j + 4] >> 4) | ((k[j] >> 6) << 4)


def dequant_qk(blk, five):
    d, dmin = struct.unpack("<ee", blk[:4])
    k = blk[4:16]
    qh = blk[16:48] if five else None
    qs = blk[48:176] if five else blk[16:144]
    out = [0.0] * 256
    for c in range(4):
        for half in range(2):
            sub = 2 * c + half
            sc, m = k_scale_min(k, sub)
            dl, ml = f32(d * sc), f32(dmin * m)
            for l in range(32):
                v = (qs[32 * c + l] >> (4 * half)) & 0xF
                if five and qh[l] & (1 << sub):
                    v += 16
                out[64 * c + 32 * half + l] = f32(f32(dl * v) - ml)
    return out


def dequant_q6k(blk):
    ql, qh, sc = blk[:128], blk[128:192], struct.unpack("<16b", blk[192:208])
    d = struct.unpack("<e", blk[208:210])[0]
    out = [0.0] * 256
    for n in range(2):
        for l in range(32):
            for i in range(4):
                lo = ql[64 * n + l + (32 if i in (1, 3) else 0)]
                lo = lo >> 4 if i >= 2 else lo & 0xF
                hi = (qh[32 * n + l] >> (2 * i)) & 3
                idx = 128 * n + 32 * i + l
                out[idx] = f32(f32(d * sc[idx // 16]) * ((lo | (hi << 4)) - 32))
    return out


def dequant_legacy(raw, tname, n):
    """Q4_1: d, m, nibbles (x = d * q + m); Q5_0: d, qh (u32), nibbles (x = d * (q - 16)); Q5_1: d, m,
    qh, nibbles (x = d * q + m). Value j's low 4 bits: byte j's low nibble (j < 16) or byte j - 16's
    high one; its fifth bit: bit j of qh."""
    size = {"Q4_1": 20, "Q5_0": 22, "Q5_1": 24}[tname]
    out = []
    for b in range(n // 32):
        blk = raw[b * size:(b + 1) * size]
        d = struct.unpack("<e", blk[:2])[0]
        m = struct.unpack("<e", blk[2:4])[0] if tname != "Q5_0" else 0.0
        p = 2 if tname == "Q5_0" else 4
        qh = struct.unpack("<I", blk[p:p + 4])[0] if tname != "Q4_1" else 0
        qs = blk[p + 4:] if tname != "Q4_1" else blk[p:]
        for j in range(32):
            v = (qs[j] & 15) if j < 16 else (qs[j - 16] >> 4)
            v |= ((qh >> j) & 1) << 4
            if tname == "Q5_0":
                out.append(f32(d * (v - 16)))
            else:
                out.append(f32(f32(d * v) + m))
    return out


def dequant(raw, tname, n):
    if tname == "F32":
        return list(struct.unpack(f"<{n}f", raw))
    if tname == "F16":
        return list(struct.unpack(f"<{n}e", raw))
    if tname == "BF16":
        return [struct.unpack("<f", b"\0\0" + raw[2 * i:2 * i + 2])[0] for i in range(n)]
    if tname in ("Q4_K", "Q5_K", "Q6_K"):
        size = {"Q4_K": 144, "Q5_K": 176, "Q6_K": 210}[tname]
        out = []
        for b in range(n // 256):
            blk = raw[b * size:(b + 1) * size]
            out += dequant_q6k(blk) if tname == "Q6_K" else dequant_qk(blk, tname == "Q5_K")
        return out
    if tname in ("Q4_1", "Q5_0", "Q5_1"):
        return dequant_legacy(raw, tname, n)
    out = []
    size = 34 if tname == "Q8_0" else 18
    for b in range(n // 32):
        blk = raw[b * size:(b + 1) * size]
        d = struct.unpack("<e", blk[:2])[0]
        if tname == "Q8_0":
            q = struct.unpack("<32b", blk[2:])
        else:
            q = [(x & 15) - 8 for x in blk[2:]] + [(x >> 4) - 8 for x in blk[2:]]
        out += [f32(d * v) for v in q]
    return out


def unrotate(vals, rows, cols, heads):
    """transformers' row h*hd + a*half + b is llama.cpp's h*hd + 2b + a."""
    hd = rows // heads
    half = hd // 2
    out = [0.0] * len(vals)
    for r in range(rows):
        h, a, b = r // hd, (r % hd) // half, (r % hd) % half
        g = h * hd + 2 * b + a
        out[r * cols:(r + 1) * cols] = vals[g * cols:(g + 1) * cols]
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, hf, out = sys.argv[1:]
    r = Reader(open(src, "rb").read())
    if r.d[:4] != b"GGUF":
        sys.exit(f"{src}: not GGUF")
    r.p = 4
    version, n_t, n_kv = r.take("I"), r.take("Q"), r.take("Q")
    meta = {}
    for _ in range(n_kv):
        k = r.string()
        meta[k] = r.value(r.take("I"))
    infos = []
    for _ in range(n_t):
        name = r.string()
        nd = r.take("I")
        ne = [r.take("Q") for _ in range(nd)]
        infos.append((name, ne, r.take("I"), r.take("Q")))
    align = meta.get("general.alignment", 32)
    data0 = (r.p + align - 1) // align * align
    arch = meta.get("general.architecture")
    header, blobs, off = {}, [], 0
    for name, ne, t, o in infos:
        if t not in TYPES:
            sys.exit(f"{src}: tensor {name} has ggml type {t}, which this reference does not read")
        tname, per, size = TYPES[t]
        n = 1
        for e in ne:
            n *= e
        raw = r.d[data0 + o:data0 + o + n // per * size]
        vals = dequant(raw, tname, n)
        shape = list(reversed(ne))
        if arch == "llama" and name.endswith(("attn_q.weight", "attn_k.weight")):
            key = "llama.attention.head_count" if name.endswith("attn_q.weight") else "llama.attention.head_count_kv"
            vals = unrotate(vals, shape[0], shape[1], meta[key])
        if name == "rope_freqs.weight":  # llama3 rope scaling's factors: the config states them
            continue
        if name in TOP:
            hf_name = TOP[name]
        else:
            parts = name.split(".")
            hf_name = f"model.layers.{parts[1]}." + PER_LAYER[".".join(parts[2:])]
        blob = struct.pack(f"<{n}f", *vals)
        header[hf_name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    os.makedirs(out, exist_ok=True)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
    shutil.copy(os.path.join(hf, "config.json"), os.path.join(out, "config.json"))
    print(json.dumps({"out": out, "tensors": len(infos), "gguf_version": version}))


if __name__ == "__main__":
    main()

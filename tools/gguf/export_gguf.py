#!/usr/bin/env python3
"""export_gguf.py HF_DIR OUT.gguf [--type q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q5_k|q6_k|q4_k_m]

Writes a Hugging Face Llama, Qwen2 or Qwen3 checkpoint (bf16/f16/f32 safetensors, tokenizer.json) as a
GGUF v3 file llama.cpp loads, in plain Python (no numpy, torch or gguf package), so radiance and
llama.cpp can be compared on the same weights where llama.cpp's own converter cannot run. Tensors
keep their stored dtype. Llama's q/k rows are reordered as llama.cpp's converter does (its llama
graph rotates interleaved pairs, transformers' rotates halves); Qwen2 keeps transformers' order.
The vocabulary is written as a GPT-2-style BPE (tokens, types, merges), padded to the embedding's
rows, with tokenizer_config.json's chat template where it has one; no special vocab beyond BOS/EOS.
A Llama-style tokenizer.json (BPE with byte fallback) is written as llama.cpp writes a SentencePiece
vocabulary: tokenizer.ggml.model "llama", scores (here minus the id), byte tokens of type 6.
A llama3 rope scaling is written as llama.cpp writes it: rope_freqs.weight, a factor a frequency.

--type quantises every 2-D weight but the embedding (radiance's llama plugins read a plain one)
to Q8_0 or Q4_0 as ggml's reference quantisers do (quantize_row_q8_0_ref / q4_0_ref: blocks of
32, an f16 scale, int8 codes of round(x * 127 / amax), or nibbles of x / (max / -8) + 8), after
the q/k reordering. A folder without tokenizer.json gets no vocabulary: such a file is for
importing weights (rad-convert's `ggml` quantiser, tests), which llama.cpp cannot load.

q4_k, q5_k and q6_k write the K-quants' super-blocks of 256 from their published layouts (ggml's
block_q4_K / block_q5_K / block_q6_K) with a simple quantiser of this file's own, not llama.cpp's
search: Q4_K / Q5_K take each sub-block of 32's range [min(x, 0), max(x)] as 15 / 31 steps, the
f16 d and dmin as the largest sub-block scale and minimum over 63, the 6-bit sc and m rounded from
them; Q6_K a scale per 16 of amax / 31, d as the largest over 127, int8 sc. q4_k_m mixes them as
llama.cpp's Q4_K_M does in spirit: Q6_K for attn_v, ffn_down and output, Q4_K for the rest. A
tensor whose rows are not whole super-blocks falls back as llama.cpp's does (Q4_K to Q5_0, Q5_K
to Q5_1, Q6_K to Q8_0). q4_1, q5_0 and q5_1 follow ggml's reference quantisers (min / max, or
the largest magnitude over -16).
"""
import json
import math
import os
import struct
import sys

GGUF_TYPE = {"u32": 4, "i32": 5, "f32": 6, "bool": 7, "str": 8, "arr": 9}
GGML_TYPE = {"F32": 0, "F16": 1, "BF16": 30, "Q8_0": 8, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q4_K": 12, "Q5_K": 13,
             "Q6_K": 14}
BLOCK = {"Q8_0": (32, 34), "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q4_K": (256, 144),
         "Q5_K": (256, 176), "Q6_K": (256, 210)}  # values, bytes
# llama.cpp's types for a K-quant whose rows are not whole super-blocks
FALLBACK = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}
ELEM = {"F32": 4, "F16": 2, "BF16": 2}
ALIGN = 32


def s_(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<Q", len(b)) + b


def kv(key, kind, value):
    out = s_(key) + struct.pack("<I", GGUF_TYPE[kind])
    if kind == "u32":
        out += struct.pack("<I", value)
    elif kind == "i32":
        out += struct.pack("<i", value)
    elif kind == "f32":
        out += struct.pack("<f", value)
    elif kind == "str":
        out += s_(value)
    return out


def kv_array(key, elem, values):
    out = s_(key) + struct.pack("<II", GGUF_TYPE["arr"], GGUF_TYPE[elem]) + struct.pack("<Q", len(values))
    if elem == "str":
        out += b"".join(s_(v) for v in values)
    elif elem == "i32":
        out += struct.pack(f"<{len(values)}i", *values)
    elif elem == "f32":
        out += struct.pack(f"<{len(values)}f", *values)
    return out


def read_safetensors(folder):
    tensors = {}
    for fn in sorted(os.listdir(folder)):
        if fn.startswith("model") and fn.endswith(".safetensors"):  # the weights' shards, not a fixture's other files
            path = os.path.join(folder, fn)
            with open(path, "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                header = json.loads(f.read(n))
            for name, t in header.items():
                if name != "__metadata__":
                    tensors[name] = (path, 8 + n + t["data_offsets"][0], t["data_offsets"][1] - t["data_offsets"][0], t["dtype"],
                                     t["shape"])
    return tensors


def permute_rows(data, rows, row_bytes, n_head):
    """llama.cpp's q/k order: per head, rows (a*half + b) move to (b*2 + a)."""
    hd = rows // n_head
    half = hd // 2
    out = bytearray(len(data))
    for h in range(n_head):
        for a in range(2):
            for b in range(half):
                src = (h * hd + a * half + b) * row_bytes
                dst = (h * hd + b * 2 + a) * row_bytes
                out[dst:dst + row_bytes] = data[src:src + row_bytes]
    return bytes(out)


def to_f32(data, dt):
    """1-D tensors (norms, biases) go to llama.cpp as F32, as its converter writes them."""
    if dt == "F32":
        return data
    if dt == "BF16":  # exact: the bf16 bits are the high half of the f32
        out = bytearray(2 * len(data))
        out[2::4] = data[0::2]
        out[3::4] = data[1::2]
        return bytes(out)
    n = len(data) // 2
    return struct.pack(f"<{n}f", *struct.unpack(f"<{n}e", data))


def to_floats(data, dt):
    """A tensor's values as Python floats (f64, exact for bf16, f16 and f32)."""
    if dt == "F32":
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    if dt == "F16":
        return list(struct.unpack(f"<{len(data) // 2}e", data))
    return list(struct.unpack(f"<{len(data) // 2}f", to_f32(data, "BF16")))


def f32(v):
    """v rounded to f32, as ggml's float arithmetic leaves it."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def q8_0_block(x):
    amax = max(abs(v) for v in x)
    d = f32(amax / 127)
    inv = f32(1 / d) if d else 0.0
    q = []
    for v in x:
        t = f32(v * inv)
        r = int(abs(t) + 0.5)  # roundf: half away from zero
        q.append(-r if t < 0 else r)
    return struct.pack("<e", d) + struct.pack("<32b", *q)


def q4_0_block(x):
    amax, mx = 0.0, 0.0
    for v in x:
        if amax < abs(v):
            amax, mx = abs(v), v
    d = f32(mx / -8)
    inv = f32(1 / d) if d else 0.0
    n = [min(15, int(f32(f32(v * inv) + 8.5))) for v in x]  # (int8_t) truncates toward zero
    return struct.pack("<e", d) + bytes(n[j] | (n[j + 16] << 4) for j in range(16))


def q4_1_block(x):
    """ggml's reference: d = (max - min) / 15, m = min, nibbles of (x - min) / d rounded."""
    lo, hi = min(x), max(x)
    d = f32((hi - lo) / 15)
    inv = f32(1 / d) if d else 0.0
    n = [min(15, int(f32(f32(v - lo) * inv) + 0.5)) for v in x]
    return struct.pack("<ee", d, lo) + bytes(n[j] | (n[j + 16] << 4) for j in range(16))


def q5_bits(n):
    """Q5's 32-bit qh (bit j: value j's fifth bit) and 16 bytes of low nibbles (values j, j + 16)."""
    qh = sum(((n[j] >> 4) & 1) << j for j in range(32))
    return struct.pack("<I", qh) + bytes((n[j] & 15) | ((n[j + 16] & 15) << 4) for j in range(16))


def q5_0_block(x):
    """ggml's reference: d = max / -16 (max the value of largest magnitude), q = x / d + 16.5 truncated."""
    amax, mx = 0.0, 0.0
    for v in x:
        if amax < abs(v):
            amax, mx = abs(v), v
    d = f32(mx / -16)
    inv = f32(1 / d) if d else 0.0
    n = [min(31, int(f32(f32(v * inv) + 16.5))) for v in x]
    return struct.pack("<e", d) + q5_bits(n)


def q5_1_block(x):
    lo, hi = min(x), max(x)
    d = f32((hi - lo) / 31)
    inv = f32(1 / d) if d else 0.0
    n = [min(31, int(f32(f32(v - lo) * inv) + 0.5)) for v in x]
    return struct.pack("<ee", d, lo) + q5_bits(n)


def f16(v):
    """v rounded to f16 (the stored d), back as a float."""
    return struct.unpack("<e", struct.pack("<e", v))[0]


def clamp_round(v, lo, hi):
    r = int(abs(v) + 0.5)
    return max(lo, min(hi, -r if v < 0 else r))


def pack_6bit(sc, mn):
    """Q4_K/Q5_K's 12 bytes: sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scale) and 4-7 (min);
    4-7 as nibbles of bytes 8-11 (scale low, min high) with their top 2 bits on bytes 0-3 / 4-7."""
    k = [0] * 12
    for j in range(4):
        k[j] = sc[j] | ((sc[j + 4] >> 4) << 6)
        k[j + 4] = mn[j] | ((mn[j + 4] >> 4) << 6)
        k[j + 8] = (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4)
    return bytes(k)


def qk_block(x, levels):
    """One Q4_K (levels 15) or Q5_K (31) super-block of 256: (d, dmin, sc[8], mn[8], q[256])."""
    subs = [x[32 * j:32 * j + 32] for j in range(8)]
    lows = [min(0.0, min(s)) for s in subs]
    scales = [(max(s) - lo) / levels for s, lo in zip(subs, lows)]
    d, dmin = f16(max(scales) / 63), f16(max(-lo for lo in lows) / 63)
    sc = [clamp_round(s / d, 0, 63) if d else 0 for s in scales]
    mn = [clamp_round(-lo / dmin, 0, 63) if dmin else 0 for lo in lows]
    q = []
    for j, s in enumerate(subs):
        step, off = f32(d * sc[j]), f32(dmin * mn[j])
        q += [clamp_round((v + off) / step, 0, levels) if step else 0 for v in s]
    return d, dmin, sc, mn, q


def q4_k_block(x):
    d, dmin, sc, mn, q = qk_block(x, 15)
    nib = bytes(q[64 * c + l] | (q[64 * c + 32 + l] << 4) for c in range(4) for l in range(32))
    return struct.pack("<ee", d, dmin) + pack_6bit(sc, mn) + nib


def q5_k_block(x):
    d, dmin, sc, mn, q = qk_block(x, 31)
    nib = bytes((q[64 * c + l] & 15) | ((q[64 * c + 32 + l] & 15) << 4) for c in range(4) for l in range(32))
    qh = bytes(sum(((q[64 * c + l] >> 4) << (2 * c)) | ((q[64 * c + 32 + l] >> 4) << (2 * c + 1)) for c in range(4)) for l in range(32))
    return struct.pack("<ee", d, dmin) + pack_6bit(sc, mn) + qh + nib


def q6_k_block(x):
    scales = []
    for i in range(16):
        s = x[16 * i:16 * i + 16]
        scales.append(max(abs(v) for v in s) / 31)
    d = f16(max(scales) / 127)
    sc = [clamp_round(s / d, -128, 127) if d else 0 for s in scales]
    q = []  # q - 32 in [-32, 31], stored as 0..63
    for i in range(16):
        step = f32(d * sc[i])
        q += [clamp_round(v / step, -32, 31) + 32 if step else 32 for v in x[16 * i:16 * i + 16]]
    ql, qh = bytearray(128), bytearray(64)
    for h in range(2):  # halves of 128: value 32 * i + l from ql[l + 32 * (i & 1)] (nibble i >= 2) and qh[l] bits 2i
        for i in range(4):
            for l in range(32):
                v = q[128 * h + 32 * i + l]
                ql[64 * h + l + 32 * (i & 1)] |= (v & 15) << (4 if i >= 2 else 0)
                qh[32 * h + l] |= (v >> 4) << (2 * i)
    return bytes(ql) + bytes(qh) + struct.pack("<16b", *sc) + struct.pack("<e", d)


BLOCK_FN = {"Q8_0": q8_0_block, "Q4_0": q4_0_block, "Q4_1": q4_1_block, "Q5_0": q5_0_block, "Q5_1": q5_1_block,
            "Q4_K": q4_k_block, "Q5_K": q5_k_block, "Q6_K": q6_k_block}


def quantise(data, dt, cols, qtype):
    """Rows of `cols` values into ggml blocks (of 32, or super-blocks of 256)."""
    vals = to_floats(data, dt)
    per = BLOCK[qtype][0]
    return b"".join(BLOCK_FN[qtype](vals[i:i + per]) for i in range(0, len(vals), per))


def type_for(g, cols, qtype):
    """The ggml type tensor g is written in: q4_k_m's mix, and llama.cpp's fallback where super-blocks
    do not fit (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0)."""
    t = qtype
    if qtype == "Q4_K_M":
        t = "Q6_K" if g.endswith(("attn_v.weight", "ffn_down.weight")) or g == "output.weight" else "Q4_K"
    if cols % BLOCK[t][0]:
        sys.stderr.write(f"{g}: rows of {cols} values are not whole blocks of {BLOCK[t][0]} for {t}; written as {FALLBACK[t]}\n")
        t = FALLBACK[t]
    return t


def llama3_rope_factors(cfg, hd):
    """Llama 3.1-style rope scaling as llama.cpp's converter stores it: a factor per rotary frequency
    (rope_freqs.weight, F32), from the config's llama3 parameters; None for another rope."""
    r = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    if r.get("rope_type", r.get("type")) != "llama3":
        return None
    theta = r.get("rope_theta", cfg.get("rope_theta", 10000.0))
    factor, low, high = r["factor"], r.get("low_freq_factor", 1.0), r.get("high_freq_factor", 4.0)
    orig = r["original_max_position_embeddings"]
    out = []
    for i in range(0, hd, 2):
        wavelen = 2 * math.pi * theta ** (i / hd)
        if wavelen < orig / high:
            out.append(1.0)
        elif wavelen > orig / low:
            out.append(float(factor))
        else:
            smooth = (orig / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return struct.pack(f"<{len(out)}f", *out)


def is_sentencepiece(folder):
    """A Llama-style tokenizer.json (BPE with byte fallback): llama.cpp writes it as a SentencePiece
    vocabulary (tokenizer.ggml.model "llama": tokens, scores, types; no merges)."""
    tj = json.load(open(os.path.join(folder, "tokenizer.json")))
    return bool(tj["model"].get("byte_fallback"))


def vocab(folder, n_vocab):
    tj = json.load(open(os.path.join(folder, "tokenizer.json")))
    model = tj["model"]
    by_id = {i: t for t, i in model["vocab"].items()}
    types = {i: 6 if len(t) == 6 and t.startswith("<0x") and t.endswith(">") else 1 for i, t in by_id.items()}
    for a in tj.get("added_tokens", []):
        by_id[a["id"]] = a["content"]
        types[a["id"]] = 2 if a["content"] == model.get("unk_token") else 3 if a.get("special") else 4
    tokens, toktypes = [], []
    for i in range(n_vocab):
        if i in by_id:
            tokens.append(by_id[i])
            toktypes.append(types[i])
        else:
            tokens.append(f"[PAD{i}]")
            toktypes.append(5)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    return tokens, toktypes, merges


def main():
    args = sys.argv[1:]
    qtype = None
    if len(args) == 4 and args[2] == "--type" and args[3] in ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q4_k_m"):
        qtype = args[3].upper()
        args = args[:2]
    if len(args) != 2:
        sys.exit(__doc__)
    src, out_path = args
    cfg = json.load(open(os.path.join(src, "config.json")))
    arch = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "mistral": "llama"}.get(cfg["model_type"])
    if not arch:
        sys.exit(f"{src}: model_type {cfg['model_type']} is not one this exporter writes (llama, mistral, qwen2, qwen3)")
    st = read_safetensors(src)
    nh, nkv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    hd = cfg.get("head_dim") or cfg["hidden_size"] // nh
    n_vocab = st["model.embed_tokens.weight"][4][0]
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    per_layer = {"input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
                 "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
                 "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
                 "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
                 "self_attn.v_proj.bias": "attn_v.bias", "self_attn.q_norm.weight": "attn_q_norm.weight",
                 "self_attn.k_norm.weight": "attn_k_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
                 "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight"}
    plan = []
    for hf, (path, off, nbytes, dt, shape) in st.items():
        if hf in names:
            g = names[hf]
        else:
            parts = hf.split(".")
            if parts[:2] != ["model", "layers"] or ".".join(parts[3:]) not in per_layer:
                sys.exit(f"{src}: tensor {hf} has no GGUF name here")
            g = f"blk.{parts[2]}." + per_layer[".".join(parts[3:])]
        if dt not in GGML_TYPE:
            sys.exit(f"{src}: tensor {hf} is {dt}; this exporter writes F32, F16 and BF16")
        if len(shape) == 1:  # norms and biases: F32 (llama.cpp's ops read them so)
            plan.append((g, hf, path, off, nbytes, dt + ">F32", shape))
        elif qtype and g != "token_embd.weight":
            if shape[1] % 32:
                sys.exit(f"{src}: tensor {hf} has rows of {shape[1]} values, not whole blocks of 32 for {qtype}")
            plan.append((g, hf, path, off, nbytes, dt + ">" + type_for(g, shape[1], qtype), shape))
        else:
            plan.append((g, hf, path, off, nbytes, dt, shape))
    synthetic = {}
    rope_freqs = llama3_rope_factors(cfg, hd) if arch == "llama" else None
    if rope_freqs:  # a tensor of its own, not from the checkpoint
        synthetic["rope_freqs.weight"] = rope_freqs
        plan.append(("rope_freqs.weight", None, None, 0, len(rope_freqs), "F32", [hd // 2]))
    plan.sort(key=lambda p: (0, 0) if p[0] == "token_embd.weight" else (int(p[0].split(".")[1]) + 1, p[0]) if p[0].startswith("blk.") else (10**6, p[0]))
    has_vocab = os.path.exists(os.path.join(src, "tokenizer.json"))
    tokens, toktypes, merges = vocab(src, n_vocab) if has_vocab else ([], [], [])
    meta = [kv("general.architecture", "str", arch), kv("general.name", "str", os.path.basename(os.path.normpath(src))),
            kv("general.alignment", "u32", ALIGN),
            kv(f"{arch}.context_length", "u32", cfg.get("max_position_embeddings", 4096)),
            kv(f"{arch}.embedding_length", "u32", cfg["hidden_size"]),
            kv(f"{arch}.block_count", "u32", cfg["num_hidden_layers"]),
            kv(f"{arch}.feed_forward_length", "u32", cfg["intermediate_size"]),
            kv(f"{arch}.attention.head_count", "u32", nh), kv(f"{arch}.attention.head_count_kv", "u32", nkv),
            kv(f"{arch}.attention.key_length", "u32", hd), kv(f"{arch}.attention.value_length", "u32", hd),
            kv(f"{arch}.rope.dimension_count", "u32", hd),
            kv(f"{arch}.rope.freq_base", "f32", float(cfg.get("rope_theta", 10000.0))),
            kv(f"{arch}.attention.layer_norm_rms_epsilon", "f32", float(cfg.get("rms_norm_eps", 1e-6))),
            kv(f"{arch}.vocab_size", "u32", n_vocab)]
    if has_vocab and is_sentencepiece(src):  # scores: a token's rank, as the merges order them
        meta += [kv("tokenizer.ggml.model", "str", "llama"),
                 kv_array("tokenizer.ggml.tokens", "str", tokens), kv_array("tokenizer.ggml.token_type", "i32", toktypes),
                 kv_array("tokenizer.ggml.scores", "f32", [-float(i) for i in range(len(tokens))])]
    elif has_vocab:
        meta += [kv("tokenizer.ggml.model", "str", "gpt2"),
                 kv("tokenizer.ggml.pre", "str", "qwen2" if arch == "qwen2" else "llama-bpe"),
                 kv_array("tokenizer.ggml.tokens", "str", tokens), kv_array("tokenizer.ggml.token_type", "i32", toktypes),
                 kv_array("tokenizer.ggml.merges", "str", merges)]
    tc_path = os.path.join(src, "tokenizer_config.json")
    template = json.load(open(tc_path)).get("chat_template") if os.path.exists(tc_path) else None
    if isinstance(template, str):
        meta.append(kv("tokenizer.chat_template", "str", template))
    if cfg.get("bos_token_id") is not None:
        meta.append(kv("tokenizer.ggml.bos_token_id", "u32", cfg["bos_token_id"]))
    eos = cfg.get("eos_token_id")
    if isinstance(eos, list):
        eos = eos[0]
    if eos is not None:
        meta.append(kv("tokenizer.ggml.eos_token_id", "u32", eos))
    infos, offset = [], 0
    for g, hf, path, off, nbytes, dt, shape in plan:
        dims = list(reversed(shape))
        out_dt = dt.split(">")[-1]
        if out_dt in BLOCK:  # whole blocks of BLOCK[t][0] values in BLOCK[t][1] bytes
            out_bytes = nbytes // ELEM[dt.split(">")[0]] // BLOCK[out_dt][0] * BLOCK[out_dt][1]
        else:
            out_bytes = nbytes // ELEM[dt.split(">")[0]] * ELEM[out_dt]
        infos.append(s_(g) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) +
                     struct.pack("<IQ", GGML_TYPE[out_dt], offset))
        offset += (out_bytes + ALIGN - 1) // ALIGN * ALIGN
    with open(out_path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(plan), len(meta)))
        for m in meta:
            f.write(m)
        for i in infos:
            f.write(i)
        f.write(b"\0" * ((ALIGN - f.tell() % ALIGN) % ALIGN))
        for g, hf, path, off, nbytes, dt, shape in plan:
            if path is None:
                data = synthetic[g]
            else:
                with open(path, "rb") as src_f:
                    src_f.seek(off)
                    data = src_f.read(nbytes)
            if arch == "llama" and g.endswith(("attn_q.weight", "attn_k.weight")):
                heads = nh if g.endswith("attn_q.weight") else nkv
                data = permute_rows(data, shape[0], nbytes // shape[0], heads)
            if dt.split(">")[-1] in BLOCK:
                data = quantise(data, dt.split(">")[0], shape[1], dt.split(">")[1])
            elif ">" in dt:
                data = to_f32(data, dt.split(">")[0])
            f.write(data)
            f.write(b"\0" * ((ALIGN - len(data) % ALIGN) % ALIGN))
    print(json.dumps({"out": out_path, "tensors": len(plan), "arch": arch, "vocab": n_vocab}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""export_gguf.py HF_DIR OUT.gguf [--type q8_0|q4_0]

Writes a Hugging Face Llama or Qwen2 checkpoint (bf16/f16/f32 safetensors, tokenizer.json) as a
GGUF v3 file llama.cpp loads, in plain Python (no numpy, torch or gguf package), so radiance and
llama.cpp can be compared on the same weights where llama.cpp's own converter cannot run. Tensors
keep their stored dtype. Llama's q/k rows are reordered as llama.cpp's converter does (its llama
graph rotates interleaved pairs, transformers' rotates halves); Qwen2 keeps transformers' order.
The vocabulary is written as a GPT-2-style BPE (tokens, types, merges), padded to the embedding's
rows. Only what a speed comparison needs: no chat template, no special vocab beyond BOS/EOS.

--type quantises every 2-D weight but the embedding (radiance's llama plugins read a plain one)
to Q8_0 or Q4_0 as ggml's reference quantisers do (quantize_row_q8_0_ref / q4_0_ref: blocks of
32, an f16 scale, int8 codes of round(x * 127 / amax), or nibbles of x / (max / -8) + 8), after
the q/k reordering. A folder without tokenizer.json gets no vocabulary: such a file is for
importing weights (rad-convert's `ggml` quantiser, tests), which llama.cpp cannot load.
"""
import json
import os
import struct
import sys

GGUF_TYPE = {"u32": 4, "i32": 5, "f32": 6, "bool": 7, "str": 8, "arr": 9}
GGML_TYPE = {"F32": 0, "F16": 1, "BF16": 30, "Q8_0": 8, "Q4_0": 2}
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


def quantise(data, dt, cols, qtype):
    """Rows of `cols` values into ggml blocks of 32."""
    vals = to_floats(data, dt)
    block = q8_0_block if qtype == "Q8_0" else q4_0_block
    return b"".join(block(vals[i:i + 32]) for i in range(0, len(vals), 32))


def vocab(folder, n_vocab):
    tj = json.load(open(os.path.join(folder, "tokenizer.json")))
    model = tj["model"]
    by_id = {i: t for t, i in model["vocab"].items()}
    types = {i: 1 for i in by_id}
    for a in tj.get("added_tokens", []):
        by_id[a["id"]] = a["content"]
        types[a["id"]] = 3 if a.get("special") else 4
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
    if len(args) == 4 and args[2] == "--type" and args[3] in ("q8_0", "q4_0"):
        qtype = args[3].upper()
        args = args[:2]
    if len(args) != 2:
        sys.exit(__doc__)
    src, out_path = args
    cfg = json.load(open(os.path.join(src, "config.json")))
    arch = {"llama": "llama", "qwen2": "qwen2", "mistral": "llama"}.get(cfg["model_type"])
    if not arch:
        sys.exit(f"{src}: model_type {cfg['model_type']} is not one this exporter writes (llama, mistral, qwen2)")
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
                 "self_attn.v_proj.bias": "attn_v.bias", "mlp.gate_proj.weight": "ffn_gate.weight",
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
            plan.append((g, hf, path, off, nbytes, dt + ">" + qtype, shape))
        else:
            plan.append((g, hf, path, off, nbytes, dt, shape))
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
    if has_vocab:
        meta += [kv("tokenizer.ggml.model", "str", "gpt2"),
                 kv("tokenizer.ggml.pre", "str", "qwen2" if arch == "qwen2" else "llama-bpe"),
                 kv_array("tokenizer.ggml.tokens", "str", tokens), kv_array("tokenizer.ggml.token_type", "i32", toktypes),
                 kv_array("tokenizer.ggml.merges", "str", merges)]
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
        if out_dt in ("Q8_0", "Q4_0"):  # blocks of 32 values: an f16 scale and 32 bytes or 16
            out_bytes = nbytes // ELEM[dt.split(">")[0]] // 32 * (34 if out_dt == "Q8_0" else 18)
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
            with open(path, "rb") as src_f:
                src_f.seek(off)
                data = src_f.read(nbytes)
            if arch == "llama" and g.endswith(("attn_q.weight", "attn_k.weight")):
                heads = nh if g.endswith("attn_q.weight") else nkv
                data = permute_rows(data, shape[0], nbytes // shape[0], heads)
            if dt.endswith((">Q8_0", ">Q4_0")):
                data = quantise(data, dt.split(">")[0], shape[1], dt.split(">")[1])
            elif ">" in dt:
                data = to_f32(data, dt.split(">")[0])
            f.write(data)
            f.write(b"\0" * ((ALIGN - len(data) % ALIGN) % ALIGN))
    print(json.dumps({"out": out_path, "tensors": len(plan), "arch": arch, "vocab": n_vocab}))


if __name__ == "__main__":
    main()

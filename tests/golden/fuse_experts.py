#!/usr/bin/env python3
"""fuse_experts.py FIXTURE OUT: a copy of a Qwen-MoE golden fixture whose experts are stored as
transformers 5 keeps them, fused: mlp.experts.gate_up_proj [E, 2F, d] (each expert's gate rows,
then its up rows) and mlp.experts.down_proj [E, d, F], in place of one tensor an expert and
projection. Plain Python (bytes only), so CI needs no torch. The same weights, so rad-golden must
give the same logits."""
import json
import os
import re
import shutil
import struct
import sys


def read(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    blob = raw[8 + n:]
    return {k: (v["dtype"], v["shape"], blob[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in hdr.items() if k != "__metadata__"}


def write(path, tensors):
    hdr, off, parts = {}, 0, []
    for k, (dt, shape, data) in tensors.items():
        hdr[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
        parts.append(data)
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(parts))


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(src):
        if f != "model.safetensors":
            shutil.copy(os.path.join(src, f), out)
    t = read(os.path.join(src, "model.safetensors"))
    experts = {}  # prefix -> {e: {proj: tensor}}
    pat = re.compile(r"(.*\.mlp\.experts\.)(\d+)\.(gate_proj|up_proj|down_proj)\.weight$")
    fused = {}
    for k, v in t.items():
        m = pat.match(k)
        if m:
            experts.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[m.group(3)] = v
        else:
            fused[k] = v
    assert experts, "no per-expert tensors in " + src
    for prefix, by_e in experts.items():
        E = len(by_e)
        dt, (F, d), _ = by_e[0]["gate_proj"]
        gu = b"".join(by_e[e]["gate_proj"][2] + by_e[e]["up_proj"][2] for e in range(E))
        down = b"".join(by_e[e]["down_proj"][2] for e in range(E))
        fused[prefix + "gate_up_proj"] = (dt, [E, 2 * F, d], gu)
        fused[prefix + "down_proj"] = (dt, [E, d, F], down)
    write(os.path.join(out, "model.safetensors"), fused)
    print(f"fuse_experts: {len(experts)} layers fused into {out}")


if __name__ == "__main__":
    main()

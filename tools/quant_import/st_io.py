"""st_io.py: safetensors files in plain Python (no numpy), for the quantised-checkpoint fixtures.

The layout (huggingface/safetensors' README): a little-endian u64 header size, a JSON header of
{name: {"dtype", "shape", "data_offsets": [begin, end]}} (offsets into the data after the
header), then the data. Only the file format lives here: the quantised formats' packing is in
quantise_hf.py, their reading in dequant_hf.py, and the two share nothing else.
"""
import json
import struct


def read(path):
    """{name: (dtype, shape, raw bytes)} of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack_from("<Q", data, 0)[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[name] = (v["dtype"], list(v["shape"]), data[8 + n + a:8 + n + b])
    return out


def write(path, tensors):
    """Writes {name: (dtype, shape, raw bytes)}, names sorted, the header padded to 8 bytes."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def f32(v):
    """v rounded to the nearest f32."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def floats(dtype, raw):
    """The values of a float tensor's bytes (F32, F16 or BF16), as Python floats."""
    if dtype == "F32":
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if dtype == "F16":
        return list(struct.unpack(f"<{len(raw) // 2}e", raw))
    if dtype == "BF16":
        n = len(raw) // 2
        hi = struct.unpack(f"<{n}H", raw)
        return list(struct.unpack(f"<{n}f", struct.pack(f"<{n}I", *[h << 16 for h in hi])))
    raise ValueError("not a float dtype: " + dtype)

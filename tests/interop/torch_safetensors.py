"""torch_safetensors.py — what the PyTorch interop tests share: the skip where torch is missing,
and safetensors files read into and written from torch tensors by hand (the format's 8-byte
header length, JSON header and byte buffer), so that the tests check dpscale's files against the
format itself rather than against a library that might share a misreading.

Importing it exits 77 (CTest's SKIP_RETURN_CODE) when python3-torch or numpy is not installed,
so a test imports it before its own torch imports.
"""
import json
import struct
import sys

try:
    import numpy as np
    import torch
except ImportError:
    print("skip: python3-torch (and numpy) not installed")
    sys.exit(77)


def read_safetensors_with_meta(path):
    """(name -> float32 tensor, the header's __metadata__ or {})."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, t in header.items():
        assert t["dtype"] == "F32", t
        a, b = t["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(blob[base + a:base + b], dtype="<f4").copy()).reshape(t["shape"])
    return out, meta


def read_safetensors(path):
    """name -> float32 tensor."""
    return read_safetensors_with_meta(path)[0]


def write_safetensors(path, tensors):
    """name -> tensor, written as float32 with the header padded to 8 bytes."""
    header, parts, at = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        parts.append(raw)
        at += len(raw)
    js = json.dumps(header).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)) + js + b"".join(parts))

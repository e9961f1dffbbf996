#!/usr/bin/env python3
"""make_corpus.py — writes the small seed corpora of fuzz/corpus/<target>/ (committed; run again
only to change them). Each seed is a valid input, so the fuzzers start from inputs that reach
deep into each parser rather than from its first check. Usage: python3 fuzz/make_corpus.py"""
import gzip, json, os, struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy(descr, shape, payload, version=1):
    dims = ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pre = 10 if version == 1 else 12
    header += " " * ((64 - (pre + len(header) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode() + payload


def idx(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload


def chunks(*parts):
    return b"".join(struct.pack("<I", len(p)) + p for p in parts)


def safetensors(tensors, metadata=None):
    header, buf = {}, b""
    for name, shape, values in tensors:
        data = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(buf), len(buf) + len(data)]}
        buf += data
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + buf


put("width_list", "preset", "small")
put("width_list", "widths", "784,256,10")
put("width_list", "tiny", "4,3,2")

put("link_spec", "preset", "pcie4\n1")
put("link_spec", "custom_auto", "50:300\nauto:19.5")
put("link_spec", "none", "none\n3")
# Two tiers (parse_two_tier_link): presets, custom links in another key order with ranks-per-node.
put("link_spec", "two_tier_presets", "intra=nvlink,inter=ib100\n1")
put("link_spec", "two_tier_custom_rpn", "inter=50:0.125,ranks-per-node=2,intra=2:8\n2.5")
put("link_spec", "two_tier_mixed", "intra=pcie4,inter=10:1.25,ranks-per-node=4\nauto:19.5")

put("npy", "f4_2x3", npy("<f4", [2, 3], struct.pack("<6f", *range(6))))
put("npy", "i8_2", npy("<i8", [2], struct.pack("<2q", 0, 1)))
# Regressions: inputs that broke read_npy (a dimension beyond int64: std::out_of_range; 2^62 rows
# x 4 x 4 bytes: a wrapped byte count), refused with InputError since.
put("npy", "regress_dim_beyond_int64", npy("<f4", [99999999999999999999999, 2], b""))
put("npy", "regress_bytes_overflow", npy("<f4", [4611686018427387904, 4], b""))
put("npy", "f4_v2", npy("<f4", [2, 1], struct.pack("<2f", 0.5, -1), version=2))

img = idx(0x803, [2, 2, 2], bytes(range(8)))
lab = idx(0x801, [2], bytes([0, 1]))
put("idx", "plain", chunks(img, lab, img, lab))
put("idx", "gzip", chunks(gzip.compress(img, mtime=0), gzip.compress(lab, mtime=0), gzip.compress(img, mtime=0), gzip.compress(lab, mtime=0)))

put("safetensors", "mlp_4_3_2", safetensors([
    ("layers.0.weight", [3, 4], [0.1] * 12), ("layers.0.bias", [3], [0.0] * 3),
    ("layers.1.weight", [2, 3], [0.2] * 6), ("layers.1.bias", [2], [0.0] * 2)],
    {"format": "pt", "widths": "4,3,2"}))

cfg = os.path.join(os.path.dirname(ROOT), "..", "configs")
for name in ("ci.json", "cpu.json"):
    with open(os.path.join(cfg, name), "rb") as f:
        put("sweep_config", name.replace(".json", ""), f.read())
put("sweep_config", "options", json.dumps({
    "name": "f", "models": ["small", "784,64,10"], "modes": ["single", "naive", "bucketed"], "world_sizes": [1, 2],
    "bucket_caps_mb": [1, 2.5], "link": "10:50", "link_dilation": 3, "repeats": 2, "timeout_s": 60,
    "options": {"allreduce": "ring", "fused": True, "seed": 7, "batch_size": 64}}))

base = os.path.join(os.path.dirname(ROOT), "..", ".ci", "baseline", "ci-cpu.jsonl")
with open(base, "rb") as f:
    lines = f.read().splitlines(keepends=True)
put("results_line", "sweep_lines", b"".join(lines[:2]))
rec = json.loads(lines[0])
for k in ("status", "point", "run", "system"):
    rec.pop(k, None)
put("results_line", "results_json", "# banner\nRESULTS_JSON: " + json.dumps(rec) + "\n")
put("results_line", "torn", lines[0] + lines[1][: len(lines[1]) // 2])
# The machine's state around a run and a rerun's attempt (harness/results/machine_state.h).
rerun = json.loads(lines[1])
rerun["run"]["attempt"] = 1
rerun["system"]["state"] = {"load1_before": 2.9, "load1_after": 3.1, "steal_pct": 0.0, "iowait_pct": 0.1,
                            "others_cpus": 0.97, "cpu_mhz": 2450.0, "probe_before_gflops": 31.5,
                            "probe_after_gflops": 30.9, "disturbed": "others 0.97 CPU, load 3.1"}
put("results_line", "state_rerun", (json.dumps(rerun, separators=(",", ":")) + "\n").encode())
# Found by fuzz_results_line in CI: a number beyond a double's range is valid JSON
# syntax that nlohmann's parser refuses with out_of_range, not parse_error.
put("results_line", "regress_number_overflow", lines[0][:-2] + b', "avg_epoch_s": 2.3E15059967041}\n')
put("sweep_config", "regress_number_overflow", '{"models": ["small"], "modes": ["single"], "timeout_s": 1e999}\n')
# Found by fuzz_results_line in CI: a float where an integer belongs (widths).
put("results_line", "regress_float_width", lines[0].replace(b'"widths":[784,', b'"widths":[784,8.9e61,'))
# A shape whose element count wraps to 0 in 64 bits, over an empty byte range (refused since).
_h = json.dumps({"layers.0.weight": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 0]}}).encode()
put("safetensors", "regress_count_wraps", struct.pack("<Q", len(_h)) + _h)
# Found by a 60 s fuzz_npy run: two rows of no columns reached memcpy(null, null, 0).
put("npy", "regress_no_columns", npy("<f4", [2, 0], b""))

# A transformer's --model and --seq-len ("MODEL\nSEQ_LEN"): the presets and a spec in another key order.
put("gpt_spec", "preset_tiny", "gpt-tiny\n32")
put("gpt_spec", "preset_small", "gpt2-small\n0")
put("gpt_spec", "preset_medium", "gpt2-medium")
put("gpt_spec", "custom", "gpt:layers=4,dim=256,heads=4,vocab=8192,context=128\n64")
put("gpt_spec", "custom_order", "gpt:context=6,vocab=11,heads=2,dim=8,layers=2\n5")

# Token files (the first byte: seq_len 1 + (b & 7), vocabulary [256, 300, 2, 50257][(b >> 3) & 3]):
# int32 and int64 rows [N, seq_len + 1], and a line of text.
put("token_data", "npy_i4_2x5", bytes([3]) + npy("<i4", [2, 5], struct.pack("<10i", *range(10))))
put("token_data", "npy_i8_3x3", bytes([2 | 8]) + npy("<i8", [3, 3], struct.pack("<9q", 1, 2, 3, 4, 5, 299, 0, 7, 8)))
put("token_data", "npy_vocab2", bytes([1 | 16]) + npy("<i4", [1, 3], struct.pack("<3i", 0, 1, 1)))
put("token_data", "text", bytes([7]) + b"GNU GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007\n")
# Found by a 30 s fuzz_token_data run: a token array of no rows reached memcpy(null, null, 0).
put("token_data", "regress_no_rows", bytes([2]) + npy("<i4", [0, 3], b""))

#!/usr/bin/env bash
# system.sh — what the GPU kit ran on, as "key: value" lines, then the raw tool output:
# host, OS, glibc, CPU, the GPU (nvidia-smi), the driver's and the runtime's CUDA versions,
# cuBLAS and NCCL as loaded (through their own version calls, from the libraries the kit's
# programs resolve), nvcc, and where every library of train_single_gpu comes from.
#
#   kit/system.sh BIN_DIR > OUTDIR/system.txt      (after kit_env: LD_LIBRARY_PATH is the kit's)
set -uo pipefail
BIN=$1

kv() { printf '%s: %s\n' "$1" "${2:-}"; }
kv date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
kv host "$(hostname 2>/dev/null)"
kv kernel "$(uname -sr)"
kv os "$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)"
kv glibc "$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
kv cpu "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo) x $(getconf _NPROCESSORS_ONLN)"  # (nproc obeys OMP_NUM_THREADS)
if command -v nvidia-smi >/dev/null 2>&1; then
  kv gpus "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"
  kv gpu "$(nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,compute_cap --format=csv,noheader 2>/dev/null | head -1)"
  kv driver "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  kv driver_cuda "$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | awk '{print $3}')"
else
  kv gpus 0
  kv gpu "none (no nvidia-smi)"
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
kv nvcc "$("$nvcc" --version 2>/dev/null | grep -o 'release [0-9.]*' | awk '{print $2}')"

# The versions the loaded libraries report (ctypes: no build needed). The sonames are the ones
# the kit's programs need (ldd), so this is what they run with.
needs=$(ldd "$BIN/train_single_gpu" 2>/dev/null | awk '$1 ~ /^lib(cudart|cublas|nccl)/ {print $1}' | tr '\n' ' ')
# shellcheck disable=SC2086  # a list of sonames
python3 - $needs <<'EOF' 2>/dev/null || kv runtime "python3 not available: runtime versions not read"
import ctypes, sys
needs = sys.argv[1:]
def lib(prefix):
    for n in needs:
        if n.startswith(prefix + ".so"):
            try:
                return ctypes.CDLL(n), n
            except OSError as e:
                print(f"{prefix}: cannot load {n}: {e}")
                return None, n
    return None, None
cudart, n = lib("libcudart")
if cudart:
    v = ctypes.c_int()
    print("cuda_runtime:", v.value if cudart.cudaRuntimeGetVersion(ctypes.byref(v)) == 0 else "error", f"({n})")
    print("cuda_driver_api:", v.value if cudart.cudaDriverGetVersion(ctypes.byref(v)) == 0 else "error")
    r = cudart.cudaGetDeviceCount(ctypes.byref(v))
    print("cuda_devices:", v.value if r == 0 else f"0 (cudaGetDeviceCount error {r})")
cublas, n = lib("libcublas")
if cublas:
    parts = []
    for t in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
        v = ctypes.c_int()
        parts.append(str(v.value) if cublas.cublasGetProperty(t, ctypes.byref(v)) == 0 else "?")
    print("cublas:", ".".join(parts), f"({n})")
nccl, n = lib("libnccl")
if nccl:
    v = ctypes.c_int()
    if nccl.ncclGetVersion(ctypes.byref(v)) == 0:
        x = v.value  # NCCL >= 2.9: major*10000 + minor*100 + patch
        print("nccl:", f"{x // 10000}.{x % 10000 // 100}.{x % 100}", f"({n})")
EOF

echo
echo "## libraries of train_single_gpu (ldd, with the kit's LD_LIBRARY_PATH)"
ldd "$BIN/train_single_gpu" 2>&1
echo
echo "## LD_LIBRARY_PATH"
echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n'
if command -v nvidia-smi >/dev/null 2>&1; then
  echo
  echo "## nvidia-smi"
  nvidia-smi 2>&1
  echo
  echo "## nvidia-smi topo -m"
  nvidia-smi topo -m 2>&1
fi

#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages dpscale builds and runs with.
# Idempotent: installs only what is missing. As root it runs apt-get; otherwise it
# prints the one command to run and exits 1. Used by `make bench`, `make test`, .ci/run.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libopenblas-dev          # CPU backend: sgemm (always)
  libblis-dev libdnnl-dev  # CPU backend: the other GEMM libraries --gemm auto measures (BLIS, oneDNN)
  ocl-icd-opencl-dev       # oneDNN's CMake package requires OpenCL's (a Recommends of libdnnl-dev, which apt skips here)
  libopenmpi-dev openmpi-bin  # MPI: launch (mpirun) and the CPU all-reduce
  nlohmann-json3-dev       # RESULTS_JSON, configs, safetensors headers
  libcli11-dev             # command-line parsing
  zlib1g-dev               # gzip-compressed IDX files (Fashion-MNIST)
  libgtest-dev             # unit tests
  libbenchmark-dev         # micro-benchmarks
  python3 python3-matplotlib  # the plotter
  python3-jsonschema       # the plotter checks each report point against its point schema
  python3-numpy python3-scipy  # statistics: the regression gate (harness/report/gate.py), the history (harness/history/)
  python3-torch            # tests/interop: a checkpoint loads into the workshop's PyTorch model
  xz-utils                 # the GPU kit's archives (scripts/gpu-kit.sh)
  chromium                 # tests/plots, tests/history: the pages rendered as a reader sees them
  iproute2                 # ip, tc: the two emulated nodes (scripts/emulated-nodes.sh, ctest -L twonode)
  slurm-wlm munge          # a real Slurm on the emulated nodes (scripts/emulated-slurm.sh, ctest -L slurm)
  dataset-fashion-mnist    # the real dataset (/usr/share/datasets/fashion-mnist)
  clang libclang-rt-dev    # fuzzing: libFuzzer + ASan/UBSan runtimes for scripts/fuzz.sh
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

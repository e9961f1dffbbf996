#!/usr/bin/env bash
# build-here.sh — rebuild the kit's programs on the GPU machine with its own nvcc and CMake, when
# the carried ones cannot run there (its CUDA major version is not the kit's, so libcudart.so.N
# or libcublas.so.N is missing, or its driver is too old for the kit's runtime). Builds from the
# kit's src.tar.xz against the kit's own OpenBLAS and Open MPI (payload lib/) and the headers,
# static GoogleTest and CMake package files of src.tar.xz's devroot/; CUDA, cuBLAS and NCCL are
# the machine's (NCCL where kit/cuda-libs.sh finds it: a toolkit's lib/ or a pip wheel).
#
#   kit/build-here.sh KIT_DIR KIT_ROOT WORK_DIR [TARGET...]   -> WORK_DIR/build/bin/<programs>
#
# TARGETs default to the kit's programs (MANIFEST.txt). Code for the GPU the machine has
# (CMAKE_CUDA_ARCHITECTURES=native; DPSCALE_KIT_CUDA_ARCHS overrides, e.g. 90 on a machine with
# no GPU). Run by run.sh; by hand it needs kit_env (kit/env.sh) first. check-rebuild.sh tries it
# here with this machine's build dependencies hidden. Not yet timed on a GPU machine.
set -euo pipefail
KIT=$1 ROOT=$2 W=$3
shift 3
mkdir -p "$W/src"
tar -xJf "$KIT/src.tar.xz" -C "$W/src"
DEV=$W/src/devroot
ARCH=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x $NVCC ]] || { echo "build-here.sh: no nvcc on this machine" >&2; exit 1; }
command -v cmake >/dev/null || { echo "build-here.sh: no cmake on this machine" >&2; exit 1; }

nccl_dir=$("$KIT/kit/cuda-libs.sh" libnccl.so.2 | awk '{print $2}')
[[ $nccl_dir != - ]] || { echo "build-here.sh: no libnccl.so.2 on this machine" >&2; exit 1; }
nccl_inc=$(dirname "$nccl_dir")/include
[[ -f $nccl_inc/nccl.h ]] || nccl_inc=$(dirname "$NVCC")/../include
# Ask for the CMake version the project needs; `native` (CMake >= 3.24) builds for this GPU only.
archs=native
cmake --version | awk 'NR == 1 {split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 24))}' || archs="80;90"
archs=${DPSCALE_KIT_CUDA_ARCHS:-$archs}

PROGRAMS=${*:-$(sed -n 's/^programs: //p' "$KIT/MANIFEST.txt")}
cmake -S "$W/src/dpscale" -B "$W/build" -DCMAKE_BUILD_TYPE=Release -DDPSCALE_WITH_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  -DDPSCALE_VERSION="$(sed -n 's/^version: //p' "$KIT/MANIFEST.txt")-rebuilt" \
  -DCMAKE_PREFIX_PATH="$DEV" -DDPSCALE_KIT_LIB="$ROOT/lib" \
  -DOpenBLAS_DIR="$DEV/lib/$ARCH/cmake/openblas" -DGTest_DIR="$DEV/lib/$ARCH/cmake/GTest" \
  -Dbenchmark_DIR="$DEV/lib/$ARCH/cmake/benchmark" -Dnlohmann_json_DIR="$DEV/share/cmake/nlohmann_json" \
  -DCLI11_DIR="$DEV/share/cmake/CLI11" \
  -DMPI_SKIP_COMPILER_WRAPPER=ON -DMPI_ASSUME_NO_BUILTIN_MPI=ON -DMPI_C_LIB_NAMES=mpi \
  -DMPI_mpi_LIBRARY="$ROOT/lib/libmpi.so.40" -DMPI_C_HEADER_DIR="$DEV/include/mpi" \
  -DMPIEXEC_EXECUTABLE="$ROOT/bin/mpirun" \
  -DZLIB_INCLUDE_DIR="$DEV/include" -DZLIB_LIBRARY="$ROOT/lib/libz.so.1" \
  -DNCCL_INCLUDE_DIR="$nccl_inc" -DNCCL_LIBRARY="$nccl_dir/libnccl.so.2"
# shellcheck disable=SC2086  # a list of target names
cmake --build "$W/build" -j "$(nproc)" --target $PROGRAMS

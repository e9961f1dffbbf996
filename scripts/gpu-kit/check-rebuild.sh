#!/usr/bin/env bash
# check-rebuild.sh — does the kit's fallback rebuild (build-here.sh) work on a machine without
# Debian's -dev packages? Run by hand, as root, on this machine: in a private mount namespace it
# hides this machine's MPI, OpenBLAS, GoogleTest, Benchmark, nlohmann-json, CLI11 and zlib
# headers, libraries, CMake files and wrappers, rebuilds TARGETs from KIT_DIR, and runs a
# two-rank MPI job and the NCCL tests (which skip here) with the result. Not part of CI: it
# needs root and takes minutes.
#
#   sudo scripts/gpu-kit/check-rebuild.sh KIT_DIR [TARGET...]     (default: train_dp_naive test_dp_nccl)
set -u
if [[ ${1:-} != --inside ]]; then
  (( $# >= 1 )) || { echo "usage: check-rebuild.sh KIT_DIR [TARGET...]" >&2; exit 2; }
  exec unshare -m --propagation private "$0" --inside "$@"
fi
shift
KIT=$(cd "$1" && pwd); shift
TARGETS=("${@:-train_dp_naive test_dp_nccl}")

A=/usr/lib/x86_64-linux-gnu
for d in /usr/include/nlohmann /usr/include/CLI /usr/include/gtest /usr/include/gmock /usr/include/benchmark \
         $A/openmpi $A/cmake /usr/share/cmake /usr/include/x86_64-linux-gnu/openblas-pthread $A/openblas-pthread \
         $A/pmix2 /etc/openmpi /usr/share/openmpi; do
  [[ -d $d ]] && mount -t tmpfs tmpfs "$d"
done
for f in $A/libgtest* $A/libgmock* $A/libbenchmark* $A/libmpi* $A/libopen-* $A/libopenblas* $A/libpmix* \
         $A/libevent* $A/libhwloc* $A/libz.so $A/libz.a /usr/include/zlib.h /usr/include/zconf.h \
         /usr/bin/mpicc* /usr/bin/mpicxx* /usr/bin/mpirun* /usr/bin/mpiexec* /usr/bin/orterun /usr/bin/opal_wrapper; do
  [[ -e $f ]] && mount --bind /dev/null "$f"
done

W=$(mktemp -d "${TMPDIR:-/tmp}/dpscale-check-rebuild.XXXXXX")
mkdir -p "$W/root"
tar -xJf "$KIT/payload.tar.xz" -C "$W/root"
# shellcheck source=env.sh
. "$KIT/kit/env.sh"
kit_env "$W/root"
# shellcheck disable=SC2068  # the targets, one word each
DPSCALE_KIT_CUDA_ARCHS=${DPSCALE_KIT_CUDA_ARCHS:-90} "$KIT/kit/build-here.sh" "$KIT" "$W/root" "$W" ${TARGETS[@]} ||
  { echo "check-rebuild.sh: the rebuild failed ($W)" >&2; exit 1; }
B=$W/build/bin
ldd "$B/train_dp_naive" | grep -E "libmpi|libopenblas|libnccl|libcudart|not found"
"$W/root/bin/mpirun" --allow-run-as-root --oversubscribe -np 2 "$B/train_dp_naive" --backend cpu --model 784,16,10 \
  --samples 256 --batch-size 64 --epochs 1 --quiet | grep -c '^RESULTS_JSON:' |
  awk '{print "check-rebuild.sh: RESULTS_JSON lines from a 2-rank job:", $1; exit $1 != 1}' || exit 1
[[ -x $B/test_dp_nccl ]] && "$B/test_dp_nccl" | tail -1
echo "check-rebuild.sh: ok ($W)"

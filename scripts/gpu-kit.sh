#!/usr/bin/env bash
# gpu-kit.sh — make a self-contained kit that runs dpscale's CUDA checks on a bare GPU machine:
# one with the CUDA toolkit, NCCL and Python but none of Debian's packages and no network.
#
#   scripts/gpu-kit.sh DIR [BUILD_DIR [BASE_BUILD_DIR]]   (BUILD_DIR: a CUDA-enabled build, default build)
#   scripts/gpu-kit.sh --programs   the programs a kit carries from BUILD_DIR/bin, one a line
#   DPSCALE_KIT_XZ=-1 scripts/gpu-kit.sh ...  faster, larger (xz level; default -6)
#   BASE_BUILD_DIR: a build of an earlier revision (scripts/gpu-session.sh prepare makes one): its
#   four trainers ride along as base/, and run.sh times them against this build's, side by side
#   then, on the GPU machine:  DIR/run.sh OUTDIR          (here, on the CPU: DIR/run.sh OUTDIR --self-test)
#
# What goes in (docs/gpu/README.md says why binaries rather than sources):
#   payload.tar.xz  bin/  the trainers, dpscale, the bench programs and the GPU-gated test
#                         programs of BUILD_DIR, stripped; Open MPI's mpirun/orterun, orted
#                   base/bin/  BASE_BUILD_DIR's four trainers, when given
#                   lib/  every shared library they need except glibc's and CUDA's own (cudart,
#                         cuBLAS, NCCL: found on the GPU machine, never carried): OpenBLAS, Open
#                         MPI + PMIx + hwloc + libevent, gfortran, Google Benchmark, ...
#                   lib/openmpi, lib/pmix  the MCA plugins (not those needing UCX, libfabric,
#                         verbs or PSM: one node needs shared memory and TCP only)
#                   share/, etc/  Open MPI's and PMIx's help texts and parameter files
#                   compat/  this machine's libstdc++ and libgcc_s, used only where the GPU
#                         machine's libstdc++ is older than the binaries need
#   src.tar.xz      the source tree and the headers/static libraries it builds against, so
#                   run.sh can rebuild with the GPU machine's own nvcc when its CUDA major
#                   version is not this build's (gpu-kit/build-here.sh)
#   run.sh, kit/    the runner and its helpers (scripts/gpu-kit/)
#   MANIFEST.txt    what this kit was built from and what it needs of the GPU machine
#
# Exit status: 0 made; 2 bad arguments or a build that lacks a program (one line on stderr).
set -euo pipefail

die() { echo "gpu-kit.sh: $*" >&2; exit 2; }

# The programs the kit runs. The test programs hold the GPU-gated tests (run.sh filters them).
# `gpu-kit.sh --programs` prints them, one a line: what gpu-session.sh builds and test_kit.py
# checks, so that a program the kit gains is built and checked without a second list to edit.
TRAINERS=(train_single_gpu train_dp_naive train_dp_interleaved train_ddp_bucketed)
PROGRAMS=("${TRAINERS[@]}" dpscale bench_gemm bench_allreduce bench_kernels bench_step bench_dp_loop
          test_models test_dp_nccl test_dp_nccl_multi test_nccl_order test_dp_exactness test_single_gpu)
if [[ ${1:-} == --programs ]]; then
  (( $# == 1 )) || die "usage: scripts/gpu-kit.sh --programs"
  printf '%s\n' "${PROGRAMS[@]}"
  exit 0
fi

(( $# >= 1 && $# <= 3 )) || die "usage: scripts/gpu-kit.sh DIR [BUILD_DIR [BASE_BUILD_DIR]]"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$1
BUILD=$(cd "${2:-$ROOT/build}" 2>/dev/null && pwd) || die "no build directory '${2:-$ROOT/build}': build first (make build)"
BIN=$BUILD/bin
[[ -d $BIN ]] || die "no $BIN: build first"
BASE=""
if (( $# == 3 )); then BASE=$(cd "$3" 2>/dev/null && pwd) || die "no base build directory '$3'"; fi

for p in "${PROGRAMS[@]}"; do [[ -x $BIN/$p ]] || die "$BIN/$p is not built (cmake --build $BUILD)"; done
if [[ -n $BASE ]]; then
  for p in "${TRAINERS[@]}"; do [[ -x $BASE/bin/$p ]] || die "$BASE/bin/$p is not built (the base build needs the four trainers)"; done
fi

# DIR: new, empty, or an earlier kit (it has MANIFEST.txt) that is replaced whole.
if [[ -e $DIR ]]; then
  [[ -d $DIR ]] || die "$DIR exists and is not a directory"
  if [[ -n $(ls -A "$DIR") && ! -f $DIR/MANIFEST.txt ]]; then die "$DIR is not empty and not a kit: refusing to overwrite"; fi
  rm -rf "${DIR:?}"/* "$DIR"/.[!.]* 2>/dev/null || true
fi
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/dpscale-kit-stage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
P=$STAGE/payload
mkdir -p "$P"/{bin,lib/openmpi,lib/pmix,share/openmpi,share/pmix,etc,compat}
[[ -n $BASE ]] && mkdir -p "$P/base/bin"

# --- programs ---------------------------------------------------------------------------------
for p in "${PROGRAMS[@]}"; do cp "$BIN/$p" "$P/bin/"; done
if [[ -n $BASE ]]; then for p in "${TRAINERS[@]}"; do cp "$BASE/bin/$p" "$P/base/bin/"; done; fi
MPIRUN=$(readlink -f "$(command -v mpirun)") || die "no mpirun on this machine (scripts/install-deps.sh)"
MPIBIN=$(dirname "$MPIRUN")
cp "$MPIRUN" "$P/bin/orterun"
ln -s orterun "$P/bin/mpirun"
cp "$MPIBIN/orted" "$P/bin/"
# Open MPI's plugins, from its own idea of where they are.
PKGLIBDIR=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
PKGDATADIR=$(ompi_info --path pkgdatadir --parsable | sed -n 's/^path:pkgdatadir://p')
SYSCONFDIR=$(ompi_info --path sysconfdir --parsable | sed -n 's/^path:sysconfdir://p')
[[ -d $PKGLIBDIR ]] || die "cannot find Open MPI's plugin directory (ompi_info --path pkglibdir)"

# A plugin is left out when it needs a network stack one node does not use (and the kit would
# have to carry): UCX, libfabric, verbs, PSM, Java; and OpenSHMEM's (liboshmem): MPI only here.
# (grep without -q: -q would stop reading early, and ldd's SIGPIPE fail the pipeline.)
skip_re='libuc[pmst]|libfabric|libibverbs|librdmacm|libpsm|libjvm|libnl-|liboshmem'
for f in "$PKGLIBDIR"/mca_*.so; do
  if ldd "$f" 2>/dev/null | grep -E "$skip_re" > /dev/null; then continue; fi
  cp "$f" "$P/lib/openmpi/"
done
cp -r "$PKGDATADIR"/. "$P/share/openmpi/"
cp "$SYSCONFDIR"/openmpi-mca-params.conf "$P/etc/" 2>/dev/null || : > "$P/etc/openmpi-mca-params.conf"
# Debian's params file turns off some components by name; they are not carried anyway.
# PMIx (external to Open MPI on Debian): its few plugins and help texts.
PMIX_LIB=$(ldd "$MPIRUN" "$PKGLIBDIR"/mca_pmix_*.so 2>/dev/null | awk '/libpmix\.so/ && !seen++ {print $3}')
if [[ -n $PMIX_LIB ]]; then
  PMIX_REAL=$(readlink -f "$PMIX_LIB")
  PMIX_PREFIX=$(dirname "$(dirname "$PMIX_REAL")")  # .../pmix2/lib/libpmix.so.2.x -> .../pmix2
  [[ -d $PMIX_PREFIX/lib/pmix ]] && cp "$PMIX_PREFIX"/lib/pmix/*.so "$P/lib/pmix/"
  [[ -d $PMIX_PREFIX/share/pmix ]] && cp -r "$PMIX_PREFIX"/share/pmix/. "$P/share/pmix/"
fi

# --- shared libraries -------------------------------------------------------------------------
# Everything the programs and plugins load, found by ldd here, except: the C library family
# (the GPU machine's own must be used), CUDA's libraries (found there: gpu-kit/cuda-libs.sh),
# and libstdc++/libgcc_s (to compat/, used only if the GPU machine's are too old).
is_system() { [[ $1 =~ ^(libc|libm|libdl|librt|libpthread|libresolv|libutil|ld-linux-x86-64|linux-vdso)\.so ]]; }
is_cuda() { [[ $1 =~ ^lib(cudart|cublas|cublasLt|nccl|cuda|nvidia-ml)\.so ]]; }
is_compat() { [[ $1 =~ ^lib(stdc\+\+|gcc_s)\.so ]]; }
copy_deps() {
  ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
    if is_system "$name" || is_cuda "$name"; then continue; fi
    local dest=$P/lib
    is_compat "$name" && dest=$P/compat
    [[ -e $dest/$name ]] || cp -L "$path" "$dest/$name"
  done
}
copy_deps "$P"/bin/* "$P"/lib/openmpi/*.so "$P"/lib/pmix/*.so
[[ -n $BASE ]] && copy_deps "$P"/base/bin/*
# Twice more: a carried library's own needs that ldd of the programs did not list (dlopened
# plugins' dependencies are listed above already; this catches libraries of libraries).
copy_deps "$P"/lib/*.so*
copy_deps "$P"/lib/*.so*
strip --strip-unneeded "$P"/bin/* 2>/dev/null || true
[[ -n $BASE ]] && { strip --strip-unneeded "$P"/base/bin/* 2>/dev/null || true; }

# --- the highest glibc and libstdc++ symbol versions anything carried needs -------------------
max_version() {  # max_version PREFIX FILES... -> e.g. 2.34 for GLIBC_
  local prefix=$1; shift
  { objdump -T "$@" 2>/dev/null | grep -o "${prefix}[0-9][0-9.]*" | sed "s/^${prefix}//" | sort -V | tail -1; } || true
}
GLIBC_MAX=$(max_version GLIBC_ "$P"/bin/* "$P"/lib/*.so* "$P"/lib/openmpi/*.so "$P"/lib/pmix/*.so)
GLIBCXX_MAX=$(max_version GLIBCXX_ "$P"/bin/* "$P"/lib/*.so* "$P"/lib/openmpi/*.so)
CUDA_NEEDS=$(objdump -p "$P"/bin/* 2>/dev/null | awk '/NEEDED/ && $2 ~ /^lib(cudart|cublas|cublasLt|nccl)\.so/ {print $2}' | sort -u | tr '\n' ' ')

# --- sources and build dependencies, for a rebuild with the GPU machine's nvcc ----------------
S=$STAGE/src
mkdir -p "$S/dpscale" "$S/devroot/include" "$S/devroot/lib"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | grep -zv '^docs/figures/' |
  xargs -0 tar -cf - --ignore-failed-read 2>/dev/null) | tar -xf - -C "$S/dpscale"
"$ROOT/scripts/gpu-kit/devroot.sh" "$S/devroot"

# --- the kit ----------------------------------------------------------------------------------
# xz -6 by default (the payload: ~10 MB); DPSCALE_KIT_XZ=-1 is 4x faster and ~60% larger (the
# CTest uses it: the size limit holds either way).
export XZ_OPT="${DPSCALE_KIT_XZ:--6} -T0"
tar -cJf "$DIR/payload.tar.xz" -C "$P" .
tar -cJf "$DIR/src.tar.xz" -C "$S" .
cp "$ROOT/scripts/gpu-kit/run.sh" "$DIR/run.sh"
mkdir -p "$DIR/kit"
cp "$ROOT"/scripts/gpu-kit/{env.sh,cuda-libs.sh,system.sh,steps.sh,ab.sh,summary.py,build-here.sh} "$DIR/kit/"
cp "$ROOT/scripts/gpu-session.sh" "$DIR/kit/"
chmod +x "$DIR/run.sh" "$DIR"/kit/*.sh

cuda_build=""
if [[ -n $CUDA_NEEDS ]]; then
  cuda_build=$(grep -ho 'CMAKE_CUDA_COMPILER_VERSION "[0-9.]*"' "$BUILD"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null |
    grep -o '[0-9][0-9.]*' | head -1 || true)
  cuda_build=${cuda_build:-unknown}
fi
{
  echo "# dpscale GPU kit — see run.sh (how to run) and docs/gpu/README.md (what it does)"
  echo "version: $(cd "$ROOT" && git describe --always --dirty --tags 2>/dev/null || echo unknown)"
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(getconf GNU_LIBC_VERSION | awk '{print $2}')"
  echo "build: ${BUILD#"$ROOT"/}"  # relative to the sources when inside them: the manifest travels
  echo "cuda_build: ${cuda_build:-none (built without the CUDA backend)}"
  echo "cuda_needs: ${CUDA_NEEDS:-none}"
  echo "glibc_needs: ${GLIBC_MAX:-unknown}"
  echo "glibcxx_needs: ${GLIBCXX_MAX:-unknown}"
  echo "mpi: $("$MPIRUN" --version 2>/dev/null | head -1)"
  echo "programs: ${PROGRAMS[*]}"
  if [[ -n $BASE ]]; then
    base_version=$(sed -n 's/^DPSCALE_VERSION:STRING=//p' "$BASE/CMakeCache.txt" 2>/dev/null | head -1)
    echo "base: ${base_version:-$(basename "$BASE") (no DPSCALE_VERSION)}"
  else
    echo "base: none"
  fi
  echo "files:"
  (cd "$DIR" && find . -type f -printf '  %p %s\n' | sort)
  echo "payload:"
  (cd "$P" && find . -type f -printf '  %p %s\n' | sort)
} > "$DIR/MANIFEST.txt"
echo "gpu-kit.sh: $DIR: $(du -sb "$DIR" | awk '{printf "%.1f MiB", $1 / 1048576}') (limit 64 MiB); then: $DIR/run.sh OUTDIR" >&2

#!/usr/bin/env bash
# cuda-libs.sh — where this machine keeps the CUDA libraries the kit's programs need (the kit
# never carries them: they must match the machine's driver). For each NAME (a soname such as
# libcublas.so.13 or libnccl.so.2) prints "NAME DIR", or "NAME -" when it is nowhere.
#
#   kit/cuda-libs.sh libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2
#
# Where it looks, first hit wins: $DPSCALE_CUDA_LIBS (colon-separated dirs, to force a choice),
# the dynamic linker's cache (ldconfig -p), $CUDA_HOME / $CUDA_PATH and /usr/local/cuda*
# (lib64, lib: NCCL sits in lib/ on some installs), then the pip wheels of every python3 on
# PATH (nvidia-nccl-cu13 puts libnccl.so.2 in site-packages/nvidia/nccl/lib, nvidia-cublas in
# nvidia/cu13/lib or nvidia/cublas/lib) — on machines with PyTorch that is often the only NCCL.
set -uo pipefail

dirs=()
IFS=: read -r -a forced <<< "${DPSCALE_CUDA_LIBS:-}"
dirs+=("${forced[@]}")
for base in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-*; do
  [[ -n $base && -d $base ]] && dirs+=("$base/lib64" "$base/lib" "$base/targets/x86_64-linux/lib")
done
for py in python3 /usr/bin/python3 /opt/*/.venv/bin/python3; do
  command -v "$py" >/dev/null 2>&1 || continue
  while read -r sp; do
    [[ -d $sp/nvidia ]] || continue
    for d in "$sp"/nvidia/*/lib; do dirs+=("$d"); done
  done < <("$py" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null)
done

cache=$(ldconfig -p 2>/dev/null || true)
for name in "$@"; do
  hit=$(awk -v n="$name" '$1 == n && $NF ~ /^\// {print $NF; exit}' <<< "$cache")
  found=""
  for d in "${forced[@]}"; do [[ -n $d && -e $d/$name ]] && { found=$d; break; }; done
  [[ -z $found && -n $hit ]] && found=$(dirname "$hit")
  if [[ -z $found ]]; then
    for d in "${dirs[@]}"; do [[ -e $d/$name ]] && { found=$d; break; }; done
  fi
  echo "$name ${found:--}"
done

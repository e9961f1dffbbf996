#!/bin/bash
# run.sh — what the per-step finite check and the DP loop cost on a GPU: large at
# TF32, 4 epochs, single / naive / bucketed at K = 1, with --finite-check-every 1 (the default) and
# 0, two rounds interleaved; prints each run's average epoch. Runs on the GPU machine from a kit
# (scripts/gpu-kit.sh KIT BUILD), as the kit's run.sh does, without its steps:
#
#   experiments/gpu-finite-check/run.sh KIT      # results: experiments/gpu-finite-check/data/h200-finite-check.txt
set -u
KIT=$(cd "${1:?KIT dir}" && pwd)
ROOT=$(mktemp -d); tar -xJf $KIT/payload.tar.xz -C $ROOT
. $KIT/kit/env.sh
dirs=""
while read -r name dir; do [[ $dir == - ]] && continue; [[ ":$dirs:" == *":$dir:"* ]] || dirs=${dirs:+$dirs:}$dir; done < <($KIT/kit/cuda-libs.sh $(sed -n 's/^cuda_needs: //p' $KIT/MANIFEST.txt))
kit_env $ROOT "$dirs" ""
B=$ROOT/bin
A="--backend cuda --model large --samples 32768 --batch-size 1024 --epochs 4 --tf32 --quiet"
ep() { python3 -c "import sys,json; l=[x for x in sys.stdin.read().splitlines() if x.startswith('RESULTS_JSON: ')]; r=json.loads(l[-1][14:]); print('%.4f' % r['avg_epoch_s'])"; }
for round in 1 2; do
for extra in "" "--finite-check-every 0"; do
  echo "r$round single [$extra] $($B/train_single_gpu $A $extra 2>/dev/null | ep)"
  echo "r$round naive  [$extra] $($B/mpirun --allow-run-as-root -np 1 $B/train_dp_naive $A $extra 2>/dev/null | ep)"
  echo "r$round bucket [$extra] $($B/mpirun --allow-run-as-root -np 1 $B/train_ddp_bucketed $A $extra 2>/dev/null | ep)"
done
done

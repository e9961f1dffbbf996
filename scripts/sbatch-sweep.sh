#!/usr/bin/env bash
# sbatch-sweep.sh — one dpscale sweep as one Slurm batch job: each run a job step of this
# allocation (dpscale sweep picks --launcher srun inside it), results next to the job's id, the
# report printed at the end (in the job's output file). Builds nothing: the programs must already
# be built on a file system every node sees.
#
#   sbatch -N 2 --exclusive [--gpus-per-node=G] scripts/sbatch-sweep.sh CONFIG [SWEEP ARGS...]
#
# --exclusive (or --ntasks-per-node=R): without it a job gets one CPU per node, and a step of R
# ranks per node does not fit (the sweep refuses such points before running any, naming them).
# With GPUs in the allocation each rank gets its own (srun --gpus-per-task=1: Slurm sets a
# CUDA_VISIBLE_DEVICES per rank, and the trainers take device 0 of what each sees).
#
# Environment: DPSCALE_BIN (default: build/bin beside this script's repository),
# DPSCALE_RESULTS (default: results/slurm), DPSCALE_OUT (the results file; default
# $DPSCALE_RESULTS/<config>-job<id>.jsonl; pass the same one with --resume to finish a sweep a
# cancelled job left).
#SBATCH --job-name=dpscale-sweep
#SBATCH --output=dpscale-sweep-%j.out
set -euo pipefail
[[ $# -ge 1 ]] || { echo "sbatch-sweep: usage: sbatch -N 2 --exclusive scripts/sbatch-sweep.sh CONFIG [SWEEP ARGS...]" >&2; exit 2; }
[[ -n ${SLURM_JOB_ID:-} ]] || { echo "sbatch-sweep: not inside a Slurm job: submit it with sbatch" >&2; exit 2; }
config=$1; shift
# sbatch runs a copy of the script from the spool directory: the repository is where it was submitted.
repo=${SLURM_SUBMIT_DIR:-$PWD}
cd "$repo"
bin=${DPSCALE_BIN:-$repo/build/bin}
[[ -x $bin/dpscale ]] || { echo "sbatch-sweep: $bin/dpscale not found: build first (nothing is built here)" >&2; exit 2; }
[[ -f $config ]] || { echo "sbatch-sweep: no config '$config'" >&2; exit 2; }
name=$(basename "$config" .json)
out=${DPSCALE_OUT:-${DPSCALE_RESULTS:-results/slurm}/$name-job$SLURM_JOB_ID.jsonl}
srun_args=()
if [[ -n ${SLURM_GPUS_PER_NODE:-}${SLURM_JOB_GPUS:-}${SLURM_GPUS_ON_NODE:-} ]]; then srun_args=(--srun-args=--gpus-per-task=1); fi
echo "# job $SLURM_JOB_ID on ${SLURM_JOB_NODELIST:-?}: $config -> $out"
rc=0
"$bin/dpscale" sweep "$config" --launcher srun --out "$out" "${srun_args[@]}" "$@" || rc=$?
[[ -f $out ]] && "$bin/dpscale" report "$out"
exit "$rc"

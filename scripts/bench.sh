#!/usr/bin/env bash
# bench.sh — what `make bench` runs. Until the harness lands, a short single-device training.
set -euo pipefail
BUILD=${1:-build}
"$BUILD/bin/train_single_gpu" --model medium --epochs 2 --samples 8192

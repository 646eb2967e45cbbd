#!/usr/bin/env bash
# What a lost task costs a Spark fit: the 16-epoch, 60,000-row sync fit uninterrupted, and with
# one rank killed at 30%, 70% and 95% of its training (resuming from rank 0's checkpoint), and
# at 70% without checkpoints (from epoch 1), in one spark-submit (tests/bench/resume_bench.py
# says what it measures).
# Usage: MASTER='local-cluster[2,1,1024]' tests/bench/resume_bench.sh [resume_bench.py ARGS...]
#        e.g. --quick, --repeats 3, --kills 0.3,0.7,0.95
# The Spark line, Python, master and build: tests/bench/spark_submit_bench.sh's variables. The
# data is written once into out/resume (--work).
set -euo pipefail
exec "$(dirname "$0")/spark_submit_bench.sh" resume "$@"

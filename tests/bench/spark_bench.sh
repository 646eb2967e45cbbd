#!/usr/bin/env bash
# The Spark benchmarks (man/sparktorch-spark.7, PERFORMANCE), on a real Spark:
#   1. spark_fit_bench.py: the 3-epoch, 60,000-row, 2-partition sync fit of the MLP, in phases
#      (start-up and checks, ranks starting, rows into the binary, training, model back), then
#      the test accuracy and prediction rows/s;
#   2. spark_rows_bench.py: rows/s from a DataFrame into the binary (training) and back with
#      predictions, for a vector column (sparse as VectorAssembler makes it, and dense) and for
#      numeric columns, on each path.
# Usage: tests/bench/spark_bench.sh [BUILD_DIR]   (default build)
#   SPARK_HOME  a Spark 2.4.4 or later (default: ../shared/spark's, installed by its install.sh)
#   MASTER      default local[2]          PARTS  12 (default), 1 or 2
#   FIT_ARGS    more spark_fit_bench.py arguments, e.g. "--fits 3 --read-parquet false"
# Writes the data once into out/spark (examples/spark_fashion_mnist.py prepare). Reports
# numbers; fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
cd "$REPO"
if [[ -z ${SPARK_HOME:-} ]]; then
  [[ -x ../shared/spark/install.sh ]] || { echo "spark_bench: set SPARK_HOME" >&2; exit 2; }
  SPARK_HOME=$(../shared/spark/install.sh)
fi
export SPARK_HOME PYSPARK_PYTHON=/usr/bin/python3 PYSPARK_DRIVER_PYTHON=/usr/bin/python3
master=${MASTER:-local[2]}
submit() { "$SPARK_HOME/bin/spark-submit" --master "$master" --driver-memory 2g "$@"; }
python=/usr/bin/python3
step() { echo "== $*" >&2; }
source examples/fashion_mnist_csv.sh
if [[ ! -d out/spark/fashion_test.parquet || ! -d out/spark/fashion_train.csv ]]; then
  step "writing out/spark/fashion_{train,test}.{parquet,csv}"
  submit examples/spark_fashion_mnist.py prepare --format parquet --out out/spark 2>/dev/null
  submit examples/spark_fashion_mnist.py prepare --format csv --out out/spark 2>/dev/null
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [[ ${PARTS:-12} == *1* ]]; then
  step "spark_fit_bench.py on $master"
  submit tests/bench/spark_fit_bench.py --train out/spark/fashion_train.parquet \
    --test out/spark/fashion_test.parquet --binary "$BUILD/sparktorch" --stderr "$log" \
    ${FIT_ARGS:-} 2>"$log"
fi
if [[ ${PARTS:-12} == *2* && -f tests/bench/spark_rows_bench.py ]]; then
  step "spark_rows_bench.py on $master"
  submit tests/bench/spark_rows_bench.py --data out/spark --binary "$BUILD/sparktorch" 2>"$log"
fi

#!/usr/bin/env bash
# From a fresh clone to a trained Fashion-MNIST classifier: installs the Debian packages (as
# root) and, for the Spark job, the Python environments with stock Spark from PyPI as their lock
# files pin them (examples/install_python.sh), then builds sparktorch (with those there, the
# build also makes sparktorch-spark.jar, the Spark layer's row encoder, and torch2/sparktorch),
# writes the data set as CSV into out/, trains the MLP of examples/fashion_mnist_mlp.json for 10
# epochs from stdin with a one-cycle learning-rate schedule, predicts the test set, and prints
# the test accuracy and the throughput. Then the product's main job, on Spark: writes the data
# as Parquet, and fits the SparkTorch ML stage (2 tasks, sync, 3 epochs) on local[2], saves and
# loads the fitted Pipeline, transforms the test set, and prints the fit's and the transform's
# time and the test accuracy. Runs from any directory.
#   SPARK      0: skip the Spark job (and the Python environments)    SPARK_LINE  4 (default) or 3.5
#   BUILD_DIR  build folder (default: build/)    THREADS  passed to --threads when set
#   EPOCHS     training epochs (default: 10)     PYTHON   interpreter for the data script
#   SEED       --seed (default: 0)               SETUP    0: skip installing and building
#   LR         the schedule's peak rate (default: 0.003)
#   SCHEDULE   --lr-schedule (default: one_cycle; none: LR throughout)
#   SPEC       model spec (default: examples/fashion_mnist_mlp.json; the CNN is
#              examples/fashion_mnist_cnn.json)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
sparktorch=$build_dir/sparktorch
epochs=${EPOCHS:-10}
seed=${SEED:-0}
recipe=(--lr "${LR:-0.003}" --lr-schedule "${SCHEDULE:-one_cycle}")
threads=()
[[ -n ${THREADS:-} ]] && threads=(--threads "$THREADS")
python=${PYTHON:-python3}
spec=${SPEC:-examples/fashion_mnist_mlp.json}
name=$(basename "$spec" .json)
model=out/$name.pt

step() { echo "== $*" >&2; }
now() { date +%s.%N; }

pyenv=${SPARKTORCH_PYENV:-/opt/sparktorch-python}
if [[ ${SETUP:-1} != 0 ]]; then
  step "installing Debian packages (examples/install_deps.sh)"
  examples/install_deps.sh

  # Before the build: CMake builds the jar against Spark's jars and torch2/sparktorch against
  # PyTorch 2.x only when they are there.
  if [[ ${SPARK:-1} != 0 ]]; then
    step "installing PyTorch 2.x and stock Spark 3.5 and 4 from PyPI, as examples/python-locks/ pins them (examples/install_python.sh)"
    pyenv=$(examples/install_python.sh)
  fi

  step "building sparktorch (examples/build.sh)"
  CMAKE_ARGS="${CMAKE_ARGS:-} -DSPARKTORCH_PYENV=$pyenv" examples/build.sh
fi

source examples/fashion_mnist_csv.sh
train_rows=$(wc -l < out/fashion_train.csv)
test_rows=$(wc -l < out/fashion_test.csv)

step "training $model for $epochs epochs (${recipe[*]}, seed $seed)"
start=$(now)
"$sparktorch" train --model "$spec" --epochs "$epochs" "${recipe[@]}" --seed "$seed" "${threads[@]}" \
  --output "$model" < out/fashion_train.csv > "out/$name.summary"
train_seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')

step "predicting out/fashion_test.csv"
start=$(now)
"$sparktorch" predict --model "$model" "${threads[@]}" --input out/fashion_test.csv \
  > out/fashion_test.predictions
predict_seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')

predicted=$(wc -l < out/fashion_test.predictions)
if ((predicted != test_rows)); then
  echo "quickstart: expected $test_rows predictions, got $predicted" >&2
  exit 1
fi
correct=$(cut -d, -f1 out/fashion_test.csv | paste -d' ' - out/fashion_test.predictions |
  awk '$1 + 0 == $2 + 0 { n++ } END { print n + 0 }')

awk -v rows="$train_rows" -v epochs="$epochs" -v ts="$train_seconds" \
  -v trows="$test_rows" -v ps="$predict_seconds" -v correct="$correct" -v model="$model" -v spec="$spec" 'BEGIN {
  print ""
  print "Fashion-MNIST, " spec
  printf "  model          %s\n", model
  printf "  training       %d rows x %d epochs in %.1f s: %.0f rows/s\n", rows, epochs, ts, rows * epochs / ts
  printf "  prediction     %d rows in %.2f s: %.0f rows/s\n", trows, ps, trows / ps
  printf "  test accuracy  %.2f%% (%d of %d)\n", 100 * correct / trows, correct, trows
}'

[[ ${SPARK:-1} != 0 ]] || exit 0
[[ ${SETUP:-1} != 0 ]] || pyenv=$(examples/install_python.sh)
spark_env=$pyenv/spark-${SPARK_LINE:-4}
submit() {
  PYSPARK_PYTHON=$spark_env/bin/python PYSPARK_DRIVER_PYTHON=$spark_env/bin/python \
    "$spark_env/spark-home/bin/spark-submit" --master "local[2]" "$@" 2>>out/spark.log || {
    echo "quickstart: spark-submit failed; the end of out/spark.log:" >&2
    tail -n 20 out/spark.log >&2
    return 1
  }
}
mkdir -p out/spark
: >out/spark.log
step "writing out/spark/fashion_{train,test}.parquet with Spark (its log: out/spark.log)"
submit examples/spark_fashion_mnist.py prepare --format parquet --out out/spark
step "the Spark ML stage: fit (2 tasks, sync, 3 epochs), save, load, transform on local[2]"
submit examples/spark_fashion_mnist.py pipeline --data out/spark --mode sync --epochs 3 \
  --partitions 2 --binary "$(realpath "$sparktorch")"

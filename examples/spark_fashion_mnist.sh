#!/usr/bin/env bash
# Fashion-MNIST on Spark, end to end: prepare the data (Parquet with a features vector, or CSV
# with numeric columns), train the MLP of examples/fashion_mnist_mlp.json with
# spark-scripts/train.py in each mode (sync: a barrier stage whose tasks all-reduce; hogwild: a
# parameter server on the driver), predict the test set with spark-scripts/predict.py and
# print its accuracy; then the Spark ML way (examples/spark_fashion_mnist.py pipeline): fit a
# Pipeline, save it, load it back, transform, and attach the .pt for inference only.
#
# Needs Spark 3.5 or 4.x: SPARK_SUBMIT, else $SPARK_HOME/bin/spark-submit, else the stock Spark
# of the line SPARK_LINE (4, the default, or 3.5) that examples/install_python.sh installs from
# PyPI (it runs when that Spark is missing). The suite runs the same steps against both lines
# (ctest -L spark-real). Knobs:
#   MASTER      Spark master (default local[2]). With local[N] or local-cluster[...] (executors
#               on this machine) the tasks run the binary of build/; otherwise the bundle
#               (cmake --build build --target bundle) is shipped with --archives ...#sparktorch.
#   FORMAT      parquet (default) or csv        MODES  "sync hogwild" (default)
#   EPOCHS      3 (default)                     PARTITIONS  2 (default): tasks (ranks, workers)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

example=spark_fashion_mnist
sparktorch=${BUILD_DIR:-build}/sparktorch
source examples/common.sh

python_env=
if [[ -n ${SPARK_SUBMIT:-} ]]; then
  submit=$SPARK_SUBMIT
elif [[ -n ${SPARK_HOME:-} ]]; then
  submit=$SPARK_HOME/bin/spark-submit
else
  python_env=$(examples/install_python.sh)/spark-${SPARK_LINE:-4}
  submit=$python_env/spark-home/bin/spark-submit
fi
# PySpark's workers and driver: that Spark's venv (numpy, pyspark), else python3.
default_python=${python_env:+$python_env/bin/python}
export PYSPARK_PYTHON=${PYSPARK_PYTHON:-${default_python:-python3}}
export PYSPARK_DRIVER_PYTHON=${PYSPARK_DRIVER_PYTHON:-$PYSPARK_PYTHON}
master=${MASTER:-local[2]}
format=${FORMAT:-parquet}
epochs=${EPOCHS:-3}
partitions=${PARTITIONS:-2}
command -v "$submit" >/dev/null ||
  die "no $submit: this example needs Spark 3.5 or 4.x (set SPARK_SUBMIT)"
case $format in parquet | csv) ;; *) die "FORMAT must be parquet or csv, not '$format'" ;; esac

ensure_built
source examples/fashion_mnist_csv.sh
mkdir -p out/spark

# The driver runs `sparktorch serve` with this build's binary; the executors run the binary of
# build/ (a local or local-cluster master: the same machine) or of the bundle that --archives
# unpacks.
export SPARKTORCH=$PWD/$sparktorch
if [[ $master == local* ]]; then
  ship=()
  binary=(--binary "$SPARKTORCH")
else
  step "making the bundle (cmake --build ${BUILD_DIR:-build} --target bundle)"
  cmake --build "${BUILD_DIR:-build}" --target bundle
  bundle=$(ls "${BUILD_DIR:-build}"/sparktorch-*-linux-x86_64.tar.gz)
  ship=(--archives "$bundle#sparktorch")
  binary=()
fi
submit() { "$submit" --master "$master" "${ship[@]}" "$@"; }

step "preparing out/spark/fashion_{train,test}.$format"
submit examples/spark_fashion_mnist.py prepare --format "$format" --out out/spark

for mode in ${MODES:-sync hogwild}; do
  step "training with spark-scripts/train.py, mode $mode, $partitions tasks, $epochs epochs"
  submit spark-scripts/train.py --source "out/spark/fashion_train.$format" \
    --torchObj examples/fashion_mnist_mlp.json --labelCol label --mode "$mode" \
    --iters "$epochs" --partitions "$partitions" "${binary[@]}" \
    --output "out/spark/mlp_$mode.pt" --summary "out/spark/mlp_$mode.summary"
  step "predicting the test set with spark-scripts/predict.py (prints the accuracy)"
  submit spark-scripts/predict.py --source "out/spark/fashion_test.$format" \
    --model "out/spark/mlp_$mode.pt" --labelCol label "${binary[@]}" \
    --output "out/spark/predictions_$mode.$format"
  if [[ $format == parquet ]]; then
    step "the same with the Spark ML Pipeline API"
    submit examples/spark_fashion_mnist.py pipeline --data out/spark --mode "$mode" \
      --epochs "$epochs" --partitions "$partitions" "${binary[@]}"
  fi
done

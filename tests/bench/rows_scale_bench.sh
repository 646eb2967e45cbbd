#!/usr/bin/env bash
# How a Spark fit's time and a rank's peak RssAnon grow with the rows: sparktorch (the tasks
# reading Parquet, or the rows through Spark) and TorchDistributor, 60k rows x 10 epochs
# against 600k x 1 (and 6m x 1), in one spark-submit (tests/bench/rows_scale_bench.py says what
# it measures).
# Usage: tests/bench/rows_scale_bench.sh [rows_scale_bench.py ARGS...]   e.g. --quick,
#        --sizes 60k,600k --repeats 3, --sizes 6m --fits ours-files --repeats 1
#   SPARK_LINE        4 (default) or 3.5: the environment of examples/install_python.sh to use
#   SPARKTORCH_PYENV  its folder (default /opt/sparktorch-python)
#   SPARK_HOME  default PYENV/spark-LINE/spark-home;  PYTHON  default PYENV/spark-LINE/bin/python
#   MASTER      default local[2]
#   BUILD       the build folder whose sparktorch, libsparktorch_pmi.so and sparktorch-spark.jar
#               are copied into out/rows_scale/bin and used (default build; without the jar the
#               rows of readParquet=False go to the binary as Spark's decimal text)
# The data is written once into out/rows_scale (--work). Spark's and the tasks' log goes to
# out/rows_scale/stderr-LINE.log, the progress and the table to stdout.
# Reports numbers; fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
line=${SPARK_LINE:-4}
pyenv=${SPARKTORCH_PYENV:-/opt/sparktorch-python}
export SPARK_HOME=${SPARK_HOME:-$pyenv/spark-$line/spark-home}
python=${PYTHON:-$pyenv/spark-$line/bin/python}
for need in "$SPARK_HOME/bin/spark-submit" "$python"; do
  [[ -x $need ]] || {
    echo "rows_scale_bench: no $need (examples/install_python.sh installs it)" >&2
    exit 2
  }
done
# The driver and TorchDistributor's workers run the environment's Python (torch through base's
# .pth); torchrun comes from there too.
export PYSPARK_PYTHON=$python PYSPARK_DRIVER_PYTHON=$python PATH=$(dirname "$python"):$PATH
mkdir -p out/rows_scale/bin
# A copy of the binary, its PMI library and the jar, so that a rebuild while this runs does not
# pull the binary from under a task.
build=${BUILD:-build}
cp "$build/sparktorch" "$build/libsparktorch_pmi.so" out/rows_scale/bin/
[[ -f $build/sparktorch-spark.jar ]] && cp "$build/sparktorch-spark.jar" out/rows_scale/bin/
log=out/rows_scale/stderr-$line.log
echo "rows_scale_bench: Spark $line ($SPARK_HOME), log in $log" >&2
"$SPARK_HOME/bin/spark-submit" --master "${MASTER:-local[2]}" --driver-memory 3g \
  tests/bench/rows_scale_bench.py --binary out/rows_scale/bin/sparktorch "$@" 2>"$log" || {
  status=$?
  echo "rows_scale_bench: failed (exit status $status); the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit "$status"
}

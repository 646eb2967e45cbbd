#!/usr/bin/env bash
# Runs one of tests/bench's spark-submit benchmarks (NAME_bench.py) on the Spark of
# examples/install_python.sh, with a copy of the build's binary; rows_scale_bench.sh and
# resume_bench.sh call it.
# Usage: tests/bench/spark_submit_bench.sh NAME [NAME_bench.py ARGS...]
#   SPARK_LINE        4 (default) or 3.5: the environment of examples/install_python.sh to use
#   SPARKTORCH_PYENV  its folder (default /opt/sparktorch-python)
#   SPARK_HOME  default PYENV/spark-LINE/spark-home;  PYTHON  default PYENV/spark-LINE/bin/python
#   MASTER      default local[2]
#   BUILD       the build folder whose sparktorch, libsparktorch_pmi.so and sparktorch-spark.jar
#               are copied into out/NAME/bin and used (default build)
# Spark's and the tasks' log goes to out/NAME/stderr-LINE.log, the progress and the table to
# stdout. Reports numbers; fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
name=${1:?usage: spark_submit_bench.sh NAME [ARGS...]}
shift
line=${SPARK_LINE:-4}
pyenv=${SPARKTORCH_PYENV:-/opt/sparktorch-python}
export SPARK_HOME=${SPARK_HOME:-$pyenv/spark-$line/spark-home}
python=${PYTHON:-$pyenv/spark-$line/bin/python}
for need in "$SPARK_HOME/bin/spark-submit" "$python"; do
  [[ -x $need ]] || {
    echo "${name}_bench: no $need (examples/install_python.sh installs it)" >&2
    exit 2
  }
done
# The driver and TorchDistributor's workers run the environment's Python (torch through base's
# .pth); torchrun comes from there too.
export PYSPARK_PYTHON=$python PYSPARK_DRIVER_PYTHON=$python PATH=$(dirname "$python"):$PATH
mkdir -p "out/$name/bin"
# A copy of the binary, its PMI library and the jar, so that a rebuild while this runs does not
# pull the binary from under a task.
build=${BUILD:-build}
cp "$build/sparktorch" "$build/libsparktorch_pmi.so" "out/$name/bin/"
[[ -f $build/sparktorch-spark.jar ]] && cp "$build/sparktorch-spark.jar" "out/$name/bin/"
log=out/$name/stderr-$line.log
echo "${name}_bench: Spark $line ($SPARK_HOME), log in $log" >&2
"$SPARK_HOME/bin/spark-submit" --master "${MASTER:-local[2]}" --driver-memory 3g \
  "tests/bench/${name}_bench.py" --binary "out/$name/bin/sparktorch" "$@" 2>"$log" || {
  status=$?
  echo "${name}_bench: failed (exit status $status); the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit "$status"
}

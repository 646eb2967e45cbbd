#!/usr/bin/env bash
# sparktorch against SparkTorch 0.2.0, TorchDistributor and predict_batch_udf on the same data
# and model (tests/bench/peers_bench.py says what it measures), in one spark-submit.
# Usage: tests/bench/peers_bench.sh [peers_bench.py ARGS...]   e.g. --quick, --fit ours,
#        --transform none
#   SPARK_LINE  4 (default) or 3.5: the environment of examples/install_python.sh to use
#   PYENV       its folder (default /opt/sparktorch-python)
#   SPARK_HOME  default PYENV/spark-LINE/spark-home;  PYTHON  default PYENV/spark-LINE/bin/python
#   MASTER      default local[2]
#   BUILD       the build folder whose sparktorch, libsparktorch_pmi.so and sparktorch-spark.jar
#               are copied into out/peers/bin and used (default build)
# The environment reaches the tasks on a local master: OMPI_MCA_mpi_yield_when_idle=1, say, for
# sparktorch's sync ranks. The data is written once into out/peers (--work). Spark's and the tasks' log goes to
# out/peers/stderr-LINE.log (its phases are read from there); the tables go to stdout.
#   CONNECT     1 (default): then the same fits and transform from a Spark Connect client
#               (connect_bench.py), against a Connect server it starts on the same master
# Reports numbers; fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
line=${SPARK_LINE:-4}
pyenv=${PYENV:-/opt/sparktorch-python}
export SPARK_HOME=${SPARK_HOME:-$pyenv/spark-$line/spark-home}
python=${PYTHON:-$pyenv/spark-$line/bin/python}
for need in "$SPARK_HOME/bin/spark-submit" "$python"; do
  [[ -x $need ]] || { echo "peers_bench: no $need (examples/install_python.sh installs it)" >&2; exit 2; }
done
# The driver and every Python worker (SparkTorch's, TorchDistributor's, predict_batch_udf's)
# run the environment's Python, which sees torch and the peers through base's .pth; torchrun
# comes from there too.
export PYSPARK_PYTHON=$python PYSPARK_DRIVER_PYTHON=$python PATH=$(dirname "$python"):$PATH
# One thread per task for every contestant: SparkTorch's workers have no setting of their own.
export OMP_NUM_THREADS=1
mkdir -p out/peers/bin
# A copy of the binary, its PMI library and the jar, so that a rebuild while this runs does not
# pull the binary from under a task.
build=${BUILD:-build}
cp "$build/sparktorch" "$build/libsparktorch_pmi.so" out/peers/bin/
[[ -f $build/sparktorch-spark.jar ]] && cp "$build/sparktorch-spark.jar" out/peers/bin/
log=out/peers/stderr-$line.log
echo "peers_bench: Spark $line ($SPARK_HOME), log in $log" >&2
"$SPARK_HOME/bin/spark-submit" --master "${MASTER:-local[2]}" --driver-memory 3g \
  tests/bench/peers_bench.py --binary out/peers/bin/sparktorch --stderr "$log" "$@" 2>"$log" || {
  status=$?
  echo "peers_bench: failed (exit status $status); the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit "$status"
}

# The fits and the transform again from a Spark Connect client (tests/bench/connect_bench.py),
# against a Connect server on the same master, started here on a free loopback port and
# stopped after it; CONNECT=0 skips it. --quick and the data folder carry over.
[[ ${CONNECT:-1} == 1 ]] || exit 0
work=out/peers
copies=10
for a in "$@"; do
  [[ $a == --quick ]] && work=out/peers/quick
done
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server_log=out/peers/connect-server-$line.log
setsid "$SPARK_HOME/bin/spark-submit" --class org.apache.spark.sql.connect.service.SparkConnectServer \
  --master "${MASTER:-local[2]}" --driver-memory 3g --conf spark.ui.enabled=false \
  --conf spark.connect.grpc.binding.address=127.0.0.1 \
  --conf spark.connect.grpc.binding.port="$port" >"$server_log" 2>&1 &
server=$!
trap 'kill -TERM -- -$server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 180); do
  grep -q "Spark Connect server started" "$server_log" && break
  kill -0 "$server" 2>/dev/null || break
  sleep 1
done
grep -q "Spark Connect server started" "$server_log" || {
  echo "peers_bench: the Spark Connect server did not start; the end of $server_log:" >&2
  tail -n 20 "$server_log" >&2
  exit 1
}
echo
"$python" tests/bench/connect_bench.py --remote "sc://127.0.0.1:$port" \
  --binary out/peers/bin/sparktorch --work "$work" --transform-copies "$copies" \
  --server-log "$server_log"

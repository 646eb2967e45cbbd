#!/usr/bin/env bash
# Spark Connect across simulated hosts: a standalone Spark cluster (spark_lib.sh: its master on
# the driver host, a worker of one core on each of h1 and h2), a Spark Connect server on the
# driver host with that master, and a thin client on h3 (tests/spark_real/connect_job.py
# --phase bundle: SparkSession.builder.remote, no spark-submit, no binary=). Nothing on the
# workers' PATH runs sparktorch: the client's SPARKTORCH_BUNDLE reaches the executors as an
# archive artifact. Checks:
# - a sync fit (the tasks reading the Parquet files themselves) trains every row, serve in
#   task 0, the ranks' MPI over eth0 on h1 and h2, and its transform's predictions are PyTorch
#   2.x's argmax of the fitted model on all 2,000 test rows;
# - the bundle reached the server once and each worker's executor unpacked it;
# - the slot check on a spark:// master (spark.cores.max): partitions=3 fails with one line;
# - the job's secret is in no plan the client sent, nor in any log of the server, the master,
#   the workers or the executors.
# Runs on stock Spark from PyPI, the line given as the argument (4 or 3.5: SPARK_HOME and
# SPARK_PYTHON of examples/install_python.sh's venv of that line); SPARK_DATA holds the Parquet files of spark-real's data fixture; BUILD and
# BUNDLE: the build folder and the bundle its bundle target writes. Skipped (exit 77) without a
# Spark.
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
source "$HERE/../integration/lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
source "$HERE/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=spark_lib.sh
source "$HERE/spark_lib.sh"
[[ -x ${SPARK_HOME:-}/bin/spark-submit ]] ||
  mh_skip "no Spark (SPARK_HOME=${SPARK_HOME:-}: no bin/spark-submit there)"
: "${SPARK_DATA:?set SPARK_DATA to the data folder of spark-real}" "${BUILD:?set BUILD}" "${BUNDLE:?set BUNDLE}"
[[ -f $SPARK_DATA/train.parquet/_SUCCESS || -f $SPARK_DATA/train.parquet ]] ||
  fail "no $SPARK_DATA/train.parquet: run spark-real's data fixture first"
LINE=${1:?usage: connect_hosts.sh 4|3.5}
setup_workdir "multihost_connect.$LINE"

check "cmake --build BUILD --target bundle writes the bundle"
cmake --build "$BUILD" --target bundle >bundle.out 2>&1 || fail "the bundle target failed: $(tail -n 5 bundle.out)"
[[ -f $BUNDLE ]] || fail "no bundle at $BUNDLE"
echo "  ok: $BUNDLE"

mh_setup 3 same
# No sparktorch on the PATH the cluster's processes inherit, none in their environment.
PATH=$(tr ':' '\n' <<<"$PATH" | while read -r dir; do
  [[ -x $dir/sparktorch ]] || printf '%s:' "$dir"
done)
export PATH=${PATH%:}
unset SPARKTORCH_SECRET SPARKTORCH_BUNDLE
export PYSPARK_PYTHON=$SPARK_PYTHON
DRIVER=$(mh_hostname driver)
PORT=15002

spark_cluster

check "a Spark Connect server (Spark $LINE) on $DRIVER:$PORT with master $MASTER_URL"
mh_bg driver "$SPARK_HOME/bin/spark-submit" \
  --class org.apache.spark.sql.connect.service.SparkConnectServer --master "$MASTER_URL" \
  --driver-memory 1g --executor-memory 1g --total-executor-cores 2 \
  --conf "spark.connect.grpc.binding.address=$(mh_addr driver)" \
  --conf "spark.connect.grpc.binding.port=$PORT" --conf spark.ui.enabled=false \
  >server.log 2>&1 </dev/null
SERVER_PID=$BG_PID
for _ in $(seq 180); do
  grep -q "Spark Connect server started" server.log && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 1
done
grep -q "Spark Connect server started" server.log ||
  fail "the Spark Connect server did not start: $(tail -n 20 server.log)"
echo "  ok: $(grep -m1 -o 'Spark Connect server started.*' server.log)"

check "from h3: connect_job.py --phase bundle with SPARKTORCH_BUNDLE and no binary="
rc=0
mh_run h3 env REPO="$REPO" SPARKTORCH_BUNDLE="$BUNDLE" timeout 480 "$SPARK_PYTHON" \
  "$REPO/tests/spark_real/connect_job.py" --remote "sc://$DRIVER:$PORT" --data "$SPARK_DATA" \
  --work "$T" --facts "$T/facts.jsonl" --phase bundle >client.out 2>&1 </dev/null || rc=$?
[[ $rc == 0 ]] || fail "the client exited with status $rc: $(tail -n 20 client.out)"
echo "  ok: the client exited with status 0"

check "the fit trained every row across h1 and h2; the transform is PyTorch's argmax"
grep -E "^sparktorch: job [0-9]+ \(attempt 1 of 2\) on Spark Connect: 2 sync tasks, serve in task 0" client.out ||
  fail "the client did not say how the job runs: $(grep -m3 '^sparktorch' client.out)"
grep -E "^sparktorch: the 2 tasks read their rows from the [0-9]+ Parquet files? themselves \(readParquet\)" client.out ||
  fail "the tasks did not read the Parquet files: $(grep -m3 '^sparktorch' client.out)"
facts() { python3 -c 'import json, sys; f = [json.loads(l) for l in open(sys.argv[1])]; print(eval(sys.argv[2]))' facts.jsonl "$1"; }
assert_eq "12000 1" "$(facts '"%d %d" % (f[0]["rows"], f[0]["attempts"])')" "rows trained, attempts"
assert_cmp "$(facts 'f[0]["accuracy"]')" ">=" 0.7 "test accuracy on 2,000 rows"
assert_eq "2000 2000" "$(facts '"%d %d" % (f[0]["torch_agrees"], f[0]["count"])')" \
  "the transform's predictions equal to PyTorch 2.x's argmax, of the test rows"
assert_ranks_mpi_over_eth0

check "the bundle reached the server once; each worker's executor unpacked it"
shipped=$(grep -oE "^sparktorch: the bundle \S+ reached the Spark Connect server as the archive artifact sparktorch-[0-9a-f]{16}" client.out || true)
[[ -n $shipped ]] || fail "the client did not say it shipped the bundle: $(grep -m3 '^sparktorch' client.out)"
assert_eq 1 "$(grep -c 'reached the Spark Connect server' client.out)" "bundle shipments in the session"
digest=${shipped##* }
for host in h1 h2; do
  found=$(find "worker.$host" -path "*/$digest/sparktorch" | wc -l)
  assert_eq 1 "$found" "unpacked $digest/sparktorch under worker.$host"
done

check "the slot check on $MASTER_URL: partitions=3 fails at once with one line"
assert_eq "OptionError: partitions=3, but a barrier stage can get 2 slots on $MASTER_URL: every task of a barrier stage must run at once; use partitions=2 or fewer" \
  "$(facts '": ".join(f[0]["too_many"])')" "the error"

check "the job's secret: in no plan the client sent and in no log"
secrets=$(facts '" ".join(f[-1]["secrets"])')
[[ -n $secrets ]] || fail "the sparktorch processes had no SPARKTORCH_SECRET"
assert_eq "False" "$(facts 'f[-1]["secret_in_plan"]')" "a secret in a plan the client sent"
logs=$(find server.log master.log worker.h1.log worker.h2.log client.out worker.h1 worker.h2 \
  -type f \( -name '*.log' -o -name client.out -o -name stderr -o -name stdout \))
for secret in $secrets; do
  # shellcheck disable=SC2086 # the files above
  if grep -lF "$secret" $logs; then
    fail "the secret $secret is in the files above"
  fi
done
echo "  ok: $(wc -w <<<"$secrets") secret(s), in none of the $(wc -l <<<"$logs") logs"

# The two unpacked bundles (about 540 MB each); the logs stay.
find worker.h1 worker.h2 -type d -name "$digest" -prune -exec rm -rf {} +

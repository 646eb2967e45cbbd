# shellcheck shell=bash
# A standalone Spark cluster across the simulated hosts of netns_lib.sh (sourced after it): its
# master on the driver, a worker of one core and 1 GiB on each of h1 and h2.
#
#   spark_cluster   starts it (SPARK_HOME's spark-class; the processes inherit this shell's
#                   environment, PATH and PYSPARK_PYTHON included) and waits until both
#                   workers registered; sets MASTER_URL. Logs: master.log, worker.HOST.log;
#                   executor folders under worker.HOST/ (their stderr files are the tasks').
#   executor_logs HOST   the stderr files of HOST's executors (fails when there are none).
#   assert_ranks_mpi_over_eth0   the rank on each of h1 and h2 says, in its executor's log,
#                   that Open MPI goes over its eth0 (198.18.0.0/24), not the dead docker0.

spark_cluster() {
  local host
  MASTER_URL=spark://$(mh_hostname driver):7077
  check "a standalone Spark: its master on $(mh_hostname driver), a worker of one core on each of h1 and h2"
  mh_bg driver "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host "$(mh_hostname driver)" --port 7077 >master.log 2>&1 </dev/null
  for host in h1 h2; do
    mkdir -p "worker.$host"
    mh_bg "$host" "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
      --host "$(mh_hostname "$host")" --cores 1 --memory 1g --work-dir "$T/worker.$host" \
      "$MASTER_URL" >"worker.$host.log" 2>&1 </dev/null
  done
  for _ in $(seq 120); do
    (($(grep -c "Registering worker" master.log) >= 2)) && break
    sleep 1
  done
  (($(grep -c "Registering worker" master.log) >= 2)) ||
    fail "the workers did not register within 120 s: $(tail -n 3 master.log worker.h1.log worker.h2.log)"
  grep "Registering worker" master.log | sed 's/^.*INFO /  /'
}

executor_logs() {
  local logs
  logs=$(find "$T/worker.$1" -name stderr)
  [[ -n $logs ]] || fail "no executor log under worker.$1"
  echo "$logs"
}

assert_ranks_mpi_over_eth0() {
  local host logs
  for host in h1 h2; do
    logs=$(executor_logs "$host")
    # shellcheck disable=SC2086 # one or more files
    grep -hqE "MPI over eth0 \($(mh_addr "$host") on 198\.18\.0\.0/24\)" $logs ||
      fail "the rank on $host did not choose eth0: $(grep -h 'MPI over' $logs || echo 'no MPI over line')"
    echo "  ok: $host: $(grep -hoE -m1 'rank [01]: MPI over eth0 [^,]*' $logs)"
  done
}

# shellcheck shell=bash
# Jobs across the simulated hosts of netns_lib.sh (sourced after it): a tracker and sync ranks,
# a parameter server and hogwild workers, each process on the host it is given, and bounded
# waits for them.
#
# Unlike tests/integration/sync_lib.sh, nothing pins Open MPI to an interface: no
# OMPI_MCA_btl_tcp_if_include or OMPI_MCA_btl_tcp_if_exclude, unless a test sets one as the
# user would, because choosing the interface is what these tests check.

# shellcheck disable=SC2034 # WORKER_PID and EXIT_RC are for the tests that source this
unset OMPI_MCA_btl_tcp_if_include OMPI_MCA_btl_tcp_if_exclude
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SPARKTORCH_SECRET=multihost-secret

# job_dir NAME: a fresh folder $T/NAME for one job's files; changes into it.
job_dir() {
  rm -rf "${T:?}/$1"
  mkdir -p "$T/$1"
  cd "$T/$1" || fail "cannot change into $T/$1"
}

# Synchronous jobs.

# start_tracker N [serve flags]: `sparktorch serve` for N ranks on the driver, listening on every
# interface, so that the address it gives is the driver's host name (the ranks resolve it).
# Sets TRACKER_PID and TRACKER; its stderr goes to tracker.err.
start_tracker() {
  local n=$1
  shift
  rm -f tracker.port
  mh_bg driver "$SPARKTORCH" serve --world-size "$n" --listen 0.0.0.0:0 --port-file tracker.port \
    "$@" 2>tracker.err </dev/null
  TRACKER_PID=$BG_PID
  wait_port_file "$TRACKER_PID" tracker.port tracker tracker.err
  TRACKER=$(cat tracker.port)
  [[ $TRACKER == "$(mh_hostname driver)":* ]] ||
    fail "the tracker gives $TRACKER, not the driver's host name $(mh_hostname driver)"
}

# start_rank HOST R N INPUT [train flags]: rank R of N on HOST, INPUT on stdin, not quiet (its
# info lines, "MPI over ..." among them, go to err.R); stdout to out.R. Sets RANK_PID[R].
declare -a RANK_PID
start_rank() {
  local host=$1 r=$2 n=$3 input=$4
  shift 4
  mh_bg "$host" "$SPARKTORCH" train --tracker "$TRACKER" --rank "$r" --world-size "$n" "$@" \
    <"$input" >"out.$r" 2>"err.$r"
  RANK_PID[r]=$BG_PID
}

# sync_job "HOST..." SECONDS [train flags]: a tracker and one rank a word of the list (rank r on
# the r-th host named, so "h1 h1 h2 h2" is 2 ranks on each of 2 hosts) on part0.csv...; every
# rank and the tracker must exit 0 within SECONDS, and every rank hold the same weights. Sets
# CRC to their weights_crc32.
sync_job() {
  local -a hosts
  read -ra hosts <<<"$1"
  local seconds=$2 n=${#hosts[@]} r t0
  shift 2
  start_tracker "$n"
  t0=$(now)
  for ((r = 0; r < n; r++)); do start_rank "${hosts[r]}" "$r" "$n" "part$r.csv" "$@"; done
  for ((r = 0; r < n; r++)); do
    wait_job_process "${RANK_PID[r]}" "$seconds" "rank $r (on ${hosts[r]})" "err.$r"
    assert_exit0 "rank $r (on ${hosts[r]})" "err.$r"
  done
  wait_job_process "$TRACKER_PID" 15 "the tracker" tracker.err
  assert_exit0 "the tracker" tracker.err
  grep -q "all $n ranks finished" tracker.err || fail "the tracker did not log that all ranks finished"
  assert_same_weights "$n"
  echo "  (the job took $(elapsed_since "$t0") s)"
}

# assert_exit0 WHAT LOG: RC (of wait_job_process) is 0; else fails quoting LOG's end.
assert_exit0() {
  [[ $RC == 0 ]] || fail "$1 exited $RC, not 0: $(tail -n 3 "$2")"
  echo "  ok: $1 exited 0"
}

# assert_same_weights N: ranks 0..N-1 (out.R) hold the same weights; sets CRC to them.
assert_same_weights() {
  local r
  CRC=$(summary_field out.0 weights_crc32)
  for ((r = 1; r < $1; r++)); do
    assert_eq "$CRC" "$(summary_field "out.$r" weights_crc32)" "rank $r's weights checksum against rank 0's"
  done
}

# wait_job_process PID SECONDS WHAT LOG: as wait_bounded, but a process that does not end in
# time is reported with the end of LOG (and of every err.* and tracker.err here), which says
# where it hangs.
wait_job_process() {
  local pid=$1 deadline f
  deadline=$(($(date +%s%N) + $2 * 1000000000))
  while kill -0 "$pid" 2>/dev/null; do
    if (($(date +%s%N) > deadline)); then
      for f in tracker.err server.err err.*; do
        [[ -s $f ]] && { echo "--- $f (end)"; tail -n 12 "$f"; }
      done >&2
      fail "$3 did not exit within $2 s (a hang: the logs above)"
    fi
    sleep 0.05
  done
  RC=0
  wait "$pid" || RC=$?
}

# watch_exits T0 LIMIT PID...: polls the processes PID... (every 20 ms) until every one has
# exited, at most LIMIT seconds after T0 (from `now`); sets EXITED_AFTER[PID] to the seconds from
# T0 to its exit and EXIT_RC[PID] to its exit status. A process still running at the limit is
# left running, with EXITED_AFTER[PID] "never" (the caller fails and the trap ends it).
declare -A EXITED_AFTER EXIT_RC
watch_exits() {
  local t0=$1 limit=$2 pid left t0_ns t_ms
  shift 2
  t0_ns=${t0/./}
  for pid in "$@"; do EXITED_AFTER[$pid]=never; done
  while :; do
    left=0
    t_ms=$((($(date +%s%N) - t0_ns) / 1000000))
    for pid in "$@"; do
      [[ ${EXITED_AFTER[$pid]} == never ]] || continue
      if kill -0 "$pid" 2>/dev/null; then
        left=1
      else
        EXITED_AFTER[$pid]=$(printf '%d.%02d' $((t_ms / 1000)) $((t_ms % 1000 / 10)))
        EXIT_RC[$pid]=0
        wait "$pid" || EXIT_RC[$pid]=$?
      fi
    done
    [[ $left == 0 ]] && return 0
    ((t_ms > limit * 1000)) && return 0
    sleep 0.02
  done
}

# assert_mpi_over R IFACE CIDR: rank R's log says that Open MPI goes over IFACE (CIDR), the
# interface of its connection to the tracker.
assert_mpi_over() {
  local line
  line=$(grep -m1 "MPI over" "err.$1" || true)
  [[ -n $line ]] || fail "rank $1 logged no line with 'MPI over' (which interface Open MPI uses): $(head -n 3 "err.$1")"
  [[ $line == *"$2"* && $line == *"$3"* ]] ||
    fail "rank $1: expected its 'MPI over' line to name $2 and $3, got: $line"
  echo "  ok: ${line#* info: }"
}

# Hogwild jobs.

# start_server N [serve flags]: the parameter server for N workers on the driver (listening on
# every interface: its host name is the address), writing model.pt. Sets SERVER_PID and SERVER.
MLP_SPEC="$REPO/examples/fashion_mnist_mlp.json"
start_server() {
  local n=$1
  shift
  rm -f server.port model.pt
  mh_bg driver "$SPARKTORCH" serve --mode hogwild -n "$n" --model "$MLP_SPEC" --listen 0.0.0.0:0 \
    --port-file server.port -o model.pt "$@" >server.out 2>server.err </dev/null
  SERVER_PID=$BG_PID
  wait_port_file "$SERVER_PID" server.port server server.err
  SERVER=$(cat server.port)
  [[ $SERVER == "$(mh_hostname driver)":* ]] ||
    fail "the server gives $SERVER, not the driver's host name $(mh_hostname driver)"
}

# start_worker HOST I N INPUT [train flags]: hogwild worker I of N on HOST; stdout out.I, stderr
# err.I. Sets WORKER_PID[I].
declare -a WORKER_PID
start_worker() {
  local host=$1 i=$2 n=$3 input=$4
  shift 4
  mh_bg "$host" "$SPARKTORCH" train --mode hogwild --server "$SERVER" --rank "$i" --world-size "$n" \
    --label-col 0 "$@" <"$input" >"out.$i" 2>"err.$i"
  WORKER_PID[i]=$BG_PID
}


#!/usr/bin/env bash
# Which interface Open MPI uses between hosts: every host has a docker0 that leads nowhere (with
# the same address on every host, as docker's default bridge has, or a distinct one). Without a
# setting of the user's, a rank confines Open MPI to the subnet of the interface that reaches the
# tracker (eth0) and says so ("MPI over eth0"); the user's OMPI_MCA_btl_tcp_if_include or
# OMPI_MCA_btl_tcp_if_exclude overrides that choice; and one that names the dead interface makes
# the job fail with an error on every rank and the tracker, within a bound (the ranks' --timeout
# covers MPI's start and a first exchange between every pair of ranks), instead of hanging.
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
source "$HERE/../integration/lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
source "$HERE/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=job_lib.sh
source "$HERE/job_lib.sh"
setup_workdir multihost_sync_interface
require_data train2k.csv
write_mlp_spec "$T/spec.json"
TRAIN=(--model "$T/spec.json" --epochs 1 --batch-size 32 --seed 5)
# A job that cannot all-reduce must end within this many seconds of its start; its ranks get
# --timeout CONNECT_TIMEOUT, which bounds the rendezvous and then MPI's connecting the ranks.
CONNECT_TIMEOUT=15
FAIL_WITHIN=45

# job_ok NAME: 3 ranks on h1, h2 and h3 train and agree.
job_ok() {
  job_dir "$1"
  split_rows "$DATA/train2k.csv" 200 200 200
  sync_job "h1 h2 h3" 120 "${TRAIN[@]}"
}

# user_override_line R VAR VALUE: rank R says that the user's VAR=VALUE decides, and did not
# override it (no "MPI over" line naming an interface of its own choice).
assert_user_override() {
  local line
  line=$(grep "MPI over" "err.$1" || true)
  [[ $(grep -c "MPI over" "err.$1") == 1 && $line == *"$2=$3"* ]] ||
    fail "rank $1: expected one 'MPI over' line naming $2=$3, got: ${line:-none}"
  echo "  ok: ${line#* info: }"
}

# job_fails NAME PATTERN: 3 ranks on h1, h2 and h3 cannot all-reduce: every rank and the tracker
# exit non-zero within FAIL_WITHIN s of the start, each with a `sparktorch: error:` line that
# matches the regular expression PATTERN.
job_fails() {
  local r t0 pids=()
  EXPECTED_ERROR=$2
  job_dir "$1"
  split_rows "$DATA/train2k.csv" 200 200 200
  start_tracker 3
  t0=$(now)
  for r in 0 1 2; do
    start_rank "h$((r + 1))" "$r" 3 "part$r.csv" "${TRAIN[@]}" --timeout "$CONNECT_TIMEOUT"
    pids+=("${RANK_PID[r]}")
  done
  watch_exits "$t0" "$FAIL_WITHIN" "${pids[@]}" "$TRACKER_PID"
  for r in 0 1 2; do
    report_failed_exit "rank $r" "${RANK_PID[r]}" "err.$r"
  done
  report_failed_exit "the tracker" "$TRACKER_PID" tracker.err
}

# report_failed_exit WHAT PID LOG: PID (watched by watch_exits) exited non-zero in time, and
# LOG has a `sparktorch: error:` line (Open MPI's own messages may come after it).
report_failed_exit() {
  local after=${EXITED_AFTER[$2]} line
  if [[ $after == never ]]; then
    for f in tracker.err err.*; do echo "--- $f (end)"; tail -n 8 "$f"; done >&2
    fail "$1 still runs $FAIL_WITHIN s after the start (a hang: the logs above)"
  fi
  [[ ${EXIT_RC[$2]} != 0 ]] || fail "$1 exited 0 although the ranks cannot reach each other"
  line=$(grep -m1 "^sparktorch: error: " "$3" || true)
  [[ -n $line ]] ||
    fail "$1 exited ${EXIT_RC[$2]} after $after s with no 'sparktorch: error:' line: $(tail -n 3 "$3")"
  [[ $line =~ $EXPECTED_ERROR ]] || fail "$1's error does not match '$EXPECTED_ERROR': $line"
  echo "  ok: $1 exited ${EXIT_RC[$2]} after $after s: $line"
}

mh_setup 3 same

check "docker0 at 198.19.0.1/16 on every host, nothing set: every rank chooses eth0 and trains"
job_ok auto_same
for r in 0 1 2; do assert_mpi_over "$r" eth0 "$MH_BRIDGE_NET"; done

check "the user's OMPI_MCA_btl_tcp_if_include=$MH_BRIDGE_NET: it decides, and the job trains"
OMPI_MCA_btl_tcp_if_include=$MH_BRIDGE_NET job_ok user_cidr
for r in 0 1 2; do assert_user_override "$r" OMPI_MCA_btl_tcp_if_include "$MH_BRIDGE_NET"; done

check "the user's OMPI_MCA_btl_tcp_if_include=eth0 (an interface's name): the job trains"
OMPI_MCA_btl_tcp_if_include=eth0 job_ok user_name
for r in 0 1 2; do assert_user_override "$r" OMPI_MCA_btl_tcp_if_include eth0; done

check "the user's OMPI_MCA_btl_tcp_if_exclude=lo,docker0: it decides, and the job trains"
OMPI_MCA_btl_tcp_if_exclude=lo,docker0 job_ok user_exclude
for r in 0 1 2; do assert_user_override "$r" OMPI_MCA_btl_tcp_if_exclude lo,docker0; done

check "the user's OMPI_MCA_btl_tcp_if_include=$(mh_dead_cidr) (docker0, the same address on every host): the job fails, it does not hang"
# Open MPI connects every process to its own docker0 and waits: the ranks' deadline ends it.
OMPI_MCA_btl_tcp_if_include=$(mh_dead_cidr) job_fails user_dead_same \
  "Open MPI did not connect rank [0-2] to every other rank within $CONNECT_TIMEOUT s, over the interfaces OMPI_MCA_btl_tcp_if_include=$(mh_dead_cidr) names \(set by the user\): those may not reach the other hosts"

mh_teardown
mh_setup 3 distinct

check "docker0 at 198.19.H.1/24, another on each host, nothing set: every rank chooses eth0 and trains"
job_ok auto_distinct
for r in 0 1 2; do assert_mpi_over "$r" eth0 "$MH_BRIDGE_NET"; done

check "the user's OMPI_MCA_btl_tcp_if_include=198.19.0.0/16 (the docker0s, distinct): the job fails, it does not hang"
# Open MPI finds no route to another host's docker0 and aborts the rank that tried (through PMI),
# or the ranks' deadline ends them first.
OMPI_MCA_btl_tcp_if_include=198.19.0.0/16 job_fails user_dead_distinct \
  "Open MPI aborted it|Open MPI did not connect rank [0-2] to every other rank"

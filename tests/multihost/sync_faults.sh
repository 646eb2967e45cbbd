#!/usr/bin/env bash
# A synchronous job across simulated hosts never hangs on a lost host: when a rank's link is cut
# mid-training (its eth0 set down) or a host's processes are killed, every other rank and the
# tracker exit 75 within 5 s, each with the same one-line message naming the lost rank and its
# host; the rank cut off ends too, on its own, within a bound. Also with gradients in 16 bits, and
# with the all-reduce in buckets on a second thread.
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
source "$HERE/../integration/lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
source "$HERE/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=job_lib.sh
source "$HERE/job_lib.sh"
setup_workdir multihost_sync_faults
require_data train12k.csv
mh_setup 3 same
write_mlp_spec "$T/spec.json"
# Long enough to be cut in the middle of (about a minute when nothing goes wrong).
LONG=(--model "$T/spec.json" --epochs 300 --batch-size 16)
# Every other rank and the tracker must exit within this many seconds of the fault ...
WITHIN=5
# ... and are watched for this long, so that a slower exit is reported with its time.
WATCH=45
# The rank cut off from everyone must end within this many seconds of the cut.
CUT_RANK_WITHIN=60

# start_job "HOST...": a tracker and rank r on the r-th host named, each on 1,000 rows; waits
# until rank 0 has finished an epoch.
start_job() {
  local -a hosts
  read -ra hosts <<<"$1"
  local n=${#hosts[@]} r counts=()
  for ((r = 0; r < n; r++)); do counts+=(1000); done
  split_rows "$DATA/train12k.csv" "${counts[@]}"
  start_tracker "$n"
  for ((r = 0; r < n; r++)); do
    start_rank "${hosts[r]}" "$r" "$n" "part$r.csv" "${LONG[@]}" --metrics "metrics.$r"
  done
  wait_file_line metrics.0 '"epoch"' 90 "rank 0's first epoch" "${RANK_PID[0]}"
  for ((r = 0; r < n; r++)); do
    kill -0 "${RANK_PID[r]}" 2>/dev/null || fail "rank $r ended before the fault: $(tail -n 3 "err.$r")"
  done
}

# assert_lost_within T0 LOST HOST R...: ranks R... and the tracker exit 75 within WITHIN s of T0,
# every one with the same last line: rank LOST (a regular expression: "1", or "[23]" when either
# of two ranks may be the one noticed first) on HOST was lost.
assert_lost_within() {
  local t0=$1 lost=$2 host=$3 r pids=() message
  shift 3
  for r in "$@"; do pids+=("${RANK_PID[r]}"); done
  watch_exits "$t0" "$WATCH" "${pids[@]}" "$TRACKER_PID"
  message=$(tail -n 1 tracker.err)
  echo "  the tracker's last line: $message"
  for r in "$@"; do assert_ended "rank $r" "${RANK_PID[r]}" "err.$r" "$message"; done
  assert_ended "the tracker" "$TRACKER_PID" tracker.err "$message"
  [[ $message =~ ^sparktorch:\ error:\ rank\ $lost\  ]] ||
    fail "the message does not begin with 'sparktorch: error: rank $lost ': $message"
  [[ $message == *"$(mh_hostname "$host")"* ]] ||
    fail "the message does not name the lost rank's host, $(mh_hostname "$host"): $message"
  echo "  ok: the message names the lost rank ($lost) and its host $(mh_hostname "$host")"
}

# assert_ended WHAT PID LOG MESSAGE: PID exited 75 within WITHIN s (watch_exits), LOG's last
# line being MESSAGE.
assert_ended() {
  local after=${EXITED_AFTER[$2]} rc=${EXIT_RC[$2]:-} last
  [[ $after != never ]] ||
    fail "$1 still runs $WATCH s after the fault: $(tail -n 3 "$3" | tr '\n' ' ')"
  last=$(tail -n 1 "$3")
  [[ $rc == 75 ]] || fail "$1 exited $rc after $after s, not 75: $last"
  awk -v a="$after" -v w="$WITHIN" 'BEGIN { exit !(a < w) }' ||
    fail "$1 exited $after s after the fault, not within $WITHIN s: $last"
  [[ $last == "$4" ]] || fail "$1's last line on stderr is not the tracker's:
  expected: $4
  got:      $last"
  echo "  ok: $1 exited 75 after $after s (< $WITHIN) with that message"
}

# assert_cut_rank_ends T0 R: the rank cut off ends with an error within CUT_RANK_WITHIN s.
assert_cut_rank_ends() {
  watch_exits "$1" "$CUT_RANK_WITHIN" "${RANK_PID[$2]}"
  local after=${EXITED_AFTER[${RANK_PID[$2]}]}
  [[ $after != never ]] ||
    fail "rank $2, cut off, still runs $CUT_RANK_WITHIN s after the cut: $(tail -n 2 "err.$2" | tr '\n' ' ')"
  [[ ${EXIT_RC[${RANK_PID[$2]}]} != 0 ]] || fail "rank $2, cut off, exited 0"
  echo "  ok: rank $2, cut off, exited ${EXIT_RC[${RANK_PID[$2]}]} after $after s: $(tail -n 1 "err.$2")"
}

check "3 ranks on 3 hosts; rank 1's link (h2's eth0) is cut mid-training"
job_dir link_cut
start_job "h1 h2 h3"
t0=$(now)
mh_link_down h2
assert_lost_within "$t0" 1 h2 0 2
assert_cut_rank_ends "$t0" 1
mh_link_up h2

check "3 ranks on 3 hosts; every process of h2 (rank 1) is killed mid-training"
job_dir host_killed
start_job "h1 h2 h3"
t0=$(now)
mh_kill_host h2
assert_lost_within "$t0" 1 h2 0 2
wait_bounded "${RANK_PID[1]}" 5 "rank 1 (killed)"
assert_eq 137 "$RC" "rank 1's exit status (SIGKILL)"

check "... the same with gradients in 16 bits (--allreduce-dtype bf16: an all-to-all and an all-gather)"
job_dir host_killed_bf16
FP32=("${LONG[@]}")
LONG+=(--allreduce-dtype bf16)
start_job "h1 h2 h3"
LONG=("${FP32[@]}")
t0=$(now)
mh_kill_host h2
assert_lost_within "$t0" 1 h2 0 2

check "... the same with the all-reduce in buckets on a second thread (--allreduce-overlap)"
job_dir host_killed_overlap
LONG+=(--allreduce-overlap)
start_job "h1 h2 h3"
LONG=("${FP32[@]}")
t0=$(now)
mh_kill_host h2
assert_lost_within "$t0" 1 h2 0 2

check "2 ranks on each of 2 hosts; every process of h2 (ranks 2 and 3) is killed mid-training"
job_dir host_killed_2x2
start_job "h1 h1 h2 h2"
t0=$(now)
mh_kill_host h2
# Either of h2's ranks may be the one the tracker notices first.
assert_lost_within "$t0" "[23]" h2 0 1

check "2 ranks on each of 2 hosts; h1's link is cut (ranks 0 and 1) mid-training"
job_dir link_cut_2x2
start_job "h1 h1 h2 h2"
t0=$(now)
mh_link_down h1
assert_lost_within "$t0" "[01]" h1 2 3
assert_cut_rank_ends "$t0" 0
assert_cut_rank_ends "$t0" 1
mh_link_up h1

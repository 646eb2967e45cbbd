# shellcheck shell=bash
# Helpers for the synchronous-training tests (sourced after lib.sh): a tracker and ranks as
# background processes, mpirun with the flags these machines need, and the summaries' fields.

# Open MPI as root, and on loopback only: TCP from eth0 to itself is flaky on these machines.
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than the 2 cores of a CI machine.
export OMPI_MCA_rmaps_base_oversubscribe=1
export SPARKTORCH_SECRET=integration-secret

# start_tracker N [serve flags]: starts `sparktorch serve` for N ranks in the background; sets
# TRACKER_PID and TRACKER (HOST:PORT); its stderr goes to tracker.err.
start_tracker() {
  local n=$1
  shift
  rm -f tracker.port
  "$SPARKTORCH" serve --world-size "$n" --listen 127.0.0.1:0 --port-file tracker.port "$@" \
    2>tracker.err &
  TRACKER_PID=$!
  wait_port_file "$TRACKER_PID" tracker.port tracker tracker.err
  TRACKER=$(cat tracker.port)
}

# start_rank R N INPUT [train flags]: starts rank R of N against $TRACKER with INPUT on stdin;
# sets RANK_PID[R]; stdout to out.R, stderr to err.R.
declare -a RANK_PID
start_rank() {
  local r=$1 n=$2 input=$3
  shift 3
  "$SPARKTORCH" -q train --tracker "$TRACKER" --rank "$r" --world-size "$n" "$@" \
    <"$input" >"out.$r" 2>"err.$r" &
  RANK_PID[r]=$!
}

# summary_field FILE FIELD: the FIELD of the S record in FILE.
summary_field() {
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("S\t"):
        print(json.loads(line[2:])[sys.argv[2]])
' "$1" "$2"
}


# start_rank_from_stdin R N INPUT [train flags]: as start_rank, but the process finds its rank
# as a Spark task of the JVM's RDD.pipe gives it: R and a tab before INPUT's first row on stdin
# (`train --rank-from-stdin`); an empty INPUT is an empty partition, whose stdin stays empty.
# stdout to out.R, stderr to err.R (R is only the name of the files for an empty INPUT).
start_rank_from_stdin() {
  local r=$1 n=$2 input=$3
  shift 3
  {
    [[ -s $input ]] && printf '%s\t' "$r"
    cat "$input"
  } | "$SPARKTORCH" train --tracker "$TRACKER" --rank-from-stdin --world-size "$n" "$@" \
    >"out.$r" 2>"err.$r" &
  RANK_PID[r]=$!
}

# summary_json FILE EXPR: the Python expression EXPR, with `s` bound to FILE's S record, as JSON.
summary_json() {
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("S\t"):
        s = json.loads(line[2:])
        print(json.dumps(eval(sys.argv[2])))
' "$1" "$2"
}

# assert_summary_timings FILE EPOCHS: FILE's summary has read_seconds and train_seconds (numbers,
# the reading and the training within total_seconds) and a history of EPOCHS epochs, 1..EPOCHS,
# whose last entry is the summary's own metrics.
assert_summary_timings() {
  python3 - "$1" "$2" <<'PY' || fail "$1: the summary's timings or history are not right"
import json, sys
s = [json.loads(l[2:]) for l in open(sys.argv[1]) if l.startswith("S\t")][0]
epochs = int(sys.argv[2])
for key in ("read_seconds", "train_seconds"):
    assert isinstance(s[key], float) and 0 <= s[key] <= s["total_seconds"], (key, s[key])
assert s["read_seconds"] + s["train_seconds"] <= s["total_seconds"], s
h = s["history"]
assert [e["epoch"] for e in h] == list(range(1, epochs + 1)), h
last = h[-1]
assert all(s[k] == v for k, v in last.items()), (last, s)
assert set(last) >= {"epoch", "rows", "steps", "train_loss", "seconds", "elapsed", "samples_per_second"}, last
PY
  echo "  ok: $1: read_seconds, train_seconds and a history of $2 epochs ending in the final metrics"
}

# shellcheck shell=bash
# Helpers for the synchronous-training tests (sourced after lib.sh): a tracker and ranks as
# background processes, mpirun with the flags these machines need, and the summaries' fields.

# Open MPI as root, and on loopback only: TCP from eth0 to itself is flaky on these machines.
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than the 2 cores of a CI machine.
export OMPI_MCA_rmaps_base_oversubscribe=1
export SPARKTORCH_SECRET=integration-secret

# The MLP without dropout (dropout masks would differ between one process and many).
write_mlp_spec() {
  cat >"$1" <<'JSON'
{"layers": [{"type": "linear", "in_features": 784, "out_features": 64}, "relu",
            {"type": "linear", "in_features": 64, "out_features": 10}],
 "loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}
JSON
}

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


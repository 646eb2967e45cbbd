# shellcheck shell=bash
# Helpers for the hogwild tests (sourced after lib.sh): a parameter server and its workers as
# background processes, and the fields of their summaries.
#
# The server (`sparktorch serve --mode hogwild`) runs in the test's folder with its stdout in
# server.out (the S record; the model goes to model.pt) and its stderr in server.err; worker I
# reads INPUT on stdin and writes out.I (its records) and err.I.

MLP_SPEC="$REPO/examples/fashion_mnist_mlp.json"

# A failed check ends the script while the server and workers it started may still run (a server
# waits 120 s for its workers): end those, this shell's own background jobs, on the way out.
end_background_jobs() {
  local pid
  for pid in $(jobs -p); do kill -9 "$pid" 2>/dev/null || true; done
}
trap end_background_jobs EXIT

# start_server N [serve flags]: starts the parameter server for N workers of the Fashion-MNIST
# MLP, writing model.pt; waits for its port file. Sets SERVER_PID and SERVER (HOST:PORT).
start_server() {
  local n=$1
  shift
  rm -f server.port model.pt ./*.fields
  "$SPARKTORCH" serve --mode hogwild -n "$n" --model "$MLP_SPEC" --port-file server.port \
    -o model.pt "$@" >server.out 2>server.err &
  SERVER_PID=$!
  wait_port_file "$SERVER_PID" server.port server server.err
  SERVER=$(cat server.port)
}

# start_worker I N INPUT [train flags]: starts hogwild worker I of N against $SERVER with INPUT on
# stdin; sets WORKER_PID[I].
declare -a WORKER_PID
start_worker() {
  local i=$1 n=$2 input=$3
  shift 3
  rm -f "out.$i.fields"
  "$SPARKTORCH" -q train --mode hogwild --server "$SERVER" --rank "$i" --world-size "$n" \
    --label-col 0 "$@" <"$input" >"out.$i" 2>"err.$i" &
  WORKER_PID[i]=$!
}

# start_workers N EPOCHS [train flags]: workers 0..N-1 on part0.csv... (split_rows), -e EPOCHS.
start_workers() {
  local n=$1 epochs=$2 i
  shift 2
  for ((i = 0; i < n; i++)); do start_worker "$i" "$n" "part$i.csv" -e "$epochs" "$@"; done
}

# finish_job N: every worker 0..N-1 and then the server must exit 0.
finish_job() {
  local n=$1 i
  for ((i = 0; i < n; i++)); do
    wait_for "${WORKER_PID[i]}"
    assert_eq 0 "$RC" "worker $i's exit status ($(tail -3 "err.$i"))"
  done
  wait_for "$SERVER_PID"
  assert_eq 0 "$RC" "the server's exit status ($(tail -3 server.err))"
}

# wait_log FILE REGEX [SECONDS]: waits until a line of FILE matches REGEX (default 60 s).
wait_log() {
  local i
  for i in $(seq $((${3:-60} * 10))); do
    grep -qE "$2" "$1" 2>/dev/null && return
    sleep 0.1
  done
  fail "$1 has no line matching '$2' after ${3:-60} s: $(tail -5 "$1")"
}


# summary_field FILE KEY: as lib.sh's, but FILE's S record is parsed once (into FILE.fields, one
# KEY<TAB>VALUE line a field): these tests read dozens of fields, and a python3 start is slow.
summary_field() {
  local n
  if [[ ! -e "$1.fields" || "$1" -nt "$1.fields" ]]; then
    n=$(grep -c $'^S\t' "$1" || true)
    [[ $n -eq 1 ]] || fail "$1: expected one S record, found $n"
    grep $'^S\t' "$1" | cut -f2- | python3 -c '
import json, sys
for k, v in json.load(sys.stdin).items():
    print(k, json.dumps(v) if isinstance(v, (bool, list, dict)) or v is None else v, sep="\t")
' >"$1.fields.tmp" || fail "$1: its S record is not a JSON object"
    mv "$1.fields.tmp" "$1.fields"
  fi
  awk -F'\t' -v k="$2" '$1 == k { print substr($0, length(k) + 2); found = 1 }
    END { if (!found) print "<absent>" }' "$1.fields"
}

# workers_sum N FIELD: the sum of FIELD over the summaries of workers 0..N-1 (out.I).
workers_sum() {
  local n=$1 i total=0
  for ((i = 0; i < n; i++)); do total=$((total + $(summary_field "out.$i" "$2"))); done
  echo "$total"
}

# assert_job_summary N: the server's summary says that all N workers finished and none was lost,
# and its update count agrees with the workers' pushes.
assert_job_summary() {
  local n=$1 ids pushes dropped
  ids=$(python3 -c "import json; print(json.dumps(list(range($n))))")
  assert_eq hogwild "$(summary_field server.out mode)" "server summary: mode"
  assert_eq "$n" "$(summary_field server.out world_size)" "server summary: world_size"
  assert_eq "$ids" "$(summary_eval server.out 'sorted(s["workers_finished"])')" \
    "server summary: workers_finished (sorted)"
  assert_eq "[]" "$(summary_field server.out workers_lost)" "server summary: workers_lost"
  assert_eq model.pt "$(summary_field server.out model_path)" "server summary: model_path"
  pushes=$(workers_sum "$n" pushes)
  dropped=$(workers_sum "$n" pushes_dropped)
  assert_eq "$dropped" "$(summary_field server.out updates_dropped_stale)" \
    "server's updates_dropped_stale against the workers' pushes_dropped"
  assert_eq "$((pushes - dropped))" "$(summary_field server.out updates)" \
    "server's updates against the workers' pushes ($pushes) minus dropped ($dropped)"
  assert_eq "$(summary_field server.out updates)" "$(summary_field server.out weights_version)" \
    "server's weights_version (one version per update)"
}

# assert_worker_records I ROWS: worker I's summary and its --predict records: one P record per
# row of its partition.
assert_worker_records() {
  local i=$1 rows=$2
  assert_eq hogwild "$(summary_field "out.$i" mode)" "worker $i: mode"
  assert_eq "$i" "$(summary_field "out.$i" worker)" "worker $i: worker"
  assert_eq "$i" "$(summary_field "out.$i" rank)" "worker $i: rank"
  assert_eq "$rows" "$(summary_field "out.$i" partition_rows)" "worker $i: partition_rows"
  assert_eq "$rows" "$(grep -c $'^P\t' "out.$i" || true)" "worker $i: P records (one per row)"
  assert_eq 0 "$(grep $'^P\t' "out.$i" | grep -cvP '^P\t[0-9]$' || true)" \
    "worker $i: P records that are not a class 0-9"
  assert_cmp "$(summary_field "out.$i" pushes)" ">" 0 "worker $i: pushes"
  assert_cmp "$(summary_field "out.$i" pulls)" ">" 0 "worker $i: pulls"
}

# test_accuracy MODEL: the accuracy of MODEL on the 2,000 test rows.
test_accuracy() {
  "$SPARKTORCH" -q predict --model "$1" --input "$DATA/test2k.csv" >"$1.test" ||
    fail "sparktorch predict --model $1 failed"
  accuracy "$1.test" "$DATA/test2k.labels"
}

# assert_loads_in_python MODEL: torch.jit.load and a forward pass of a [1, 784] row to [1, 10].
assert_loads_in_python() {
  "$(torch_python)" - "$1" <<'PY' || fail "Python cannot load $1 and run it on a row"
import sys
import torch
m = torch.jit.load(sys.argv[1])
y = m(torch.zeros(1, 784))
assert tuple(y.shape) == (1, 10), "output shape %r" % (tuple(y.shape),)
assert torch.isfinite(y).all(), "output %r" % y
PY
  echo "  ok: $1 loads in Python; a [1, 784] row gives [1, 10]"
}


# start_worker_from_stdin I N INPUT [train flags]: as start_worker, but the worker finds its id
# as a Spark task of the JVM's RDD.pipe gives it: I and a tab before INPUT's first row on stdin
# (`train --rank-from-stdin`); an empty INPUT is an empty partition, whose stdin stays empty.
# Not quiet: its stderr (err.I) keeps its info lines.
start_worker_from_stdin() {
  local i=$1 n=$2 input=$3
  shift 3
  rm -f "out.$i.fields"
  {
    [[ -s $input ]] && printf '%s\t' "$i"
    cat "$input"
  } | "$SPARKTORCH" train --mode hogwild --server "$SERVER" --rank-from-stdin --world-size "$n" \
    --label-col 0 "$@" >"out.$i" 2>"err.$i" &
  WORKER_PID[i]=$!
}

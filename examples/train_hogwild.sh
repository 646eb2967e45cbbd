#!/usr/bin/env bash
# Hogwild training on one machine, as a Spark job runs it but without Spark: `sparktorch serve
# --mode hogwild` holds the weights of examples/fashion_mnist_mlp.json and its optimizer; WORKERS
# plain processes, each fed its own part of Fashion-MNIST on stdin (as Spark tasks are), pull
# weights from it and push their gradients; the server writes the model when every worker is
# done. Then predicts the test set with that model and prints the test accuracy and the
# server's summary. Runs from any directory; builds sparktorch first (as examples/quickstart.sh
# does) when BUILD_DIR has none.
#   WORKERS     worker processes (default: 2)      EPOCHS    epochs per worker (default: 5)
#   LOCK        1: serve --lock (pull, compute and push one worker at a time)
#   PULL_EVERY  steps a worker takes on its own copy between pulls (default: 1)
#   BUILD_DIR   build folder (default: build/)     THREADS   passed to the workers' --threads
#   PYTHON      interpreter for the data script
# Outputs go to out/train_hogwild/: model.pt, server.records (its summary record), server.log,
# and workerW.records / workerW.log for each worker.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
sparktorch=$build_dir/sparktorch
workers=${WORKERS:-2}
epochs=${EPOCHS:-5}
pull_every=${PULL_EVERY:-1}
spec=examples/fashion_mnist_mlp.json
train_csv=out/fashion_train.csv
test_csv=out/fashion_test.csv
dir=out/train_hogwild

example=train_hogwild
source examples/common.sh

[[ $workers =~ ^[1-9][0-9]*$ ]] || die "WORKERS must be a positive number, not '$workers'"
[[ $epochs =~ ^[1-9][0-9]*$ ]] || die "EPOCHS must be a positive number, not '$epochs'"
serve_flags=(--pull-every "$pull_every")
[[ ${LOCK:-0} == 1 ]] && serve_flags+=(--lock)

ensure_built

source examples/fashion_mnist_csv.sh
test_rows=$(wc -l <"$test_csv")
rm -rf "$dir"
mkdir -p "$dir"

step "splitting $train_csv into $workers parts, one per worker (row i goes to worker i mod $workers)"
awk -v n="$workers" -v prefix="$dir/part" '{ print > (prefix (NR - 1) % n ".csv") }' "$train_csv"

# Background processes, ended if this script stops early.
pids=()
trap '((${#pids[@]} == 0)) || kill "${pids[@]}" 2>/dev/null || true' EXIT

# A random secret for this job: the server admits only workers that prove they hold it, and it
# never appears on a command line or on the wire. One host: listen on loopback.
SPARKTORCH_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export SPARKTORCH_SECRET
step "sparktorch serve --mode hogwild -n $workers ${serve_flags[*]}"
"$sparktorch" serve --mode hogwild -n "$workers" --model "$spec" "${serve_flags[@]}" \
  --listen 127.0.0.1:0 --port-file "$dir/server.address" --output "$dir/model.pt" \
  >"$dir/server.records" 2>"$dir/server.log" &
server_pid=$!
pids+=("$server_pid")
for _ in $(seq 300); do
  [[ -s $dir/server.address ]] && break
  kill -0 "$server_pid" 2>/dev/null || die "the server exited before it was listening: $(tail -3 "$dir/server.log")"
  sleep 0.1
done
server=$(cat "$dir/server.address") || die "the server wrote no address"

step "$workers workers train with the server at $server, $epochs epochs each"
worker_pids=()
for ((w = 0; w < workers; w++)); do
  "$sparktorch" train --mode hogwild --server "$server" --rank "$w" --world-size "$workers" \
    --epochs "$epochs" "${threads[@]}" <"$dir/part$w.csv" >"$dir/worker$w.records" \
    2>"$dir/worker$w.log" &
  worker_pids+=($!)
  pids+=($!)
done
for ((w = 0; w < workers; w++)); do
  rc=0
  wait "${worker_pids[w]}" || rc=$?
  ((rc == 0)) || die "worker $w exited with status $rc: $(tail -1 "$dir/worker$w.log") (see man sparktorch, EXIT STATUS)"
done
rc=0
wait "$server_pid" || rc=$?
((rc == 0)) || die "the server exited with status $rc: $(tail -1 "$dir/server.log")"
pids=()
unset SPARKTORCH_SECRET
[[ -s $dir/model.pt ]] || die "the server wrote no $dir/model.pt"

correct=$(test_correct "$dir/model.pt" "$dir/test.predictions")

# summary_field FIELD: a number field of the server's S record.
summary_field() {
  sed -n "s/^S\t.*\"$1\":\([^,}]*\).*/\1/p" "$dir/server.records"
}

echo
echo "Fashion-MNIST, $spec, hogwild with $workers workers, ${serve_flags[*]}"
awk -v u="$(summary_field updates)" -v d="$(summary_field updates_dropped_stale)" \
  -v mean="$(summary_field staleness_mean)" -v max="$(summary_field staleness_max)" \
  -v e="$(summary_field epochs)" -v s="$(summary_field total_seconds)" \
  -v loss="$(summary_field train_loss)" 'BEGIN {
  printf "  %d updates applied, %d dropped as stale; staleness mean %.2f, max %d\n", u, d, mean, max
  printf "  %d epochs in %.1f s (reading the rows included); final training loss %.4f\n", e, s, loss
}'
awk -v trows="$test_rows" -v correct="$correct" 'BEGIN {
  printf "  test accuracy  %.2f%% (%d of %d)\n", 100 * correct / trows, correct, trows
}'

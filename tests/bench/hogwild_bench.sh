#!/usr/bin/env bash
# Hogwild training with the parameter server on Fashion-MNIST (the MLP of
# examples/fashion_mnist_mlp.json: Adam lr 0.001 on the server, batch 64 a worker, 1 thread a
# process; every worker reads its 1/N share of the 60,000 training rows on stdin, as Spark
# partitions would arrive):
#   a. updates per second with 1, 2 and 4 workers ($WORKERS), each training $RATE_EPOCHS
#      epoch(s): the server's updates over its total_seconds (which include the workers reading
#      their rows), the same updates over the training window (the slowest worker's elapsed
#      training time), and the workers' samples/s and the share of their training time spent
#      waiting on the server (server_seconds);
#   b. time to 85% test accuracy ($TARGET) with $ACC_WORKERS workers, against synchronous mode
#      with as many mpirun ranks, by sync_bench.sh's method: for each E in $EPOCHS, train E
#      epochs from scratch, predict the 10,000 test rows with `sparktorch predict` and stop at
#      the first E that reaches the target. The time is the run's own: the server's
#      total_seconds (hogwild) or rank 0's total_seconds (sync); both include reading the rows
#      and exclude process start-up, which the wall column adds back;
#   c. test accuracy (on the 10,000 test rows) after $CMP_EPOCHS epochs over the first $CMP_ROWS
#      training rows (all 60,000 by default), hogwild against sync, for each worker count in
#      $CMP_WORKERS, $REPEATS runs each (seeds 0, 1, ...; a sync run is deterministic for its
#      seed, a hogwild run is not): every run's accuracy, then the means.
# Usage: tests/bench/hogwild_bench.sh [BUILD_DIR]   (default build; WORKERS="1 2 4",
#        RATE_EPOCHS=1, ACC_WORKERS=2, EPOCHS="1 2 3 4 5 6 8 10", TARGET=0.85, PARTS=ab
#        (c on request: PARTS=c), CMP_WORKERS="2 4", CMP_EPOCHS=3, CMP_ROWS=60000, REPEATS=3;
#        LOCK=1 serves with --lock; WORK=dir for the data and outputs)
# Reports numbers; passes or fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
SPARKTORCH=$BUILD/sparktorch
WORK=${WORK:-$BUILD/hogwild_bench}
WORKERS=${WORKERS:-1 2 4}
RATE_EPOCHS=${RATE_EPOCHS:-1}
ACC_WORKERS=${ACC_WORKERS:-2}
EPOCHS=${EPOCHS:-1 2 3 4 5 6 8 10}
TARGET=${TARGET:-0.85}
PARTS=${PARTS:-ab}
CMP_WORKERS=${CMP_WORKERS:-2 4}
CMP_EPOCHS=${CMP_EPOCHS:-3}
CMP_ROWS=${CMP_ROWS:-60000}
REPEATS=${REPEATS:-3}
SEED=0
LOCK=${LOCK:-}
export OMP_NUM_THREADS=1 OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
SPEC=$REPO/examples/fashion_mnist_mlp.json
mkdir -p "$WORK"
cd "$WORK"

# The data as sync_bench.sh writes it (reused from its directory when it is there).
for split in train test; do
  [[ -s $split.csv ]] && continue
  if [[ -s $BUILD/sync_bench/$split.csv && -s $BUILD/sync_bench/$split.labels ]]; then
    ln -f "$BUILD/sync_bench/$split.csv" "$BUILD/sync_bench/$split.labels" . 2>/dev/null ||
      cp "$BUILD/sync_bench/$split.csv" "$BUILD/sync_bench/$split.labels" .
    continue
  fi
  python3 "$REPO/examples/prepare_fashion_mnist.py" --split $split --format csv --out $split.csv.tmp \
    --labels-out $split.labels
  mv $split.csv.tmp $split.csv
done
[[ -s test.features ]] || cut -d, -f2- test.csv >test.features
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\t",1)[1])[sys.argv[2]])' "$1" "$2"; }
now() { date +%s.%N; }

SERVER_PID=
trap '[[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null; true' EXIT

# The rows hogwild and sync train on: train.csv, or its first $CMP_ROWS rows in part c.
TRAIN=train.csv

# shard N: $TRAIN dealt round-robin into shard.N.0 .. shard.N.(N-1) (named after $TRAIN), once.
shard() {
  SHARD=shard${TRAIN#train}
  SHARD=${SHARD%.csv}.$1
  [[ -s $SHARD.$(($1 - 1)) ]] && return
  if [[ $1 == 1 ]]; then ln -sf "$TRAIN" "$SHARD.0"; return; fi
  split -n r/"$1" -d -a 2 "$TRAIN" shard.tmp.
  for ((i = 0; i < $1; i++)); do mv "shard.tmp.$(printf %02d $i)" "$SHARD.$i"; done
}

# hogwild N E: a parameter server and N workers, each training E epochs on its shard. Writes
# model.pt, server.out (the server's summary record), worker.I (each worker's) and sets WALL.
hogwild() {
  local n=$1 e=$2 i t0 address
  shard "$n"
  rm -f port worker.*
  t0=$(now)
  "$SPARKTORCH" -q serve --mode hogwild -n "$n" --model "$SPEC" --listen 127.0.0.1:0 --port-file port \
    --seed "$SEED" -o model.pt ${LOCK:+--lock} >server.rec &
  SERVER_PID=$!
  until [[ -s port ]]; do  # the server writes it whole once it listens
    kill -0 "$SERVER_PID" 2>/dev/null || { wait "$SERVER_PID"; exit 1; }
    sleep 0.1
  done
  address=$(cat port)
  local pids=()
  for ((i = 0; i < n; i++)); do
    ("$SPARKTORCH" -q train --mode hogwild --server "$address" --rank $i --world-size "$n" \
      --label-col 0 -e "$e" --seed "$SEED" <"$SHARD.$i" | grep '^S' >"worker.$i") &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  wait "$SERVER_PID"
  SERVER_PID=
  grep '^S' server.rec >server.out
  WALL=$(python3 -c "print($(now) - $t0)")
}

# sync N E: as sync_bench.sh's train: N mpirun ranks (or one local process) on train.csv. Writes
# model.pt and out.0 (rank 0's summary record) and sets WALL.
sync_train() {
  local n=$1 e=$2 t0
  t0=$(now)
  if [[ $n == 1 ]]; then
    "$SPARKTORCH" -q train --model "$SPEC" --input "$TRAIN" --epochs "$e" --seed "$SEED" \
      --output model.pt | grep '^S' >out.0
  else
    local mpirun=(mpirun -np "$n")
    [[ $(id -u) == 0 ]] && mpirun+=(--allow-run-as-root)
    ((n > $(nproc))) && mpirun+=(--oversubscribe)
    "${mpirun[@]}" sh -c 'exec "$0" -q train "$@" | grep "^S" >out.$OMPI_COMM_WORLD_RANK' \
      "$SPARKTORCH" --model "$SPEC" --input "$TRAIN" --epochs "$e" --seed "$SEED" --output model.pt
  fi
  WALL=$(python3 -c "print($(now) - $t0)")
}

test_accuracy() {
  "$SPARKTORCH" -q predict --model model.pt --input test.features >pred.txt
  paste -d' ' pred.txt test.labels | awk '$1 == $2 {n++} END {printf "%.4f", n / NR}'
}

if [[ $PARTS == *a* ]]; then
  echo "== a: updates per second, $RATE_EPOCHS epoch(s) over 60,000 rows${LOCK:+, --lock}"
  printf '%-8s %8s %10s %12s %14s %16s %13s %12s %10s\n' workers updates server_s \
    updates/s train_upd/s samples/s/worker samples/s_all wait_server staleness
  for n in $WORKERS; do
    hogwild "$n" "$RATE_EPOCHS"
    python3 - "$n" server.out worker.* <<'EOF'
import json, sys
rec = lambda path: json.loads(open(path).read().split("\t", 1)[1])
n, server, workers = sys.argv[1], rec(sys.argv[2]), [rec(p) for p in sys.argv[3:3 + int(sys.argv[1])]]
window = max(w["elapsed"] for w in workers)
rates = [w["samples_per_second"] for w in workers]
wait = sum(w["server_seconds"] for w in workers) / sum(w["elapsed"] for w in workers)
print(f'{n:<8} {server["updates"]:>8} {server["total_seconds"]:>10.2f} '
      f'{server["updates"] / server["total_seconds"]:>12.0f} {server["updates"] / window:>14.0f} '
      f'{sum(rates) / len(rates):>16.0f} {sum(rates):>13.0f} {100 * wait:>11.0f}% '
      f'{server["staleness_mean"]:>10.2f}')
EOF
  done
  echo "(updates/s: over the server's total_seconds; train_upd/s: over the slowest worker's"
  echo " training time; samples/s: the workers' last epoch; wait_server: share of the workers'"
  echo " training time spent in pulls and pushes; staleness: mean versions behind per push)"
fi

if [[ $PARTS == *b* ]]; then
  echo "== b: time to $TARGET test accuracy, $ACC_WORKERS hogwild workers against $ACC_WORKERS sync ranks"
  printf '%-8s %7s %9s %10s %8s\n' mode epochs accuracy seconds wall_s
  results=()
  for mode in hogwild sync; do
    reached=""
    for e in $EPOCHS; do
      if [[ $mode == hogwild ]]; then
        hogwild "$ACC_WORKERS" "$e"
        secs=$(field server.out total_seconds)
      else
        sync_train "$ACC_WORKERS" "$e"
        secs=$(field out.0 total_seconds)
      fi
      acc=$(test_accuracy)
      printf '%-8s %7s %9s %10.1f %8.1f\n' $mode "$e" "$acc" "$secs" "$WALL"
      if awk -v a="$acc" -v t="$TARGET" 'BEGIN {exit !(a >= t)}'; then
        reached="$e epoch(s), $(printf %.1f "$secs") s ($(printf %.1f "$WALL") s wall)"
        break
      fi
    done
    results+=("$mode, $ACC_WORKERS workers: $TARGET after ${reached:-more than the epochs tried}")
  done
  printf '%s\n' "${results[@]}"
fi

if [[ $PARTS == *c* ]]; then
  echo "== c: test accuracy after $CMP_EPOCHS epochs over $CMP_ROWS rows, hogwild against sync, $REPEATS runs"
  if ((CMP_ROWS < 60000)); then
    TRAIN=train.$CMP_ROWS.csv
    [[ -s $TRAIN ]] || head -n "$CMP_ROWS" train.csv >"$TRAIN"
  fi
  printf '%-8s %8s %6s %9s %8s\n' mode workers seed accuracy wall_s
  summary=()
  for n in $CMP_WORKERS; do
    for mode in sync hogwild; do
      accs=()
      for ((SEED = 0; SEED < REPEATS; SEED++)); do
        if [[ $mode == hogwild ]]; then hogwild "$n" "$CMP_EPOCHS"; else sync_train "$n" "$CMP_EPOCHS"; fi
        accs+=("$(test_accuracy)")
        printf '%-8s %8s %6s %9s %8.1f\n' $mode "$n" "$SEED" "${accs[-1]}" "$WALL"
      done
      summary+=("$mode, $n workers: mean $(printf '%s\n' "${accs[@]}" |
        awk '{s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1}
             END {printf "%.4f (%.4f-%.4f)", s / NR, lo, hi}')")
    done
  done
  printf '%s\n' "${summary[@]}"
fi

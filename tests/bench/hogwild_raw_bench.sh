#!/usr/bin/env bash
# Hogwild against synchronous training on raw, unscaled inputs (issue 25): Fashion-MNIST pixels as
# the integers 0-255, as SparkTorch's own example feeds them, and the same rows scaled to [0, 1].
# The model is examples/fashion_mnist_mlp.json (Adam, lr 0.001), batch 64, 1 thread a process.
# The first $ROWS training rows are dealt into $WORKERS contiguous parts, one a worker (hogwild) or
# rank (sync, mpirun ranks reading their share of the same rows); every run trains $EPOCHS epochs
# and predicts the first $TEST_ROWS test rows with `sparktorch predict`. Cases ($CASES):
#   hogwild_raw     serve --mode hogwild and $WORKERS workers on the raw rows, $RUNS runs
#   sync_raw        mpirun -np $WORKERS sparktorch train on the raw rows, $SYNC_RUNS runs
#   hogwild_scaled  as hogwild_raw on the scaled rows, $RUNS runs
#   sync_scaled     as sync_raw on the scaled rows, $SYNC_RUNS runs
# Run r uses --seed r for the initial weights and the shuffles (a sync run is deterministic for
# its seed; a hogwild run is not: the order of pushes differs). Prints every run's test accuracy
# and the server's staleness, then each case's min / median / max.
# Usage: tests/bench/hogwild_raw_bench.sh [BUILD_DIR]   (default build; ROWS=10000, WORKERS=2,
#        EPOCHS=3, RUNS=5, SYNC_RUNS=3, TEST_ROWS=10000,
#        CASES="hogwild_raw sync_raw hogwild_scaled sync_scaled"; SERVE_FLAGS and TRAIN_FLAGS are
#        added to serve's and to the workers' or ranks' command lines, e.g. SERVE_FLAGS=--lock or
#        TRAIN_FLAGS="-b 128"; WORK=dir for the data and outputs)
# Reports numbers; passes or fails on nothing but errors. 3-8 s a run on 2 busy cores (about
# 1.5 minutes with the defaults).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
SPARKTORCH=$BUILD/sparktorch
WORK=${WORK:-$BUILD/hogwild_raw_bench}
ROWS=${ROWS:-10000}
WORKERS=${WORKERS:-2}
EPOCHS=${EPOCHS:-3}
RUNS=${RUNS:-5}
SYNC_RUNS=${SYNC_RUNS:-3}
TEST_ROWS=${TEST_ROWS:-10000}
CASES=${CASES:-hogwild_raw sync_raw hogwild_scaled sync_scaled}
read -r -a SERVE_FLAGS <<<"${SERVE_FLAGS:-}"
read -r -a TRAIN_FLAGS <<<"${TRAIN_FLAGS:-}"
export OMP_NUM_THREADS=1 OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
SPEC=$REPO/examples/fashion_mnist_mlp.json
mkdir -p "$WORK"
cd "$WORK"

# The rows: raw (0-255) and scaled (p/255, as examples/prepare_fashion_mnist.py writes them).
data=rows$ROWS.test$TEST_ROWS
if [[ ! -s $data.done ]]; then
  rm -f ./*.done part*
  for split in train test; do
    limit=$ROWS
    [[ $split == test ]] && limit=$TEST_ROWS
    python3 "$REPO/examples/prepare_fashion_mnist.py" --split $split --limit "$limit" --raw \
      --out $split.raw.csv --labels-out $split.labels
    python3 "$REPO/examples/prepare_fashion_mnist.py" --split $split --limit "$limit" \
      --out $split.scaled.csv
  done
  for scale in raw scaled; do cut -d, -f2- test.$scale.csv >test.$scale.features; done
  echo "$data" >"$data.done"
fi
for scale in raw scaled; do
  [[ -s part$WORKERS.$scale.00 ]] ||
    split -n l/"$WORKERS" -d -a 2 train.$scale.csv part$WORKERS.$scale.
done

SERVER_PID=
trap '[[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null; true' EXIT
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\t",1)[1])[sys.argv[2]])' "$1" "$2"; }

# hogwild SCALE SEED: a parameter server and $WORKERS workers on partN.SCALE.*; writes model.pt and
# server.out (the server's summary record).
hogwild() {
  local scale=$1 seed=$2 i address pids=()
  rm -f port
  "$SPARKTORCH" -q serve --mode hogwild -n "$WORKERS" --model "$SPEC" --listen 127.0.0.1:0 \
    --port-file port --seed "$seed" -o model.pt "${SERVE_FLAGS[@]}" >server.rec 2>server.err &
  SERVER_PID=$!
  until [[ -s port ]]; do  # the server writes it whole once it listens
    kill -0 "$SERVER_PID" 2>/dev/null || { cat server.err >&2; exit 1; }
    sleep 0.1
  done
  address=$(cat port)
  for ((i = 0; i < WORKERS; i++)); do
    "$SPARKTORCH" -q train --mode hogwild --server "$address" --rank $i --world-size "$WORKERS" \
      --label-col 0 -e "$EPOCHS" --seed "$seed" "${TRAIN_FLAGS[@]}" \
      <"part$WORKERS.$scale.$(printf %02d $i)" >worker.$i 2>worker.$i.err &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[i]}" || { cat worker.$i.err >&2; exit 1; }; done
  wait "$SERVER_PID" || { cat server.err >&2; exit 1; }
  SERVER_PID=
  grep '^S' server.rec >server.out
}

# sync SCALE SEED: mpirun -np $WORKERS ranks sharing train.SCALE.csv; writes model.pt.
sync_train() {
  local scale=$1 seed=$2 mpirun=(mpirun -np "$WORKERS")
  [[ $(id -u) == 0 ]] && mpirun+=(--allow-run-as-root)
  ((WORKERS > $(nproc))) && mpirun+=(--oversubscribe)
  "${mpirun[@]}" "$SPARKTORCH" -q train --model "$SPEC" --input train.$scale.csv --label-col 0 \
    --epochs "$EPOCHS" --seed "$seed" --output model.pt "${TRAIN_FLAGS[@]}" >/dev/null
}

test_accuracy() {  # test_accuracy SCALE
  "$SPARKTORCH" -q predict --model model.pt --input test.$1.features >pred.txt
  paste -d' ' pred.txt test.labels | awk '$1 == $2 {n++} END {printf "%.4f", n / NR}'
}

echo "Fashion-MNIST MLP (Adam lr 0.001), $ROWS rows over $WORKERS workers/ranks, batch 64," \
  "$EPOCHS epochs; test accuracy on $TEST_ROWS rows${SERVE_FLAGS[*]:+; serve ${SERVE_FLAGS[*]}}${TRAIN_FLAGS[*]:+; train ${TRAIN_FLAGS[*]}}"
for case in $CASES; do
  scale=${case#*_}
  runs=$RUNS
  [[ $case == sync_* ]] && runs=$SYNC_RUNS
  accuracies=()
  for ((seed = 0; seed < runs; seed++)); do
    start=$(date +%s.%N)
    if [[ $case == hogwild_* ]]; then
      hogwild "$scale" "$seed"
      extra="staleness mean $(field server.out staleness_mean), max $(field server.out staleness_max)"
    else
      sync_train "$scale" "$seed"
      extra=
    fi
    accuracy=$(test_accuracy "$scale")
    accuracies+=("$accuracy")
    printf '%-15s seed %d: test accuracy %s  (%.0f s%s)\n' "$case" "$seed" "$accuracy" \
      "$(echo "$(date +%s.%N) - $start" | bc)" "${extra:+; $extra}"
  done
  printf '%s\n' "${accuracies[@]}" | sort -n | awk -v c="$case" '{ a[NR] = $1 }
    END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
          printf "%-15s %d runs: min %.4f  median %.4f  max %.4f\n", c, NR, a[1], m, a[NR] }'
done

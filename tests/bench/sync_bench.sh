#!/usr/bin/env bash
# Synchronous training on Fashion-MNIST, 1 rank against 2 (man/sparktorch.1, PERFORMANCE: "Synchronous training"):
#   1. the gradient all-reduce's share of the step time for the MLP with 2 ranks, and the raw
#      MPI_Allreduce of the same buffer (allreduce_bench);
#   2. training samples/s, 1 rank against 2 ranks of 1 thread each;
#   3. time to 88% test accuracy, 1 and 2 ranks (trains E epochs for each E in $EPOCHS and
#      predicts the test split after each).
# Usage: tests/bench/sync_bench.sh [BUILD_DIR]   (default build; EPOCHS="4 6 8 10 12 14";
#        PARTS=12 runs parts 1 and 2 only)
# Reports numbers; passes or fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
SPARKTORCH=$BUILD/sparktorch
WORK=${WORK:-$BUILD/sync_bench}
EPOCHS=${EPOCHS:-4 6 8 10 12 14}
PARTS=${PARTS:-123}
export OMP_NUM_THREADS=1 OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
MPIRUN=(mpirun -np 2)
[[ $(id -u) == 0 ]] && MPIRUN+=(--allow-run-as-root)
mkdir -p "$WORK"
cd "$WORK"
for split in train test; do
  [[ -s $split.csv ]] && continue
  python3 "$REPO/examples/prepare_fashion_mnist.py" --split $split --format csv --out $split.csv.tmp \
    --labels-out $split.labels
  mv $split.csv.tmp $split.csv
done
cut -d, -f2- test.csv >test.features
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\t",1)[1])[sys.argv[2]])' "$1" "$2"; }
SPEC=$REPO/examples/fashion_mnist_mlp.json

# train RANKS EPOCHS: trains, writes model.pt and out.0 (rank 0's summary record).
train() {
  if [[ $1 == 1 ]]; then
    "$SPARKTORCH" -q train --model "$SPEC" --input train.csv --epochs "$2" --output model.pt | grep '^S' >out.0
  else
    "${MPIRUN[@]}" sh -c 'exec "$0" -q train "$@" | grep "^S" >out.$OMPI_COMM_WORLD_RANK' \
      "$SPARKTORCH" --model "$SPEC" --input train.csv --epochs "$2" --output model.pt
  fi
}

if [[ $PARTS == *1* || $PARTS == *2* ]]; then
echo "== 1, 2: the third epoch of the MLP (60,000 rows, batch 64 a rank; the first warms up)"
for ranks in 1 2; do
  train $ranks 3
  line="$ranks rank(s): $(field out.0 samples_per_second | cut -d. -f1) samples/s"
  if [[ $ranks == 2 ]]; then
    share=$(python3 -c "print(f'{100 * $(field out.0 allreduce_seconds) / $(field out.0 seconds):.1f}')")
    per_step=$(python3 -c "print(f'{1e6 * $(field out.0 allreduce_seconds) / $(field out.0 steps):.0f}')")
    line+=", all-reduce $per_step us a step, $share% of the epoch"
  fi
  echo "$line"
done
"${MPIRUN[@]}" "$BUILD/tests/bench/allreduce_bench"
fi

[[ $PARTS == *3* ]] || exit 0
echo "== 3: time to 88% test accuracy"
for ranks in 1 2; do
  reached=""
  for e in $EPOCHS; do
    train $ranks "$e"
    "$SPARKTORCH" -q predict --model model.pt --input test.features >pred.txt
    acc=$(paste -d' ' pred.txt test.labels | awk '$1 == $2 {n++} END {printf "%.4f", n / NR}')
    secs=$(field out.0 total_seconds)
    echo "$ranks rank(s), $e epochs: test accuracy $acc, $(printf %.1f "$secs") s"
    if awk -v a="$acc" 'BEGIN {exit !(a >= 0.88)}'; then
      reached="$e epochs, $(printf %.1f "$secs") s"
      break
    fi
  done
  echo "$ranks rank(s): 88% after ${reached:-more than the epochs tried}"
done

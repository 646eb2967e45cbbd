#!/usr/bin/env bash
# --steps-per-epoch (man sparktorch): an epoch of N steps of --batch-size rows, drawn on from
# shuffled passes over the rows (Keras's steps_per_epoch; SparkTorch's iters with a miniBatch):
# the metrics and the manifest count them; a batch larger than the rows takes them all; two
# ranks with unequal rows under mpirun take the same steps and end with the same weights.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sync_lib.sh"
setup_workdir steps_per_epoch
require_data train2k.csv

MLP="$REPO/examples/fashion_mnist_mlp.json"
ERR="sparktorch: error:"
TRAIN=("$SPARKTORCH" -q train --model "$MLP" --input "$DATA/train2k.csv" --seed 2)

# epochs_field FILE KEY: KEY of every epoch in a --metrics file, space-separated.
epochs_field() {
  python3 -c '
import json, sys
print(" ".join(str(json.loads(l)[sys.argv[2]]) for l in open(sys.argv[1])))' "$1" "$2"
}

check "3 epochs of 5 steps of 64 rows: 5 steps and 320 rows an epoch, in the manifest too"
run_ok fixed.records "${TRAIN[@]}" --epochs 3 --steps-per-epoch 5 --batch-size 64 \
  --metrics fixed.metrics -o fixed.pt
assert_eq "5 5 5" "$(epochs_field fixed.metrics steps)" "each epoch's steps"
assert_eq "320 320 320" "$(epochs_field fixed.metrics rows)" "each epoch's rows"
run_ok inspect.json "$SPARKTORCH" inspect fixed.pt --json
assert_eq 5 "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifest"]["training"]["steps_per_epoch"])' inspect.json)" \
  "the manifest's training.steps_per_epoch"
# Without the flag, an epoch is a pass: 2000 rows, 32 steps.
run_ok pass.records "${TRAIN[@]}" --epochs 1 --batch-size 64 --metrics pass.metrics -o pass.pt
assert_eq "32|2000" "$(epochs_field pass.metrics steps)|$(epochs_field pass.metrics rows)" \
  "a pass: steps and rows"

check "a batch larger than the rows: each of the 2 steps takes all 2000"
run_ok whole.records "${TRAIN[@]}" --epochs 1 --steps-per-epoch 2 --batch-size -1 \
  --metrics whole.metrics -o whole.pt
assert_eq "2|4000" "$(epochs_field whole.metrics steps)|$(epochs_field whole.metrics rows)" \
  "steps and rows"

check "mpirun -np 2 with 80 and 40 rows, 6 steps of 32: the same steps, the same weights"
split_rows "$DATA/train2k.csv" 80 40
rc=0
mpirun -np 2 sh -c 'exec "$0" train "$@" >"out.$OMPI_COMM_WORLD_RANK" 2>"err.$OMPI_COMM_WORLD_RANK"' \
  "$SPARKTORCH" --model "$MLP" --epochs 2 --steps-per-epoch 6 --batch-size 32 --seed 1 \
  --input part0.csv part1.csv --output sync.pt >mpirun.log 2>&1 || rc=$?
assert_eq 0 "$rc" "mpirun's exit status ($(cat mpirun.log err.0 err.1 | tail -5))"
assert_eq "6 6" "$(summary_field out.0 steps) $(summary_field out.1 steps)" "each rank's steps"
assert_eq "$(summary_field out.0 weights_crc32)" "$(summary_field out.1 weights_crc32)" \
  "weights checksum of rank 1 against rank 0"

check "--steps-per-epoch must not be negative"
expect_exit 2 "$ERR --steps-per-epoch must be a number of steps, or 0 for a pass over the rows" --stdout-empty \
  -- "${TRAIN[@]}" --steps-per-epoch -1

#!/usr/bin/env bash
# Two ranks under mpirun, each with batch 16, train the same weights as one process with batch
# 32 over the same rows (man sparktorch, SYNCHRONOUS TRAINING): gradients are averaged weighted
# by rows, so one step of two ranks is one step over the union of their batches. The rows are
# arranged so that the single process's k-th batch is the union of the ranks' k-th batches.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sync_lib.sh"
setup_workdir sync_equals_local
require_data train2k.csv
write_mlp_spec spec.json

# 5 steps: 80 rows a rank, in blocks of 16; the single process sees block 0 of rank 0, block 0
# of rank 1, block 1 of rank 0, ...
split_rows "$DATA/train2k.csv" 80 80
python3 - <<'PY'
a = open("part0.csv").read().splitlines()
b = open("part1.csv").read().splitlines()
with open("interleaved.csv", "w") as out:
    for k in range(0, 80, 16):
        out.write("\n".join(a[k:k + 16] + b[k:k + 16]) + "\n")
PY
COMMON=(--model spec.json --epochs 1 --no-shuffle --seed 3)

check "mpirun -np 2, batch 16 a rank: both ranks finish with the same weights"
rc=0
mpirun -np 2 sh -c 'exec "$0" train "$@" >"out.$OMPI_COMM_WORLD_RANK" 2>"err.$OMPI_COMM_WORLD_RANK"' \
  "$SPARKTORCH" "${COMMON[@]}" --batch-size 16 --input part0.csv part1.csv --output sync.pt \
  >mpirun.log 2>&1 || rc=$?
assert_eq 0 "$rc" "mpirun's exit status ($(cat mpirun.log err.0 err.1 | tail -5))"
assert_eq sync "$(summary_field out.0 mode)" "rank 0's mode"
assert_eq 80 "$(summary_field out.0 partition_rows)" "rank 0's rows (part0.csv)"
assert_eq 80 "$(summary_field out.1 partition_rows)" "rank 1's rows (part1.csv)"
assert_eq 5 "$(summary_field out.0 steps)" "steps in the epoch"
assert_eq "$(summary_field out.0 weights_crc32)" "$(summary_field out.1 weights_crc32)" \
  "weights checksum of rank 1 against rank 0"
[[ -s sync.pt ]] || fail "rank 0 wrote no sync.pt"

check "one process, batch 32 over the interleaved rows: the same weights within 1e-4"
run_ok local.records "$SPARKTORCH" train "${COMMON[@]}" --batch-size 32 --input interleaved.csv \
  --output local.pt
# And one with batch 16, which takes other steps: the comparison must be able to fail.
run_ok other.records "$SPARKTORCH" train "${COMMON[@]}" --batch-size 16 --input interleaved.csv \
  --output other.pt
/usr/bin/python3 - <<'PY' >compare.txt || fail "comparing the weights: $(cat compare.txt)"
import torch
def weights(path):
    return [p.detach() for p in torch.jit.load(path).parameters()]
def worst(a, b):
    return max(((x - y).abs().max() / y.abs().max()).item() for x, y in zip(a, b))
sync, local, other = weights("sync.pt"), weights("local.pt"), weights("other.pt")
print(worst(sync, local), worst(other, local))
PY
read -r same differ <compare.txt
assert_cmp "$same" "<=" 1e-4 "largest relative difference, 2 ranks against 1 process"
assert_cmp "$differ" ">" 1e-3 "largest relative difference of a run with other steps"

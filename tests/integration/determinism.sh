#!/usr/bin/env bash
# The same seed, rows and threads give the same model (man sparktorch, --seed): the initial
# weights, dropout, the validation split and the shuffling all follow the seed, so two runs
# predict byte for byte alike; another seed gives another model.
source "$(dirname "$0")/lib.sh"
setup_workdir determinism
require_data train2k.csv test2k.csv

# The MLP with dropout, so that dropout masks depend on the seed too.
cat >spec.json <<'EOF'
{"layers": [{"type": "linear", "in_features": 784, "out_features": 128}, "relu",
            {"type": "dropout", "p": 0.2},
            {"type": "linear", "in_features": 128, "out_features": 10}],
 "loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}
EOF

# train_run NAME SEED THREADS ROWS: trains with shuffling and a validation split; writes
# NAME.pt, NAME.records (P and S records), NAME.losses (the metrics without timings) and
# NAME.vector (predict --prediction vector on the test rows).
train_run() {
  local name=$1 seed=$2 threads=$3 rows=$4
  head -n "$rows" "$DATA/train2k.csv" >"rows$rows.csv"
  run_ok "$name.records" "$SPARKTORCH" train --model spec.json --input "rows$rows.csv" \
    --epochs 2 --batch-size 32 --validation-pct 0.1 --seed "$seed" --threads "$threads" \
    --predict --prediction vector --metrics "$name.metrics" --output "$name.pt"
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    print(m["epoch"], repr(m["train_loss"]), repr(m["validation_loss"]), m["validation_accuracy"])
' "$name.metrics" >"$name.losses"
  run_ok "$name.vector" "$SPARKTORCH" predict --model "$name.pt" --input "$DATA/test2k.csv" \
    --prediction vector --threads "$threads"
}

check "two runs with seed 11, 1 thread: byte-identical predictions"
train_run a 11 1 2000
train_run b 11 1 2000
assert_lines 2 a.losses "epochs in the metrics"
assert_same_file a.losses b.losses "per-epoch train and validation losses"
grep $'^P\t' a.records >a.p
grep $'^P\t' b.records >b.p
assert_lines 2000 a.p "train --predict records"
assert_same_file a.p b.p "train --predict --prediction vector records"
assert_lines 2000 a.vector "vector predictions of the test rows"
assert_same_file a.vector b.vector "predict --prediction vector on the test rows"

check "seed 12 gives another model"
train_run c 12 1 2000
if cmp -s a.vector c.vector; then fail "seeds 11 and 12 predict the test rows identically"; fi
echo "  ok: seed 12's vector predictions differ from seed 11's"
assert_ne "$(head -n 1 a.losses)" "$(head -n 1 c.losses)" "first epoch's losses, seed 12 vs 11"

check "two runs with seed 11, 2 threads: byte-identical predictions"
train_run d 11 2 500
train_run e 11 2 500
assert_same_file d.losses e.losses "per-epoch losses (2 threads)"
assert_same_file d.vector e.vector "predict --prediction vector (2 threads)"

#!/usr/bin/env bash
# Metrics that fit the loss, a binary classifier's predictions and class weights (man sparktorch,
# METRICS, --prediction): a binary job (footwear or not) reports accuracy, precision, recall and
# AUC (a hogwild server too, from its workers' sums) and predicts 0 or 1 by default, its
# probabilities on request; a regression reports mse (its training loss), mae and r2; a weight
# per class of the wrong length is refused.
source "$(dirname "$0")/lib.sh"
setup_workdir metrics
require_data train2k.csv test2k.csv test2k.labels

ERR="sparktorch: error:"
# Fashion-MNIST as a binary task: 1 for footwear (sandal 5, sneaker 7, ankle boot 9), else 0.
awk -F, 'BEGIN { OFS = "," } { $1 = ($1 == 5 || $1 == 7 || $1 == 9) ? 1 : 0; print }' \
  "$DATA/train2k.csv" >binary_train.csv
awk -F, 'BEGIN { OFS = "," } { $1 = ($1 == 5 || $1 == 7 || $1 == 9) ? 1 : 0; print }' \
  "$DATA/test2k.csv" >binary_test.csv
awk '{ print ($1 == 5 || $1 == 7 || $1 == 9) ? 1 : 0 }' "$DATA/test2k.labels" >binary_test.labels
cat >binary.json <<'JSON'
{"layers": [{"type": "linear", "in_features": 784, "out_features": 64}, {"type": "relu"},
            {"type": "linear", "in_features": 64, "out_features": 1}],
 "loss": {"type": "bce_with_logits", "pos_weight": [1.5]},
 "optimizer": {"type": "adam", "lr": 0.002}}
JSON

# last_field METRICS KEY: KEY of the last line of a --metrics file ("<absent>" when not there).
last_field() {
  tail -n 1 "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], "<absent>"))' "$2"
}

check "a binary classifier: accuracy, precision, recall, AUC, in --metrics and the progress line"
run_ok binary.records "$SPARKTORCH" train --model binary.json --input binary_train.csv --epochs 3 \
  --validation-pct 0.2 --metrics binary.metrics -o binary.pt
for key in train_accuracy train_precision train_recall train_auc validation_accuracy \
  validation_precision validation_recall validation_auc; do
  assert_cmp "$(last_field binary.metrics "$key")" ">" 0.9 "$key after 3 epochs"
done
grep -qE "epoch 3/3: loss [0-9.]+ accuracy [0-9.]+ precision [0-9.]+ recall [0-9.]+ auc [0-9.]+ val_loss [0-9.]+ val_accuracy [0-9.]+ val_precision [0-9.]+ val_recall [0-9.]+ val_auc [0-9.]+ \|" \
  binary.records.err || fail "no progress line with the binary metrics: $(grep 'epoch 3/3' binary.records.err)"
assert_eq '{"pos_weight": [1.5], "type": "bce_with_logits"}' \
  "$("$SPARKTORCH" inspect binary.pt --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["manifest"]["loss"], sort_keys=True))')" \
  "the manifest's loss with its pos_weight"

check "a hogwild server adds up its workers' metric sums: the binary metrics in its progress line and history"
split_rows binary_train.csv 1000 1000
"$SPARKTORCH" serve --mode hogwild -n 2 --model binary.json --listen 127.0.0.1:0 \
  --port-file server.port -o hogwild.pt >server.out 2>server.err &
server_pid=$!
trap 'kill -9 $(jobs -p) 2>/dev/null || true' EXIT
wait_port_file "$server_pid" server.port server server.err
worker_pids=()
for i in 0 1; do
  "$SPARKTORCH" -q train --mode hogwild --server "$(cat server.port)" --rank "$i" --world-size 2 \
    --label-col 0 -e 2 --validation-pct 0.2 <"part$i.csv" >"worker.$i" 2>"worker.$i.err" &
  worker_pids+=($!)
done
for i in 0 1; do
  wait_for "${worker_pids[i]}"
  assert_eq 0 "$RC" "worker $i's exit status ($(tail -2 "worker.$i.err"))"
done
wait_for "$server_pid"
assert_eq 0 "$RC" "the server's exit status ($(tail -2 server.err))"
grep -qE "epoch 2/2: loss [0-9.]+ accuracy [0-9.]+ precision [0-9.]+ recall [0-9.]+ auc [0-9.]+ val_loss [0-9.]+ val_accuracy [0-9.]+ val_precision [0-9.]+ val_recall [0-9.]+ val_auc [0-9.]+ \| 2 workers" \
  server.err || fail "no server progress line with the binary metrics: $(grep 'epoch 2/2' server.err)"
"$SPARKTORCH" inspect hogwild.pt --json >hogwild.json
for key in train_auc validation_auc train_precision validation_recall; do
  assert_cmp "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifest"]["history"][-1][sys.argv[2]])' \
    hogwild.json "$key")" ">" 0.85 "the served model's last epoch $key"
done

check "it predicts the class by default, the probability on request"
run_ok binary.pred "$SPARKTORCH" predict --model binary.pt --input binary_test.csv
assert_eq 0 "$(grep -cvxE '[01]' binary.pred || true)" "lines that are not 0 or 1"
assert_cmp "$(accuracy binary.pred binary_test.labels)" ">" 0.95 "test accuracy"
run_ok binary.prob "$SPARKTORCH" predict --model binary.pt --input binary_test.csv --prediction probabilities
python3 - binary.prob binary.pred <<'PY' || fail "probabilities and classes disagree"
import sys
probabilities = [float(line) for line in open(sys.argv[1])]
classes = [int(line) for line in open(sys.argv[2])]
assert all(0 <= p <= 1 for p in probabilities)
assert [int(p >= 0.5) for p in probabilities] == classes
PY
echo "  ok: the probabilities, in [0, 1], are at least 0.5 exactly where the class is 1"

check "a regression: mse (its training loss), mae and r2"
# The target: the mean of the pixels, already in [0, 1].
python3 - "$DATA/train2k.csv" >regression.csv <<'PY'
import sys
for line in open(sys.argv[1]):
    pixels = [float(v) for v in line.strip().split(",")[1:]]
    print(",".join([repr(sum(pixels) / len(pixels))] + line.strip().split(",")[1:]))
PY
run_ok regression.records "$SPARKTORCH" train --model binary.json --loss mse --input regression.csv \
  --epochs 3 --metrics regression.metrics
assert_eq "<absent>" "$(last_field regression.metrics train_accuracy)" "a regression's accuracy"
loss=$(last_field regression.metrics train_loss)
mse=$(last_field regression.metrics train_mse)
assert_cmp "$(python3 -c "print(abs($mse - $loss) / $loss)")" "<" 1e-5 "train_mse against train_loss ($loss)"
assert_cmp "$(last_field regression.metrics train_mae)" ">" 0 "train_mae"
assert_cmp "$(last_field regression.metrics train_r2)" ">" 0.5 "train_r2 after 3 epochs"
grep -qE "epoch 3/3: loss [0-9.]+ mse [0-9.]+ mae [0-9.]+ r2 [-0-9.]+ \|" regression.records.err ||
  fail "no progress line with mse, mae and r2: $(grep 'epoch 3/3' regression.records.err)"

check "weights that do not fit the model are refused"
expect_exit 4 "$ERR loss (cross_entropy): \"weight\" has 3 numbers for 10 classes" --stdout-empty -- \
  "$SPARKTORCH" -q train --model "$REPO/examples/fashion_mnist_mlp.json" --input "$DATA/train2k.csv" \
  --train-config <(echo '{"loss": {"type": "cross_entropy", "weight": [1, 2, 3]}}')

#!/usr/bin/env bash
# The Fashion-MNIST MLP spec, trained 3 epochs on 12,000 rows, predicts the first 2,000 test rows
# well (measured: test accuracy 0.835 with --seed 1), and its summary record agrees with the run.
source "$(dirname "$0")/lib.sh"
setup_workdir train_mlp
require_data train12k.csv test2k.csv test2k.labels

check "train the MLP on 12,000 rows, 3 epochs, --output: stdout holds the summary alone"
run_ok records.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_mlp.json" \
  --input "$DATA/train12k.csv" --epochs 3 --seed 1 --output mlp.pt
assert_lines 1 records.txt "records on stdout"
assert_eq S "$(cut -f1 records.txt)" "tag of the only record"

check "summary fields"
assert_eq 12000 "$(summary_field records.txt rows_read)" "rows_read"
assert_eq 0 "$(summary_field records.txt rows_skipped)" "rows_skipped"
assert_eq 0 "$(summary_field records.txt validation_rows)" "validation_rows"
assert_eq 3 "$(summary_field records.txt epochs)" "epochs"
assert_eq false "$(summary_field records.txt stopped_early)" "stopped_early"
assert_eq mlp.pt "$(summary_field records.txt model_path)" "model_path"
assert_cmp "$(summary_field records.txt train_loss)" "<" 0.6 "final train_loss (measured 0.43)"
assert_cmp "$(summary_field records.txt train_accuracy)" ">" 0.78 \
  "final train_accuracy (measured 0.845)"

check "predict the 2,000 test rows: one class 0-9 per row"
run_ok predictions.txt "$SPARKTORCH" predict --model mlp.pt --input "$DATA/test2k.csv"
assert_lines 2000 predictions.txt "prediction lines"
assert_eq 0 "$(grep -cvE '^[0-9]$' predictions.txt || true)" "lines that are not a class 0-9"
assert_cmp "$(accuracy predictions.txt "$DATA/test2k.labels")" ">=" 0.80 \
  "test accuracy (measured 0.835)"

check "--output to a FIFO writes through it and leaves it a FIFO (a rename would replace it)"
rm -f model.fifo
mkfifo model.fifo
cat model.fifo >from_fifo.pt &
reader=$!
run_ok fifo_records.txt "$SPARKTORCH" -q train --model mlp.pt --epochs 1 --output model.fifo \
  --input "$DATA/train2k.csv"
wait_for "$reader"
[[ -p model.fifo ]] || fail "model.fifo is no longer a FIFO: $(ls -l model.fifo)"
run_ok fifo_inspect.txt "$SPARKTORCH" inspect from_fifo.pt
grep -q "trainable parameters: 269322" fifo_inspect.txt ||
  fail "the model read from the FIFO: $(head -3 fifo_inspect.txt)"

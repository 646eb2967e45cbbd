#!/usr/bin/env bash
# The Fashion-MNIST CNN spec (input_shape 1,28,28 over flat csv rows) learns from 3,000 rows in
# one epoch with 2 threads (measured: test accuracy 0.645, about 30 s on 2 busy cores).
source "$(dirname "$0")/lib.sh"
setup_workdir train_cnn
require_data train12k.csv test2k.csv test2k.labels

head -n 3000 "$DATA/train12k.csv" >train3k.csv

check "train the CNN on 3,000 rows, 1 epoch, 2 threads"
run_ok records.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_cnn.json" \
  --input train3k.csv --epochs 1 --threads 2 --output cnn.pt
assert_eq 3000 "$(summary_field records.txt rows_read)" "rows_read"
assert_eq 1 "$(summary_field records.txt epochs)" "epochs"

check "predict the 2,000 test rows"
run_ok predictions.txt "$SPARKTORCH" predict --model cnn.pt --input "$DATA/test2k.csv" --threads 2
assert_cmp "$(accuracy predictions.txt "$DATA/test2k.labels")" ">=" 0.55 \
  "test accuracy (measured 0.645)"

#!/usr/bin/env bash
# Fixture (integration.data): writes the Fashion-MNIST subsets the other tests read, once, into
# $DATA:
#   train12k.csv                the first 12,000 training rows
#   test2k.csv, test2k.labels   the first 2,000 test rows and their labels
#   train2k.FORMAT              the first 2,000 training rows in each row format
source "$(dirname "$0")/lib.sh"
setup_workdir data

FORMATS=(csv libsvm vector jsonl compact)

prepare() {  # prepare SPLIT FORMAT LIMIT OUT [more flags]: writes $DATA/OUT unless it is there.
  [[ -s "$DATA/$4" ]] && return
  python3 "$REPO/examples/prepare_fashion_mnist.py" --split "$1" --format "$2" --limit "$3" \
    --out "$DATA/$4.tmp" "${@:5}"
  mv "$DATA/$4.tmp" "$DATA/$4"
}

mkdir -p "$DATA"
check "Fashion-MNIST subsets in $DATA"
prepare train csv 12000 train12k.csv
prepare test csv 2000 test2k.csv --labels-out "$DATA/test2k.labels"
for format in "${FORMATS[@]}"; do
  prepare train "$format" 2000 "train2k.$format"
done

assert_lines 12000 "$DATA/train12k.csv" "rows in train12k.csv"
assert_lines 2000 "$DATA/test2k.csv" "rows in test2k.csv"
assert_lines 2000 "$DATA/test2k.labels" "labels in test2k.labels"
for format in "${FORMATS[@]}"; do
  assert_lines 2000 "$DATA/train2k.$format" "rows in train2k.$format"
done

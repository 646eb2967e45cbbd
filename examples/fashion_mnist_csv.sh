# shellcheck shell=bash
# Sourced by the examples: writes out/fashion_train.csv and out/fashion_test.csv (label first,
# then 784 pixels) from Debian's dataset-fashion-mnist, unless they are there already. Needs
# `step` (prints a progress line) and `python` (a Python 3) from the sourcing script.
mkdir -p out
for split in train test; do
  csv=out/fashion_$split.csv
  if [[ -s $csv ]]; then
    step "reusing $csv"
  else
    step "writing $csv"
    "$python" examples/prepare_fashion_mnist.py --split "$split" --out "$csv.tmp"
    mv "$csv.tmp" "$csv"
  fi
done

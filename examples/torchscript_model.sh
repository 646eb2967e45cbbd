#!/usr/bin/env bash
# A model written in Python, trained by sparktorch, back in Python: examples/torchscript_model.py
# writes a small residual CNN (plain torch.nn, scripted with torch.jit.script) as net.pt and its
# loss and optimizer as net.json beside it; `sparktorch train --model net.pt` trains it on
# Fashion-MNIST; `sparktorch predict` gives the test accuracy; then the Python script loads the
# trained model with torch.jit.load, reads its manifest, loads its state_dict into a fresh
# instance of its class and checks that both give the same outputs and the same classes as
# `sparktorch predict`. Runs from any directory; builds sparktorch first (as
# examples/quickstart.sh does) when BUILD_DIR has none.
# Measured on a 2-core machine, 1 thread: 60,000 rows x 2 epochs trained in 36 to 45 s (3,300 to
# 2,700 rows/s, the cores shared with other work), the whole script in 44 to 53 s; test accuracy
# 89.81% (the same every run: seeded weights and shuffling; 90.04% with THREADS=2, which is
# several times slower when the cores are busy).
#   EPOCHS        training epochs (default: 2)     THREADS    passed to --threads when set
#   BUILD_DIR     build folder (default: build/)   PYTHON     interpreter for the data script
#   TORCH_PYTHON  a Python that imports torch (default: /usr/bin/python3, Debian's python3-torch)
# Outputs go to out/torchscript_model/: net.pt and net.json (untrained), trained.pt,
# train.records (the summary record), test.predictions and check.txt (what the check printed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
sparktorch=$build_dir/sparktorch
epochs=${EPOCHS:-2}
torch_python=${TORCH_PYTHON:-/usr/bin/python3}
train_csv=out/fashion_train.csv
test_csv=out/fashion_test.csv
dir=out/torchscript_model

example=torchscript_model
source examples/common.sh
now() { date +%s.%N; }

[[ $epochs =~ ^[1-9][0-9]*$ ]] || die "EPOCHS must be a positive number, not '$epochs'"
"$torch_python" -c 'import torch, numpy' 2>/dev/null ||
  die "$torch_python cannot import torch and numpy (Debian: apt-get install python3-torch" \
    "python3-numpy, or set TORCH_PYTHON)"

ensure_built

source examples/fashion_mnist_csv.sh
train_rows=$(wc -l <"$train_csv")
test_rows=$(wc -l <"$test_csv")
rm -rf "$dir"
mkdir -p "$dir"

step "writing the Python model: $torch_python examples/torchscript_model.py --out $dir"
"$torch_python" examples/torchscript_model.py --out "$dir"

step "training $dir/net.pt for $epochs epochs (loss and optimizer from $dir/net.json)"
start=$(now)
"$sparktorch" train --model "$dir/net.pt" --input "$train_csv" --epochs "$epochs" \
  "${threads[@]}" --output "$dir/trained.pt" >"$dir/train.records"
train_seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')

correct=$(test_correct "$dir/trained.pt" "$dir/test.predictions")

step "checking $dir/trained.pt in Python: torch.jit.load, manifest, load_state_dict, outputs"
"$torch_python" examples/torchscript_model.py --check "$dir/trained.pt" --rows "$test_csv" \
  --limit 1000 --predictions "$dir/test.predictions" >"$dir/check.txt" ||
  die "the Python check failed (see above; $dir/check.txt has what it printed)"
sed 's/^/  /' "$dir/check.txt" >&2

echo
echo "Fashion-MNIST, FashionResNet of examples/torchscript_model.py (TorchScript from Python)"
awk -v rows="$train_rows" -v epochs="$epochs" -v s="$train_seconds" -v trows="$test_rows" \
  -v correct="$correct" -v dir="$dir" 'BEGIN {
  printf "  training       %d rows x %d epochs in %.1f s (start-up included): %.0f rows/s\n", rows, epochs, s, rows * epochs / s
  printf "  test accuracy  %.2f%% (%d of %d)\n", 100 * correct / trows, correct, trows
  printf "  Python check   passed: the trained %s/trained.pt loads into the torch.nn class\n", dir
}'

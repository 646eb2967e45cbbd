#!/usr/bin/env bash
# Side-by-side benchmark: sparktorch against the same work in Python with PyTorch.
#
# On Fashion-MNIST as CSV (prepared into out/ once, then reused) it times, as wall seconds from
# process start to finish (so reading and parsing the CSV counts on both sides):
#   train    one epoch of the 784-256-256-10 MLP of examples/fashion_mnist_mlp.json, Adam,
#            cross-entropy, batch 64, 60,000 rows on stdin, model saved to a file;
#            against tests/bench/torch_baseline.py train doing the same in PyTorch;
#   predict  the 10,000 test rows in batches of 1024 with the model sparktorch trained;
#            against torch_baseline.py predict loading that model with torch.jit.load.
# Both sides get the same thread count. It prints a table with the ratio python/sparktorch
# (above 1: sparktorch is faster) and the test accuracy of both predictions, which must be
# identical line for line (the exit code is 1 when they are not). Timings never fail the run.
#
#   THREADS       threads for both sides (default: 1)
#   BUILD_DIR     build folder (default: build/); SPARKTORCH overrides the binary itself
#   TORCH_PYTHON  a Python that imports torch (default: /usr/bin/python3, else python3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

threads=${THREADS:-1}
sparktorch=${SPARKTORCH:-${BUILD_DIR:-build}/sparktorch}
spec=examples/fashion_mnist_mlp.json
baseline=tests/bench/torch_baseline.py

step() { echo "== $*" >&2; }
now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

torch_python=
for candidate in ${TORCH_PYTHON:-} /usr/bin/python3 python3; do
  if "$candidate" -c 'import torch, numpy' 2>/dev/null; then
    torch_python=$candidate
    break
  fi
done
if [[ -z $torch_python ]]; then
  echo "compare_python: no Python here imports torch and numpy" \
    "(Debian: apt-get install python3-torch python3-numpy, or set TORCH_PYTHON)" >&2
  exit 1
fi

if [[ ! -x $sparktorch ]]; then
  step "no $sparktorch: building (examples/build.sh)"
  examples/build.sh
fi

mkdir -p out
for split in train test; do
  csv=out/fashion_$split.csv
  if [[ ! -s $csv ]]; then
    step "writing $csv"
    "$torch_python" examples/prepare_fashion_mnist.py --split "$split" --out "$csv.tmp"
    mv "$csv.tmp" "$csv"
  fi
done
train_rows=$(wc -l < out/fashion_train.csv)
test_rows=$(wc -l < out/fashion_test.csv)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cores=$(nproc)  # before the export below: GNU nproc obeys OMP_NUM_THREADS
# OpenBLAS (which LibTorch calls for matrix products here) starts one thread per core unless
# told otherwise, in both processes; pin it so that both sides really use $threads.
export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads

step "sparktorch train: 1 epoch, batch 64, $threads thread(s)"
start=$(now)
"$sparktorch" train --model "$spec" --epochs 1 --batch-size 64 --threads "$threads" \
  --validation-pct 0 --output "$tmp/sparktorch_mlp.pt" < out/fashion_train.csv > "$tmp/sparktorch_train.out"
st_train=$(seconds_since "$start")

step "PyTorch train ($torch_python $baseline): 1 epoch, batch 64, $threads thread(s)"
start=$(now)
"$torch_python" "$baseline" train --epochs 1 --batch-size 64 --lr 0.001 --threads "$threads" \
  --output "$tmp/python_mlp.pt" < out/fashion_train.csv > "$tmp/python_train.out"
py_train=$(seconds_since "$start")

step "sparktorch predict: batch 1024"
start=$(now)
"$sparktorch" predict --model "$tmp/sparktorch_mlp.pt" --batch-size 1024 --threads "$threads" \
  < out/fashion_test.csv > "$tmp/sparktorch.predictions"
st_predict=$(seconds_since "$start")

step "PyTorch predict with the model sparktorch trained: batch 1024"
start=$(now)
"$torch_python" "$baseline" predict --model "$tmp/sparktorch_mlp.pt" --batch-size 1024 \
  --threads "$threads" < out/fashion_test.csv > "$tmp/python.predictions"
py_predict=$(seconds_since "$start")

step "PyTorch predict with the model PyTorch trained (not timed)"
"$torch_python" "$baseline" predict --model "$tmp/python_mlp.pt" --batch-size 1024 \
  --threads "$threads" < out/fashion_test.csv > "$tmp/python_model.predictions" 2>/dev/null

# Prints "correct rows" of a predictions file against the test labels.
score() {
  cut -d, -f1 out/fashion_test.csv | paste -d' ' - "$1" |
    awk '$2 != "" && $1 + 0 == $2 + 0 { n++ } END { print n + 0, NR }'
}
read -r st_correct _ < <(score "$tmp/sparktorch.predictions")
read -r py_correct _ < <(score "$tmp/python.predictions")
read -r pm_correct _ < <(score "$tmp/python_model.predictions")
differing=$(paste -d' ' "$tmp/sparktorch.predictions" "$tmp/python.predictions" |
  awk 'NF != 2 || $1 + 0 != $2 + 0 { n++ } END { print n + 0 }')
st_count=$(wc -l < "$tmp/sparktorch.predictions")
py_count=$(wc -l < "$tmp/python.predictions")

torch_version=$("$torch_python" -c 'import torch; print(torch.__version__)')
st_version=$("$sparktorch" --version 2>/dev/null | head -n1 || true)

awk -v threads="$threads" -v cores="$cores" -v tv="$torch_version" -v sv="${st_version:-sparktorch}" \
  -v rows="$train_rows" -v trows="$test_rows" \
  -v st_t="$st_train" -v py_t="$py_train" -v st_p="$st_predict" -v py_p="$py_predict" \
  -v st_c="$st_correct" -v py_c="$py_correct" -v pm_c="$pm_correct" 'BEGIN {
  printf "\nFashion-MNIST MLP 784-256-256-10, CSV on stdin, %d thread(s) each, %d cores\n", threads, cores
  printf "sparktorch: %s    PyTorch: %s (Python)\n\n", sv, tv
  printf "%-34s %12s %12s %18s\n", "", "sparktorch", "PyTorch", "python/sparktorch"
  printf "%-34s %12.2f %12.2f %17.2fx\n", "train 1 epoch (" rows " rows), wall s", st_t, py_t, py_t / st_t
  printf "%-34s %12.0f %12.0f\n", "train rows/s", rows / st_t, rows / py_t
  printf "%-34s %12.2f %12.2f %17.2fx\n", "predict (" trows " rows), wall s", st_p, py_p, py_p / st_p
  printf "%-34s %12.0f %12.0f\n", "predict rows/s", trows / st_p, trows / py_p
  printf "%-34s %11.2f%% %11.2f%%\n", "test accuracy, sparktorch model", 100 * st_c / trows, 100 * py_c / trows
  printf "%-34s %12s %11.2f%%\n", "test accuracy, PyTorch model", "", 100 * pm_c / trows
}'

if ((st_count != test_rows || py_count != test_rows || differing != 0)); then
  echo "predictions differ: sparktorch wrote $st_count lines, PyTorch $py_count," \
    "for $test_rows rows; $differing lines disagree" >&2
  exit 1
fi
echo "predictions: identical line for line ($test_rows of $test_rows rows)"

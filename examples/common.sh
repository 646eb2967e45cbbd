# shellcheck shell=bash
# shellcheck disable=SC2154  # sparktorch and example come from the sourcing script
# Sourced by the examples that train (train_mpi.sh, train_hogwild.sh, torchscript_model.sh,
# spark_fashion_mnist.sh), from the repository root, after they set `sparktorch` (the binary)
# and `example` (their name, for messages). Sets `threads` (--threads THREADS, when THREADS is
# set) and `python` (PYTHON, default python3, for the data script).

threads=()
[[ -n ${THREADS:-} ]] && threads=(--threads "$THREADS")
# shellcheck disable=SC2034  # read by fashion_mnist_csv.sh
python=${PYTHON:-python3}

step() { echo "== $*" >&2; }
die() {
  echo "$example: $*" >&2
  exit 1
}

# ensure_built: builds sparktorch (as examples/quickstart.sh does) when $sparktorch is missing.
ensure_built() {
  [[ -x $sparktorch ]] && return
  step "no $sparktorch: installing and building (examples/install_deps.sh, examples/build.sh)"
  examples/install_deps.sh
  examples/build.sh
}

# test_correct MODEL OUT: predicts out/fashion_test.csv with MODEL into OUT (one line per row,
# checked) and prints how many predictions match the labels.
test_correct() {
  local rows predicted
  rows=$(wc -l <out/fashion_test.csv)
  step "predicting out/fashion_test.csv with $1"
  "$sparktorch" predict --model "$1" "${threads[@]}" --input out/fashion_test.csv >"$2"
  predicted=$(wc -l <"$2")
  ((predicted == rows)) || die "expected $rows predictions, got $predicted"
  cut -d, -f1 out/fashion_test.csv | paste -d' ' - "$2" |
    awk '$1 + 0 == $2 + 0 { n++ } END { print n + 0 }'
}

# shellcheck shell=bash
# shellcheck disable=SC2154  # sparktorch, threads and example come from the sourcing script
# Sourced by the offline training examples (train_mpi.sh, train_hogwild.sh), from the repository
# root, after they set `sparktorch` (the binary), `threads` (an array of --threads flags) and
# `example` (their name, for messages).

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

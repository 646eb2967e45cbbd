#!/usr/bin/env bash
# Synchronous training on one machine: trains the MLP of examples/fashion_mnist_mlp.json on
# Fashion-MNIST with RANKS processes that all-reduce their gradients every step, checks that
# every rank ends with the same weights (the weights_crc32 of their summary records), predicts
# the test set with the model rank 0 wrote, and prints the test accuracy. Runs from any
# directory; builds sparktorch first (as examples/quickstart.sh does) when BUILD_DIR has none.
#   LAUNCHER  mpirun (default): `mpirun -np RANKS sparktorch train --input out/fashion_train.csv`,
#               the ranks share the CSV by line ranges;
#             tracker: `sparktorch serve` and RANKS plain processes, each fed its own part of
#               the CSV on stdin, as Spark tasks are;
#             both: one after the other, and checks that they trained the same weights.
#   RANKS     processes (default: 2)             EPOCHS   training epochs (default: 10)
#   BUILD_DIR build folder (default: build/)     THREADS  passed to --threads when set
#   PYTHON    interpreter for the data script
# Open MPI is pinned to loopback (OMPI_MCA_btl_tcp_if_include=lo) unless that is set already.
# Outputs go to out/train_mpi/LAUNCHER/: model.pt, and rankR.records with each rank's records.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
sparktorch=$build_dir/sparktorch
launcher=${LAUNCHER:-mpirun}
ranks=${RANKS:-2}
epochs=${EPOCHS:-10}
spec=examples/fashion_mnist_mlp.json
train_csv=out/fashion_train.csv
test_csv=out/fashion_test.csv

example=train_mpi
source examples/common.sh
now() { date +%s.%N; }

case $launcher in
  mpirun | tracker | both) ;;
  *) die "LAUNCHER must be mpirun, tracker or both, not '$launcher'" ;;
esac
[[ $ranks =~ ^[1-9][0-9]*$ ]] || die "RANKS must be a positive number, not '$ranks'"

ensure_built

source examples/fashion_mnist_csv.sh
train_rows=$(wc -l <"$train_csv")
test_rows=$(wc -l <"$test_csv")

# Background processes of the tracker run, ended if this script stops early.
pids=()
trap '((${#pids[@]} == 0)) || kill "${pids[@]}" 2>/dev/null || true' EXIT

common=(--model "$spec" --epochs "$epochs" "${threads[@]}")

run_mpirun() {
  local dir=$1 rc=0
  local flags=(-np "$ranks")
  # mpirun refuses to start as root unless asked, and more ranks than cores unless asked.
  ((EUID == 0)) && flags+=(--allow-run-as-root)
  ((ranks > $(nproc))) && flags+=(--oversubscribe)
  # TCP from an interface to itself is flaky on some machines; one host needs only loopback.
  export OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
  step "mpirun -np $ranks: $ranks ranks share $train_csv by line ranges"
  # mpirun merges the ranks' stdout: each rank writes its records to a file of its own. Their
  # logs stay on stderr, each line tagged sparktorch[rank R].
  # shellcheck disable=SC2016  # each rank's sh expands $1, $0, $@ and OMPI_COMM_WORLD_RANK
  mpirun "${flags[@]}" sh -c 'out=$1; shift; exec "$0" train "$@" >"$out/rank$OMPI_COMM_WORLD_RANK.records"' \
    "$sparktorch" "$dir" "${common[@]}" --input "$train_csv" --output "$dir/model.pt" || rc=$?
  ((rc == 0)) || die "mpirun exited with status $rc"
}

# split_csv PREFIX: writes PREFIX0.csv ... with the lines mpirun's ranks take from one file:
# of L lines, rank r reads lines L*r/N + 1 to L*(r+1)/N, rounded down.
split_csv() {
  awk -v n="$ranks" -v lines="$train_rows" -v prefix="$1" '
    BEGIN { r = 0; next_start = int(lines / n) }
    {
      while (r < n - 1 && NR - 1 >= next_start) { r++; next_start = int(lines * (r + 1) / n) }
      print > (prefix r ".csv")
    }' "$train_csv"
}

run_tracker() {
  local dir=$1 r rc tracker=""
  # A random secret for this job: the tracker admits only ranks that hold it, and it never
  # appears on a command line or on the wire. One host: listen on loopback.
  SPARKTORCH_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  export SPARKTORCH_SECRET
  rm -f "$dir/tracker.address"
  step "sparktorch serve --world-size $ranks"
  "$sparktorch" serve --world-size "$ranks" --listen 127.0.0.1:0 \
    --port-file "$dir/tracker.address" &
  local tracker_pid=$!
  pids+=("$tracker_pid")
  for _ in $(seq 100); do
    [[ -s $dir/tracker.address ]] && break
    kill -0 "$tracker_pid" 2>/dev/null || die "the tracker exited before it was listening"
    sleep 0.1
  done
  tracker=$(cat "$dir/tracker.address") || die "the tracker wrote no address"
  step "$ranks ranks meet at the tracker $tracker, each with its part on stdin"
  local rank_pids=()
  for ((r = 0; r < ranks; r++)); do
    "$sparktorch" train --tracker "$tracker" --rank "$r" --world-size "$ranks" "${common[@]}" \
      --output "$dir/model.pt" <"$dir/part$r.csv" >"$dir/rank$r.records" &
    rank_pids+=($!)
    pids+=($!)
  done
  for ((r = 0; r < ranks; r++)); do
    rc=0
    wait "${rank_pids[r]}" || rc=$?
    ((rc == 0)) || die "rank $r exited with status $rc (see man sparktorch, EXIT STATUS)"
  done
  rc=0
  wait "$tracker_pid" || rc=$?
  ((rc == 0)) || die "the tracker exited with status $rc"
  pids=()
  unset SPARKTORCH_SECRET
}

# summary_field FILE FIELD: a string or number field of the S record in FILE.
summary_field() {
  sed -n "s/^S\t.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1"
}

# check_ranks DIR: every rank wrote a summary with the same weights checksum; prints it.
check_ranks() {
  local dir=$1 r crc first=""
  for ((r = 0; r < ranks; r++)); do
    crc=$(summary_field "$dir/rank$r.records" weights_crc32)
    [[ -n $crc ]] || die "rank $r wrote no summary record to $dir/rank$r.records"
    step "rank $r: $(summary_field "$dir/rank$r.records" partition_rows) rows, weights_crc32 $crc"
    first=${first:-$crc}
    [[ $crc == "$first" ]] || die "rank $r's weights ($crc) differ from rank 0's ($first)"
  done
  echo "$first"
}

launchers=("$launcher")
[[ $launcher == both ]] && launchers=(mpirun tracker)
declare -A crc_of seconds_of
for l in "${launchers[@]}"; do
  dir=out/train_mpi/$l
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ $l == tracker ]]; then
    step "splitting $train_csv into $ranks parts, as mpirun's ranks share it"
    split_csv "$dir/part"
  fi
  start=$(now)
  "run_$l" "$dir"
  seconds_of[$l]=$(awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }')
  crc_of[$l]=$(check_ranks "$dir")
  [[ -s $dir/model.pt ]] || die "rank 0 wrote no $dir/model.pt"
done
if [[ $launcher == both && ${crc_of[mpirun]} != "${crc_of[tracker]}" ]]; then
  die "mpirun and the tracker trained different weights (${crc_of[mpirun]}, ${crc_of[tracker]})"
fi

model=out/train_mpi/${launchers[-1]}/model.pt
correct=$(test_correct "$model" out/train_mpi/test.predictions)

echo
echo "Fashion-MNIST, $spec, $ranks ranks"
for l in "${launchers[@]}"; do
  awk -v l="$l" -v rows="$train_rows" -v epochs="$epochs" -v s="${seconds_of[$l]}" \
    -v crc="${crc_of[$l]}" -v dir="out/train_mpi/$l" 'BEGIN {
    printf "  %-8s %d rows x %d epochs in %.1f s (start-up included): %.0f rows/s\n", l, rows, epochs, s, rows * epochs / s
    printf "           every rank ended with weights_crc32 %s; model %s/model.pt\n", crc, dir
  }'
done
awk -v trows="$test_rows" -v correct="$correct" 'BEGIN {
  printf "  test accuracy  %.2f%% (%d of %d)\n", 100 * correct / trows, correct, trows
}'

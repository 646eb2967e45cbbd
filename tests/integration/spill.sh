#!/usr/bin/env bash
# Rows beyond a rank's memory (man sparktorch, MEMORY): train holds at most --row-memory of its
# rows in anonymous memory (default 128M) and the rest in a spill file that nobody else can
# open and that goes away with the process.
#   a) a forced spill (--row-memory 1M) trains the very weights of rows in memory, with a
#      validation split and predictions, alone and as 2 synchronous ranks (mpirun); hogwild
#      workers spill too;
#   b) a rank's peak RssAnon does not grow with its rows (60k and 240k, stdin and Parquet),
#      nor with a Parquet file's row groups (4,000 rows or 60,000), and does without the spill
#      (--row-memory 2G, the control);
#   c) a full disk and an unwritable directory are one line and exit status 73;
#   d) a killed rank leaves nothing in the spill directory.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"
setup_workdir spill
require_data train12k.csv test2k.csv

cat >linear.json <<'JSON'
{"layers": [{"type": "linear", "in_features": 784, "out_features": 10}],
 "loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}
JSON
write_mlp_spec mlp.json

check "a) --row-memory 1M spills and trains the same weights as rows in memory"
for memory in 1M 1G; do
  run_ok "$memory.records" "$SPARKTORCH" train --model mlp.json --epochs 2 --validation-pct 0.1 \
    --predict --row-memory "$memory" --spill-dir "$T" <"$DATA/train12k.csv"
done
assert_cmp "$(summary_field 1M.records spilled_bytes)" ">=" 37000000 "1M: bytes spilled (12k rows)"
assert_eq 0 "$(summary_field 1G.records spilled_bytes)" "1G: bytes spilled"
grep -q "read 12000 rows of 784 features from stdin; they outgrew --row-memory (1.05 MB) and went to a spill file, 37.7 MB\$" \
  1M.records.err || fail "1M: no line saying what spilled: $(grep ' read ' 1M.records.err)"
echo "  ok: the log says the rows outgrew 1.05 MB and 37.7 MB went to a spill file"
for field in weights_crc32 validation_loss validation_accuracy; do
  assert_eq "$(summary_field 1G.records "$field")" "$(summary_field 1M.records "$field")" \
    "spilled and in memory: $field"
done
grep $'^P\t' 1G.records >1G.predictions
grep $'^P\t' 1M.records >1M.predictions
assert_lines 12000 1M.predictions "1M: prediction records"
assert_same_file 1G.predictions 1M.predictions "predictions of spilled rows"

if [[ ${WITH_MPI:-0} == 1 ]]; then
  export OMPI_MCA_btl_tcp_if_include=lo OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for memory in 1M 1G; do
    run_ok "sync$memory.records" mpirun -np 2 --oversubscribe "$SPARKTORCH" train --model mlp.json --epochs 1 \
      --row-memory "$memory" --input "$DATA/train12k.csv" --output "sync$memory.pt"
  done
  crcs() { grep $'^S\t' "$1" | grep -o '"weights_crc32":"[0-9a-f]*"' | sort -u; }
  assert_eq 1 "$(crcs sync1M.records | wc -l)" "2 ranks with 1M: one weights_crc32"
  assert_eq "$(crcs sync1G.records)" "$(crcs sync1M.records)" "2 ranks: spilled and in memory"
  assert_eq 2 "$(grep $'^S\t' sync1M.records | grep -c '"spilled_bytes":18840000')" \
    "2 ranks with 1M: each spilled its 6,000 rows"
fi

split_rows "$DATA/train12k.csv" 6000 6000
start_server 2
start_workers 2 1 --row-memory 1M --spill-dir "$T"
finish_job 2
for i in 0 1; do
  assert_eq 18840000 "$(summary_field "out.$i" spilled_bytes)" "hogwild worker $i: bytes spilled"
done
assert_eq '[0, 1]' "$(summary_eval server.out 'sorted(s["workers_finished"])')" "hogwild: workers finished"

# peak_anon PID: the largest RssAnon (kB) of process PID, sampled every 20 ms until it exits.
peak_anon() {
  local peak=0 kb
  while kb=$(awk '/^RssAnon:/ { print $2 }' "/proc/$1/status" 2>/dev/null) && [[ -n $kb ]]; do
    ((kb > peak)) && peak=$kb
    sleep 0.02
  done
  echo "$peak"
}

# peak_train NAME STDIN FLAGS...: trains the linear model 1 epoch on STDIN (a file, or
# /dev/null) and FLAGS; prints the rank's peak RssAnon (kB).
peak_train() {
  local name=$1 stdin=$2 pid peak
  shift 2
  "$SPARKTORCH" train --model linear.json --epochs 1 --batch-size 256 --output "$name.pt" \
    "$@" <"$stdin" >"$name.records" 2>"$name.err" &
  pid=$!
  peak=$(peak_anon "$pid")
  wait_for "$pid"
  [[ $RC -eq 0 ]] || fail "$name: exit $RC: $(tail -2 "$name.err")"
  echo "$peak"
}

check "b) a rank's peak anonymous memory does not grow with its rows (default --row-memory)"
for copies in 5 20; do
  for ((i = 0; i < copies; i++)); do cat "$DATA/train12k.csv"; done >"rows$copies.csv"
done
stdin60=$(peak_train stdin60 rows5.csv --spill-dir "$T")
stdin240=$(peak_train stdin240 rows20.csv --spill-dir "$T")
echo "  stdin: 60k rows $((stdin60 / 1024)) MiB, 240k rows $((stdin240 / 1024)) MiB"
assert_eq 240000 "$(summary_field stdin240.records rows_read)" "stdin: rows read"
assert_cmp "$(summary_field stdin240.records spilled_bytes)" ">" 600000000 "stdin 240k: bytes spilled"
assert_cmp "$stdin240" "<=" "$((stdin60 * 5 / 4))" "stdin: peak RssAnon of 240k rows within 1.25x of 60k's (kB)"
assert_cmp "$stdin240" "<" 400000 "stdin: peak RssAnon of 240k rows (kB)"
control=$(peak_train control240 rows20.csv --spill-dir "$T" --row-memory 2G)
echo "  stdin, --row-memory 2G: 240k rows $((control / 1024)) MiB"
assert_cmp "$control" ">" "$((stdin240 + 500000))" "control: 240k rows in memory take 500 MB more (kB)"

"${TORCH2_PYTHON:-python3}" - "$DATA/train12k.csv" rows12k.parquet group60k.parquet <<'PY'
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
rows = np.loadtxt(sys.argv[1], delimiter=",", dtype=np.float32)
features = pa.FixedSizeListArray.from_arrays(pa.array(rows[:, 1:].ravel()), 784)
table = pa.table({"label": rows[:, 0].astype(np.int64),
                  "features": features.cast(pa.list_(pa.float32()))})
pq.write_table(table, sys.argv[2], row_group_size=4000)
# The same 12,000 rows 5 times in one row group, as Spark writes row groups of up to 128 MB.
pq.write_table(pa.concat_tables([table] * 5), sys.argv[3], row_group_size=60000)
PY
for copies in 5 20; do
  mkdir "table$copies"
  for ((i = 0; i < copies; i++)); do ln rows12k.parquet "table$copies/part-$i.parquet"; done
done
pq60=$(peak_train pq60 /dev/null --format parquet --input table5 --spill-dir "$T")
pq240=$(peak_train pq240 /dev/null --format parquet --input table20 --spill-dir "$T")
echo "  parquet: 60k rows $((pq60 / 1024)) MiB, 240k rows $((pq240 / 1024)) MiB"
assert_eq 240000 "$(summary_field pq240.records rows_read)" "parquet: rows read"
assert_eq "$(summary_field stdin240.records weights_crc32)" "$(summary_field pq240.records weights_crc32)" \
  "parquet and stdin: the same weights"
assert_cmp "$pq240" "<=" "$((pq60 * 5 / 4))" "parquet: peak RssAnon of 240k rows within 1.25x of 60k's (kB)"
# The reader holds a page of each column, not a row group's columns (60,000 rows of float32
# lists decoded: 282 MB, which it held before it read a page at a time).
mkdir group60k
for i in 0 1 2 3; do ln group60k.parquet "group60k/part-$i.parquet"; done
pqgroup=$(peak_train pqgroup /dev/null --format parquet --input group60k --spill-dir "$T")
echo "  parquet, row groups of 60,000 rows: 240k rows $((pqgroup / 1024)) MiB"
assert_eq 240000 "$(summary_field pqgroup.records rows_read)" "parquet, row groups of 60k: rows read"
assert_eq "$(summary_field pq240.records weights_crc32)" "$(summary_field pqgroup.records weights_crc32)" \
  "parquet in row groups of 4,000 and of 60,000 rows: the same weights"
assert_cmp "$pqgroup" "<=" "$((pq240 + 32768))" \
  "parquet: peak RssAnon with row groups of 60,000 rows within 32 MiB of 4,000's (kB; measured 8)"

check "c) no room for the spill file: one line, exit status 73"
mkdir small
if mount -t tmpfs -o size=4m sparktorch-spill-test small 2>mount.err; then
  trap 'umount "$T/small" 2>/dev/null || true; end_background_jobs' EXIT
  expect_exit 73 "sparktorch: error: cannot spill rows beyond 1.05 MB of memory to small: No space left on device after 4.19 MB (a larger --row-memory keeps more rows in memory; --spill-dir puts them elsewhere)" \
    --stdout-empty -- "$SPARKTORCH" -q train --model linear.json --row-memory 1M --spill-dir small \
    --input "$DATA/train12k.csv"
  umount small
  trap end_background_jobs EXIT
else
  skipped="cannot mount a 4 MB tmpfs for the full disk: $(cat mount.err)"  # said at the end
fi
expect_exit 73 "sparktorch: error: cannot spill rows beyond 1.05 MB of memory to $T/none: No such file or directory (--spill-dir names a directory for them)" \
  --stdout-empty -- "$SPARKTORCH" -q train --model linear.json --row-memory 1M \
  --spill-dir "$T/none" --input "$DATA/train12k.csv"
# SPARK_LOCAL_DIRS, as Spark sets it on an executor: its first directory (unless YARN's or a
# standalone worker's variables are set: env -u them).
expect_exit 73 "sparktorch: error: cannot spill rows beyond 1.05 MB of memory to $T/local1: No such file or directory (--spill-dir names a directory for them)" \
  --stdout-empty -- env -u CONTAINER_ID -u SPARK_EXECUTOR_DIRS SPARK_LOCAL_DIRS="$T/local1,$T" \
  "$SPARKTORCH" -q train \
  --model linear.json --row-memory 1M --input "$DATA/train12k.csv"
expect_exit 2 "sparktorch: error: --row-memory: '12X' is not a size (bytes, or a number with K, M, G or T, such as 512M or 2G)" \
  -- "$SPARKTORCH" -q train --model linear.json --row-memory 12X --input "$DATA/train12k.csv"

check "d) a rank killed while it trains leaves nothing in the spill directory"
mkdir spill
"$SPARKTORCH" train --model mlp.json --epochs 50 --row-memory 1M --spill-dir spill \
  --input "$DATA/train12k.csv" >killed.records 2>killed.err &
pid=$!
for _ in $(seq 300); do
  grep -q "epoch 1/50" killed.err && break
  kill -0 "$pid" 2>/dev/null || fail "the rank exited before its first epoch: $(tail -2 killed.err)"
  sleep 0.1
done
mapped=$(grep -c "$T/spill/.* (deleted)" "/proc/$pid/maps" || true)
assert_cmp "$mapped" ">=" 1 "the training rank maps a deleted file in spill/"
kill -9 "$pid"
wait_for "$pid"
assert_eq 137 "$RC" "exit status of the killed rank"
assert_eq "" "$(ls -A spill)" "files left in spill/"
# A check that could not run makes the test a skip (exit 77; a failure on CI: tests/skip.sh).
[[ -z ${skipped:-} ]] || exec bash "$REPO/tests/skip.sh" "$skipped"

#!/usr/bin/env bash
# Spark's JVM RDD.pipe gives every task the same command line, so each task finds its rank
# before its first row on stdin (`train --rank-from-stdin`, man sparktorch): ranks fed that way
# train the same weights as ranks given --rank; a task of an empty partition (empty stdin) takes
# the rank nobody claimed; a stdin without the prefix is bad input. The summaries carry the
# reading and training times and the epochs' history, and `serve` logs one progress line per
# epoch with the time left.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sync_lib.sh"
setup_workdir sync_rank_from_stdin
require_data train2k.csv
write_mlp_spec spec.json
COMMON=(--model spec.json --epochs 3 --batch-size 32 --seed 5)

# finish N: every rank 0..N-1 and the tracker exit 0.
finish() {
  local n=$1 r
  for ((r = 0; r < n; r++)); do
    wait_for "${RANK_PID[r]}"
    assert_eq 0 "$RC" "rank $r's exit status ($(tail -3 "err.$r"))"
  done
  wait_for "$TRACKER_PID"
  assert_eq 0 "$RC" "the tracker's exit status ($(tail -3 tracker.err))"
}

check "2 ranks that read their rank from stdin train the weights of the same ranks given --rank"
split_rows "$DATA/train2k.csv" 300 200
start_tracker 2
for r in 0 1; do start_rank "$r" 2 "part$r.csv" "${COMMON[@]}"; done
finish 2
expected=$(summary_field out.0 weights_crc32)
start_tracker 2
for r in 1 0; do start_rank_from_stdin "$r" 2 "part$r.csv" "${COMMON[@]}"; done
finish 2
for r in 0 1; do
  assert_eq "$expected" "$(summary_field "out.$r" weights_crc32)" "rank $r's weights checksum against --rank's"
  assert_eq "$r" "$(summary_field "out.$r" rank)" "rank $r's summary: rank"
done
assert_eq 300 "$(summary_field out.0 partition_rows)" "rank 0's rows (the prefix is not a row)"
assert_eq 200 "$(summary_field out.1 partition_rows)" "rank 1's rows"
assert_eq 0 "$(summary_field out.0 rows_skipped)" "rank 0's bad rows"
assert_eq 1 "$(grep -c $'^E\t' out.0 || true)" "model end records of rank 0"
assert_eq 0 "$(grep -c $'^E\t' out.1 || true)" "model end records of rank 1"
grep -q "rank 0 arrived from" tracker.err || fail "the tracker did not log rank 0's arrival: $(cat tracker.err)"

check "the summaries: read_seconds, train_seconds, and a history of 3 epochs ending in the final metrics"
for r in 0 1; do assert_summary_timings "out.$r" 3; done
# The world's metrics are alike on every rank; each rank's times are its own.
metrics='[{k: e[k] for k in ("epoch", "rows", "steps", "train_loss", "train_accuracy")} for e in s["history"]]'
assert_eq "$(summary_json out.0 "$metrics")" "$(summary_json out.1 "$metrics")" \
  "the history of rank 1 against rank 0's (its metrics, without the times)"

check "the model's manifest has the same history"
"$SPARKTORCH" -q unpack --output model.pt <out.0 >/dev/null || fail "sparktorch unpack failed"
run_ok inspect.json "$SPARKTORCH" inspect --json model.pt
assert_eq "$(summary_json out.0 's["history"]')" \
  "$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["manifest"]["history"]))' inspect.json)" \
  "the manifest's history against rank 0's summary"
run_ok inspect.txt "$SPARKTORCH" inspect model.pt
assert_eq "epoch|1|2|3" "$(sed -n '/^history:$/,$p' inspect.txt | sed 1d | awk '{ print $1 }' | paste -sd'|')" \
  "inspect's history table: the epochs"

check "serve logs one progress line per epoch, with the time left before the last"
grep -E "sparktorch info: epoch [0-9]+/3: " tracker.err >epochs.log || true
assert_lines 3 epochs.log "serve's epoch lines"
for e in 1 2; do
  grep -qE "sparktorch info: epoch $e/3: loss [0-9.]+ accuracy [0-9.]+ \| [0-9]+ samples/s, [0-9.]+ s elapsed, ETA [0-9.]+ s$" epochs.log ||
    fail "epoch $e's line has not the expected form: $(cat epochs.log)"
done
grep -qE "sparktorch info: epoch 3/3: loss [0-9.]+ accuracy [0-9.]+ \| [0-9]+ samples/s, [0-9.]+ s elapsed$" epochs.log ||
  fail "the last epoch's line has not the expected form (no ETA): $(cat epochs.log)"
loss3=$(python3 -c 'import sys; print("%.4f" % float(sys.argv[1]))' "$(summary_field out.0 train_loss)")
grep -q "epoch 3/3: loss $loss3 " epochs.log || fail "the last epoch's loss is not rank 0's $loss3: $(cat epochs.log)"
echo "  ok: $(head -n 1 epochs.log | cut -d' ' -f4-)"

check "3 ranks, the middle partition empty (empty stdin): that process takes rank 1; same weights as --rank"
split_rows "$DATA/train2k.csv" 300 0 200
start_tracker 3
for r in 0 1 2; do start_rank "$r" 3 "part$r.csv" "${COMMON[@]}"; done
finish 3
expected=$(summary_field out.0 weights_crc32)
start_tracker 3
start_rank_from_stdin 2 3 part2.csv "${COMMON[@]}"
start_rank_from_stdin 1 3 part1.csv "${COMMON[@]}"  # empty: no prefix, no rows
# The empty one comes before rank 0, which must not change whose rank is whose.
for i in $(seq 300); do
  grep -q "rank 2 arrived" tracker.err && grep -q "a rank with no rows arrived" tracker.err && break
  sleep 0.1
done
start_rank_from_stdin 0 3 part0.csv "${COMMON[@]}"
finish 3
for r in 0 1 2; do
  assert_eq "$expected" "$(summary_field "out.$r" weights_crc32)" "rank $r's weights checksum against --rank's"
  assert_eq "$r" "$(summary_field "out.$r" rank)" "the summary's rank in out.$r"
done
assert_eq 0 "$(summary_field out.1 partition_rows)" "rows of the process with an empty stdin"
grep -qE "sparktorch info: tracker: a rank with no rows arrived from 127\.0\.0\.1:[0-9]+ \([12] of 3\)$" tracker.err ||
  fail "the tracker did not log the arrival of the rank with no rows: $(cat tracker.err)"
grep -qE "sparktorch info: tracker: the rank with no rows from 127\.0\.0\.1:[0-9]+ is rank 1, which no other rank claimed$" tracker.err ||
  fail "the tracker did not say which rank the rank with no rows became: $(cat tracker.err)"
grep -q "sparktorch info: this process has no rows (an empty partition); the tracker gave it rank 1, which no other process claimed$" err.1 ||
  fail "the process with an empty stdin did not say which rank it took: $(cat err.1)"
grep -q "rank 1: no rows in this partition; it takes part in every step with none" err.1 ||
  fail "the process with an empty stdin did not say it has no rows: $(cat err.1)"

check "bad prefixes are bad input (exit 3) and wrong flags usage errors (exit 2), nothing on stdout"
TRAIN=("$SPARKTORCH" -q train --model spec.json --tracker 127.0.0.1:9 --world-size 2)
head -n 3 "$DATA/train2k.csv" >rows.csv
row1=$(head -c 32 rows.csv)
expect_exit 3 "sparktorch: error: stdin: expected the rank (digits and a tab) before the first row (--rank-from-stdin), got \"$row1...\"" \
  --stdout-empty -- "${TRAIN[@]}" --rank-from-stdin <rows.csv
expect_exit 3 "sparktorch: error: stdin: expected a rank below --world-size 2 before the first row (--rank-from-stdin), got 2" \
  --stdout-empty -- "${TRAIN[@]}" --rank-from-stdin < <(printf '2\t'; cat rows.csv)
expect_exit 2 "sparktorch: error: --rank-from-stdin and --rank both give this process's rank; give one of them" \
  --stdout-empty -- "${TRAIN[@]}" --rank-from-stdin --rank 0 </dev/null
expect_exit 2 "sparktorch: error: --rank-from-stdin goes with --tracker HOST:PORT (sync) or --server HOST:PORT (hogwild)" \
  --stdout-empty -- "$SPARKTORCH" -q train --model spec.json --rank-from-stdin --world-size 2 </dev/null
expect_exit 2 "sparktorch: error: --rank-from-stdin needs --world-size N" \
  --stdout-empty -- "$SPARKTORCH" -q train --model spec.json --tracker 127.0.0.1:9 --rank-from-stdin </dev/null
expect_exit 2 "sparktorch: error: --rank-from-stdin reads the rank before the rows on stdin; not with --input -" \
  --stdout-empty -- "${TRAIN[@]}" --rank-from-stdin --input - </dev/null

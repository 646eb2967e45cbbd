#!/usr/bin/env bash
# Hogwild workers started as Spark's JVM RDD.pipe starts them (`train --rank-from-stdin`, man
# sparktorch): each finds its worker id before its first row on stdin; a worker of an empty
# partition (empty stdin) gets the id nobody claimed; a worker that Spark retries after the
# server counted it as lost (killed, or too late for the server's --timeout) ends with exit 0, a
# warning and nothing on stdout, while other refusals stay exit 77. The workers' summaries carry
# their reading and training times and their epochs' history; the model's manifest the server's;
# and the server logs one progress line per epoch with the time left.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"
setup_workdir hogwild_rank_from_stdin
require_data train12k.csv
unset SPARKTORCH_SECRET

# history_json FILE: the history of FILE's S record, as JSON.
history_json() { summary_eval "$1" 's["history"]'; }

check "3 workers with their ids on stdin, the middle partition empty: it gets worker id 1"
split_rows "$DATA/train12k.csv" 3000 0 3000
start_server 3
start_worker_from_stdin 2 3 part2.csv -e 3
start_worker_from_stdin 1 3 part1.csv -e 3  # empty: no id, no rows
start_worker_from_stdin 0 3 part0.csv -e 3
finish_job 3
assert_job_summary 3
for i in 0 1 2; do
  assert_eq "$i" "$(summary_field "out.$i" worker)" "the summary's worker in out.$i"
done
assert_eq 3000 "$(summary_field out.0 partition_rows)" "worker 0's rows (the prefix is not a row)"
assert_eq 0 "$(summary_field out.1 partition_rows)" "rows of the worker with an empty stdin"
assert_eq 0 "$(summary_field out.0 rows_skipped)" "worker 0's bad rows"
grep -qE "sparktorch info: a worker with no rows arrived from .+ \(127\.0\.0\.1:[0-9]+\); it gets an id no worker claimed once every worker has come$" server.err ||
  fail "the server did not log the worker with no rows: $(cat server.err)"
grep -qE "sparktorch info: worker 1 joined from .+ \(127\.0\.0\.1:[0-9]+\): the worker with no rows, given an id no worker claimed$" server.err ||
  fail "the server did not say which id the worker with no rows got: $(cat server.err)"
grep -q "sparktorch\[worker 1\] info: this worker has no rows (an empty partition); the parameter server gave it worker id 1, which no other worker claimed$" err.1 ||
  fail "the worker with an empty stdin did not say which id it got: $(cat err.1)"
grep -q "sparktorch\[worker any\] warning: no rows in this partition; it takes part without pushing gradients$" err.1 ||
  fail "the worker with an empty stdin did not say it has no rows: $(cat err.1)"

check "the workers' summaries: read_seconds, train_seconds, and a history of their 3 epochs"
for i in 0 1 2; do
  summary_eval "out.$i" '0 <= s["read_seconds"] and 0 <= s["train_seconds"] and s["read_seconds"] + s["train_seconds"] <= s["total_seconds"]' >timings
  assert_eq true "$(cat timings)" "worker $i: 0 <= read_seconds, train_seconds; both within total_seconds"
  assert_eq "[1, 2, 3]" "$(summary_eval "out.$i" '[e["epoch"] for e in s["history"]]')" "worker $i: the history's epochs"
  assert_eq true "$(summary_eval "out.$i" 'all(s[k] == v for k, v in s["history"][-1].items())')" \
    "worker $i: the history's last epoch is the summary's metrics"
done

check "the model's manifest has the server's history: 3 epochs, the last its summary's metrics"
run_ok inspect.json "$SPARKTORCH" inspect --json model.pt
python3 - inspect.json server.out <<'PY' || fail "the manifest's history is not the server's epochs"
import json, sys
history = json.load(open(sys.argv[1]))["manifest"]["history"]
s = [json.loads(l[2:]) for l in open(sys.argv[2]) if l.startswith("S\t")][0]
assert [e["epoch"] for e in history] == [1, 2, 3], history
for e in history:
    assert e["workers"] == 3 and e["rows"] == 6000, e
    assert set(e) >= {"train_loss", "train_accuracy", "seconds", "elapsed", "samples_per_second"}, e
assert all(s[k] == v for k, v in history[-1].items()), (history[-1], s)
PY
echo "  ok: 3 epochs of 3 workers and 6000 rows each, the last equal to the server's summary"

check "the server logs one progress line per epoch, with the time left before the last"
grep -E "sparktorch info: epoch [0-9]+/3: " server.err >epochs.log || true
assert_lines 3 epochs.log "the server's epoch lines"
for e in 1 2; do
  grep -qE "sparktorch info: epoch $e/3: loss [0-9.]+ accuracy [0-9.]+ \| 3 workers, [0-9]+ samples/s, [0-9.]+ s elapsed, ETA [0-9.]+ s$" epochs.log ||
    fail "epoch $e's line has not the expected form: $(cat epochs.log)"
done
grep -qE "sparktorch info: epoch 3/3: loss [0-9.]+ accuracy [0-9.]+ \| 3 workers, [0-9]+ samples/s, [0-9.]+ s elapsed$" epochs.log ||
  fail "the last epoch's line has not the expected form (no ETA): $(cat epochs.log)"
echo "  ok: $(head -n 1 epochs.log | cut -d' ' -f4-)"

check "a worker id killed mid-job comes back (a Spark retry): exit 0, a warning, nothing on stdout"
# Worker 1 is stopped (SIGSTOP) while the retry comes, so that the job still runs then however
# slow the machine (it once finished its epochs first on a loaded one), and resumed after.
split_rows "$DATA/train12k.csv" 3000 1000
start_server 2
start_worker_from_stdin 0 2 part0.csv -e 40
start_worker_from_stdin 1 2 part1.csv -e 30
wait_log server.err "epoch 1/40: "
kill -0 "${WORKER_PID[0]}" 2>/dev/null || fail "worker 0 ended before it could be killed"
kill -0 "${WORKER_PID[1]}" 2>/dev/null || fail "worker 1 ended before the retry could come"
kill -STOP "${WORKER_PID[1]}"
kill -9 "${WORKER_PID[0]}"
wait_for "${WORKER_PID[0]}"
wait_log server.err "worker 0 \(.*\) lost: "
mv err.0 killed.err
start_worker_from_stdin 0 2 part0.csv -e 40
wait_for "${WORKER_PID[0]}"
kill -CONT "${WORKER_PID[1]}"
assert_eq 0 "$RC" "the retried worker 0's exit status ($(tail -3 err.0))"
[[ ! -s out.0 ]] || fail "the retried worker 0 wrote records: $(head -c 200 out.0)"
wait_for "${WORKER_PID[1]}"
assert_eq 0 "$RC" "worker 1's exit status ($(tail -3 err.1))"
wait_for "$SERVER_PID"
assert_eq 0 "$RC" "the server's exit status ($(tail -3 server.err))"
reason=$(summary_eval server.out 's["workers_lost"][0]["reason"]')
assert_eq "sparktorch[worker 0] warning: the parameter server counted worker 0 as lost earlier in this job ($reason); the job goes on without this worker" \
  "$(tail -n 1 err.0 | cut -d' ' -f3-)" "the retried worker's last line on stderr"
assert_eq "[1]" "$(summary_eval server.out 'sorted(s["workers_finished"])')" "server summary: workers_finished"
grep -qE "refused a connection from 127\.0\.0\.1:[0-9]+: worker 0 was lost earlier in this job \(.+\); a job does not take a worker back$" server.err ||
  fail "the server did not log the refusal: $(tail -5 server.err)"

check "a worker that comes after the server's --timeout (a Spark retry, or a slow task): exit 0 too"
start_server 2 --timeout 3
start_worker_from_stdin 0 2 part0.csv -e 1000  # still training when the second worker 0 comes; killed below
wait_log server.err "never connected within 3 s; the job goes on without it"
start_worker_from_stdin 1 2 part1.csv -e 1
wait_for "${WORKER_PID[1]}"
assert_eq 0 "$RC" "the late worker 1's exit status ($(tail -3 err.1))"
assert_eq "sparktorch[worker 1] warning: the parameter server counted worker 1 as lost earlier in this job (never connected within 3 s); the job goes on without this worker" \
  "$(tail -n 1 err.1 | cut -d' ' -f3-)" "the late worker's last line on stderr"
[[ ! -s out.1 ]] || fail "the late worker wrote records: $(head -c 200 out.1)"

check "... while other refusals stay exit 77: a second worker 0 while worker 0 trains"
head -n 10 part0.csv >few.csv
"$SPARKTORCH" -q train --mode hogwild --server "$SERVER" --rank-from-stdin --world-size 2 \
  --label-col 0 -e 1 < <(printf '0\t'; cat few.csv) >dup.out 2>dup.err && rc=0 || rc=$?
assert_eq 77 "$rc" "the second worker 0's exit status"
assert_eq "sparktorch: error: the parameter server at $SERVER refused worker 0: worker 0 already joined this job (from $(hostname))" \
  "$(cat dup.err)" "the second worker 0's stderr"
[[ ! -s dup.out ]] || fail "the second worker 0 wrote records: $(head -c 200 dup.out)"
kill -9 "${WORKER_PID[0]}" "$SERVER_PID" 2>/dev/null || true
wait "${WORKER_PID[0]}" "$SERVER_PID" 2>/dev/null || true

check "a bad prefix is bad input (exit 3) before the worker connects"
expect_exit 3 "sparktorch: error: stdin: expected the rank (digits and a tab) before the first row (--rank-from-stdin), got \"$(head -c 32 few.csv)...\"" \
  --stdout-empty -- "$SPARKTORCH" -q train --mode hogwild --server 127.0.0.1:9 --rank-from-stdin \
  --world-size 2 --label-col 0 <few.csv

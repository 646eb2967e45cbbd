#!/usr/bin/env bash
# predict writes one line per input row, in input order: permuting the rows permutes the lines;
# rows with and without a label mix; a skipped bad row leaves an empty line; row ids (csv
# --id-col, jsonl --id-field, compact ID<TAB>) come back as ID<TAB>VALUE; --prediction
# vector|probabilities give 10 numbers, probabilities summing to 1; each batch's lines leave
# before stdin ends; --group-end answers group by group, lines and float32 records alike.
source "$(dirname "$0")/lib.sh"
setup_workdir predict_order
require_data train2k.csv test2k.csv

run_ok train.txt "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_mlp.json" \
  --input "$DATA/train2k.csv" --epochs 1 --output mlp.pt
head -n 200 "$DATA/test2k.csv" >rows.csv
run_ok base.txt "$SPARKTORCH" predict --model mlp.pt --input rows.csv
assert_lines 200 base.txt "one prediction per row"
assert_ne 1 "$(sort -u base.txt | wc -l)" "distinct predictions (a constant output proves no order)"

check "reversed rows give reversed predictions"
tac rows.csv >reversed.csv
run_ok reversed.txt "$SPARKTORCH" predict --model mlp.pt --input reversed.csv
tac reversed.txt >reversed_back.txt
assert_same_file base.txt reversed_back.txt "predictions of the reversed rows, reversed"

check "a shuffled order (every 7th row first) gives the same permutation of predictions"
awk 'NR % 7 == 0' rows.csv >shuffled.csv
awk 'NR % 7 != 0' rows.csv >>shuffled.csv
awk 'NR % 7 == 0' base.txt >expected_shuffled.txt
awk 'NR % 7 != 0' base.txt >>expected_shuffled.txt
run_ok shuffled.txt "$SPARKTORCH" predict --model mlp.pt --input shuffled.csv
assert_same_file expected_shuffled.txt shuffled.txt "predictions of the shuffled rows"

check "rows without a label, and labelled and unlabelled rows mixed"
cut -d, -f2- rows.csv >unlabelled.csv
run_ok unlabelled.txt "$SPARKTORCH" predict --model mlp.pt --input unlabelled.csv
assert_same_file base.txt unlabelled.txt "predictions of the unlabelled rows"
paste -d'\n' <(awk 'NR % 2 == 1' rows.csv) <(awk 'NR % 2 == 0' unlabelled.csv) >mixed.csv
run_ok mixed.txt "$SPARKTORCH" predict --model mlp.pt --input mixed.csv
assert_same_file base.txt mixed.txt "predictions of alternately labelled rows"

check "--on-bad-row skip: a bad row gives an empty line, so line N still belongs to row N"
{ head -n 10 rows.csv; echo "1,2,3"; tail -n +11 rows.csv; } >with_bad.csv
{ head -n 10 base.txt; echo; tail -n +11 base.txt; } >expected_with_bad.txt
run_ok with_bad.txt "$SPARKTORCH" predict --model mlp.pt --input with_bad.csv --on-bad-row skip
assert_same_file expected_with_bad.txt with_bad.txt "predictions with a skipped bad row 11"

# Expected ID<TAB>VALUE lines: ids row-1 ... row-200 beside the base predictions.
awk '{ printf "row-%d\t%s\n", NR, $0 }' base.txt >expected_ids.txt

check "csv --id-col 0: ID<TAB>VALUE"
awk '{ printf "row-%d,%s\n", NR, $0 }' rows.csv >ids.csv
run_ok ids_csv.txt "$SPARKTORCH" predict --model mlp.pt --input ids.csv --id-col 0 --label-col 1
assert_same_file expected_ids.txt ids_csv.txt "csv predictions with ids"

check "jsonl --id-field id: ID<TAB>VALUE"
python3 - rows.csv >ids.jsonl <<'PY'
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    v = [float(x) for x in line.split(",")]
    print(json.dumps({"id": "row-%d" % n, "label": int(v[0]), "features": v[1:]}))
PY
run_ok ids_jsonl.txt "$SPARKTORCH" predict --model mlp.pt --input ids.jsonl --format jsonl \
  --id-field id
assert_same_file expected_ids.txt ids_jsonl.txt "jsonl predictions with ids"

check "compact ID<TAB>BASE64: ID<TAB>VALUE"
python3 - rows.csv >ids.compact <<'PY'
import base64, struct, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    v = [float(x) for x in line.split(",")]
    print("row-%d\t%s" % (n, base64.b64encode(struct.pack("<%df" % len(v), *v)).decode()))
PY
run_ok ids_compact.txt "$SPARKTORCH" predict --model mlp.pt --input ids.compact --format compact
assert_same_file expected_ids.txt ids_compact.txt "compact predictions with ids"

check "--prediction vector: 10 numbers per row whose argmax is the prediction"
run_ok vector.txt "$SPARKTORCH" predict --model mlp.pt --input rows.csv --prediction vector
assert_lines 200 vector.txt "vector lines"
python3 - vector.txt >vector_argmax.txt <<'PY'
import sys
for line in open(sys.argv[1]):
    v = [float(x) for x in line.split(",")]
    assert len(v) == 10, "expected 10 values, got %d: %s" % (len(v), line)
    print(v.index(max(v)))
PY
assert_same_file base.txt vector_argmax.txt "argmax of the vectors"

check "--prediction probabilities: 10 values in [0, 1] summing to 1 per row"
run_ok probabilities.txt "$SPARKTORCH" predict --model mlp.pt --input rows.csv \
  --prediction probabilities
assert_lines 200 probabilities.txt "probability lines"
python3 - probabilities.txt >probabilities_argmax.txt <<'PY'
import sys
for line in open(sys.argv[1]):
    p = [float(x) for x in line.split(",")]
    assert len(p) == 10, "expected 10 values, got %d: %s" % (len(p), line)
    assert all(0 <= x <= 1 for x in p), "a value outside [0, 1]: %s" % line
    assert abs(sum(p) - 1) < 1e-4, "probabilities sum to %r: %s" % (sum(p), line)
    print(p.index(max(p)))
PY
assert_same_file base.txt probabilities_argmax.txt "argmax of the probabilities"

check "each batch's lines leave as soon as it is predicted, before stdin ends"
# All 2,000 rows (4 MB, more than the reader's buffers hold) in batches of 50, stdin kept open:
# the first batch's lines must arrive while it is (the Spark layer's one-pass pipe pairs rows
# with lines and holds only the unanswered ones).
run_ok all.txt "$SPARKTORCH" predict --model mlp.pt --input "$DATA/test2k.csv"
if ! python3 - "$SPARKTORCH" mlp.pt "$DATA/test2k.csv" all.txt <<'PY'
import subprocess, sys, threading
binary, model, rows, expected = sys.argv[1:]
process = subprocess.Popen([binary, "-q", "predict", "--model", model, "--batch-size", "50"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
data = open(rows, "rb").read()
writer = threading.Thread(target=lambda: (process.stdin.write(data), process.stdin.flush()),
                          daemon=True)
writer.start()
got = []
reader = threading.Thread(target=lambda: [got.append(process.stdout.readline().decode().strip())
                                          for _ in range(50)], daemon=True)
reader.start()
reader.join(60)
if reader.is_alive():
    process.kill()
    sys.exit("predict wrote %d of the first batch's 50 lines while stdin was open" % len(got))
writer.join(60)
process.stdin.close()
got += process.stdout.read().decode().split()
if process.wait() != 0 or got != open(expected).read().split():
    sys.exit("predict: exit %d; its %d lines differ from predict's on the file"
             % (process.returncode, len(got)))
PY
then
  fail "predict held back a batch's lines, or they were wrong (above)"
fi

check "--group-end: each group's predictions, then the end line; reading goes on"
# Three groups (rows 1-7, none, rows 8-200) as a kept Spark predict process gets them: the
# predictions are the file's, each group closed by the echoed line, and a bad row's line number
# counts from its group's first line.
{ head -n 7 rows.csv; echo "#end"; echo "#end"; tail -n +8 rows.csv; echo "#end"; } >groups.csv
{ head -n 7 base.txt; echo "#end"; echo "#end"; tail -n +8 base.txt; echo "#end"; } \
  >expected_groups.txt
run_ok groups.txt "$SPARKTORCH" predict --model mlp.pt --group-end "#end" <groups.csv
assert_same_file expected_groups.txt groups.txt "grouped predictions"
grep -q "predicted 193 rows in .* (group 3 of this process)" groups.txt.err ||
  fail "no summary of the third group of 193 rows in groups.txt.err"
# Each group's line on stderr goes out before its end line on stdout: the Spark layer hands a
# kept process to the next partition when the end line arrives, and the line must not land in
# that partition's stderr (and its failure message). One pipe for both shows the order.
"$SPARKTORCH" predict --model mlp.pt --group-end "#end" <groups.csv >merged.txt 2>&1 ||
  fail "predict --group-end with stdout and stderr merged exited $?"
order=$(grep -E '^#end$|\(group [0-9]+ of this process\)' merged.txt |
  sed -E 's/.*\(group ([0-9]+) of this process\).*/said \1/; s/^#end$/end/' | tr '\n' ' ')
assert_eq "said 1 end said 2 end said 3 end " "$order" "each group's line, then its end line"
{ head -n 3 rows.csv; echo "#end"; head -n 4 rows.csv; echo "1,2,3"; } >bad_group.csv
expect_exit 3 "sparktorch: error: stdin:5: expected 784 columns (784 features) or 785 (784 features + 1 label), got 3" \
  -- "$SPARKTORCH" -q predict --model mlp.pt --group-end "#end" <bad_group.csv
expect_exit 2 "sparktorch: error: --group-end reads lines; it cannot be used with --format parquet" \
  -- "$SPARKTORCH" -q predict --model mlp.pt --group-end "#end" --format parquet --input rows.csv

check "--group-end: a group is answered while stdin stays open"
if ! python3 - "$SPARKTORCH" mlp.pt rows.csv base.txt <<'PY'
import subprocess, sys, threading
binary, model, rows, expected = sys.argv[1:]
process = subprocess.Popen([binary, "-q", "predict", "--model", model, "--group-end", "#end"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lines, want = open(rows, "rb").read().splitlines(), open(expected).read().split()
for first, last in ((0, 3), (3, 200)):  # a group far smaller than a batch, then the rest
    process.stdin.write(b"\n".join(lines[first:last]) + b"\n#end\n")
    process.stdin.flush()
    got = []
    reader = threading.Thread(target=lambda: [got.append(process.stdout.readline().decode().strip())
                                              for _ in range(last - first + 1)], daemon=True)
    reader.start()
    reader.join(60)
    if reader.is_alive() or got != want[first:last] + ["#end"]:
        process.kill()
        sys.exit("rows %d-%d: got %d lines while stdin was open: %s" % (first + 1, last, len(got), got[:5]))
process.stdin.close()
if process.wait() != 0:
    sys.exit("predict exited with status %d" % process.returncode)
PY
then
  fail "predict did not answer a group while stdin was open (above)"
fi

check "--format float32 --group-end: records in groups, answered while stdin stays open"
# The rows as the Spark layer's jar writes them: float32 records (dense, sparse, a null row),
# each group closed by a group end record; the answers are lines, each group's closed by the
# echoed line. A null row is a bad row: an empty line under --on-bad-row skip.
if ! python3 - "$SPARKTORCH" mlp.pt rows.csv base.txt <<'PY'
import struct, subprocess, sys, threading
binary, model, rows, expected = sys.argv[1:]
END, NULL = struct.pack("<I", 0xFFFFFFFE), struct.pack("<I", 0xFFFFFFFF)
def record(n, line):
    v = [float(x) for x in line.split(",")][1:]  # features only: predict's rows need no label
    if n % 2:  # sparse: head 2^31 + K, SIZE, K indices, K values
        nz = [(j, x) for j, x in enumerate(v) if x != 0.0]
        return struct.pack("<II%dI%df" % (len(nz), len(nz)), 0x80000000 | len(nz), len(v),
                           *[j for j, _ in nz], *[x for _, x in nz])
    return struct.pack("<I%df" % len(v), len(v), *v)
lines, want = open(rows).read().splitlines(), open(expected).read().split()
process = subprocess.Popen([binary, "-q", "predict", "--model", model, "--format", "float32",
                            "--group-end", "#end", "--on-bad-row", "skip"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for first, last in ((0, 3), (3, 3), (3, 200)):  # a small group, an empty one, the rest
    data = b"".join(record(n, lines[n]) for n in range(first, last))
    expect = want[first:last] + ["#end"]
    if first == 3 and last == 200:  # a null row after row 10: its line is empty
        split = sum(len(record(n, lines[n])) for n in range(3, 10))
        data = data[:split] + NULL + data[split:]
        expect = want[3:10] + [""] + want[10:200] + ["#end"]
    process.stdin.write(data + END)
    process.stdin.flush()
    got = []
    reader = threading.Thread(target=lambda: [got.append(process.stdout.readline().decode().strip())
                                              for _ in range(len(expect))], daemon=True)
    reader.start()
    reader.join(60)
    if reader.is_alive() or got != expect:
        process.kill()
        sys.exit("rows %d-%d: got %d lines while stdin was open, first %s; expected %s"
                 % (first + 1, last, len(got), got[:12], expect[:12]))
process.stdin.close()
if process.wait() != 0:
    sys.exit("predict exited with status %d" % process.returncode)
PY
then
  fail "predict --format float32 did not answer its groups as expected (above)"
fi
python3 -c '
import struct, sys
sys.stdout.buffer.write(struct.pack("<I784f", 784, *[0.0] * 784) + struct.pack("<I3f", 3, 1, 2, 3))' \
  >bad_records.f32
expect_exit 3 "sparktorch: error: stdin: record 2: expected 784 values (784 features) or 785 (784 features + 1 label), got 3" \
  -- "$SPARKTORCH" -q predict --model mlp.pt --format float32 <bad_records.f32
head -c 1000 bad_records.f32 >truncated.f32
expect_exit 3 "sparktorch: error: stdin: record 1: the input ends inside a record (1000 of its 3140 bytes)" \
  -- "$SPARKTORCH" -q predict --model mlp.pt --format float32 <truncated.f32

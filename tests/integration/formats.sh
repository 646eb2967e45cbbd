#!/usr/bin/env bash
# Every row format reads the same numbers: the same 2,000 rows written as csv, libsvm, vector
# (dense and sparse), jsonl (arrays and Spark's vector objects), compact (float32 of the csv's
# numbers) and float32 records (dense and sparse, no lines), plus csv variants (gzip, ';' with a
# header and CRLF) and 0-based libsvm, train with the same seed and --no-shuffle to
# byte-identical predictions and the same loss.
source "$(dirname "$0")/lib.sh"
setup_workdir formats
require_data train2k.csv

check "write train2k.csv in every format"
python3 - "$DATA/train2k.csv" rows <<'EOF'
import base64, struct, sys
src, out = sys.argv[1], sys.argv[2]
names = ("csv", "libsvm", "libsvm0", "vector", "jsonl", "compact", "semicolon")
w = {f: open("%s.%s" % (out, f), "w", newline="") for f in names}
f32 = open(out + ".float32", "wb")
w["semicolon"].write("label;" + ";".join("p%d" % i for i in range(784)) + "\r\n")
for i, line in enumerate(open(src)):
    r = line.rstrip("\n").split(",")
    label, feats = r[0], r[1:]
    nz = [(j, v) for j, v in enumerate(feats) if float(v) != 0.0]
    idx, vals = ",".join(str(j) for j, _ in nz), ",".join(v for _, v in nz)
    w["csv"].write(",".join(r) + "\n")
    w["semicolon"].write(" ; ".join(r) + "\r\n")
    w["libsvm"].write(" ".join([label] + ["%d:%s" % (j + 1, v) for j, v in nz]) + "\n")
    w["libsvm0"].write("\t".join([label] + ["%d:%s" % (j, v) for j, v in nz]) + " # row %d\n" % i)
    if i % 2:  # odd rows sparse, as Spark writes sparse vectors
        w["vector"].write("(%s,(%d,[%s],[%s]))\n" % (label, len(feats), idx, vals))
        w["jsonl"].write('{"label": %s, "features": {"type":0,"size":%d,"indices":[%s],"values":[%s]}}\n'
                         % (label, len(feats), idx, vals))
    else:
        w["vector"].write("%s,[%s]\n" % (label, ",".join(feats)))
        w["jsonl"].write('{"features": {"type":1,"values":[%s]}, "label": %s.0, "other": "x"}\n'
                         % (",".join(feats), label) if i % 4 else
                         '{"label": %s, "features": [%s]}\n' % (label, ",".join(feats)))
    vals = [float(x) for x in r]
    w["compact"].write(base64.b64encode(struct.pack("<%df" % len(vals), *vals)).decode() + "\n")
    if i % 2:  # sparse: head 2^31 + K, SIZE, K indices, K values (the label is index 0)
        nzv = [(j, v) for j, v in enumerate(vals) if v != 0.0]
        f32.write(struct.pack("<II%dI%df" % (len(nzv), len(nzv)), 0x80000000 | len(nzv), len(vals),
                              *[j for j, _ in nzv], *[v for _, v in nzv]))
    else:
        f32.write(struct.pack("<I%df" % len(vals), len(vals), *vals))
EOF
gzip -c rows.csv >rows.csv.gz
for f in csv libsvm libsvm0 vector jsonl compact; do
  assert_lines 2000 "rows.$f" "rows in rows.$f"
done
assert_eq 2001 "$(wc -l <rows.semicolon | tr -d ' ')" "rows.semicolon lines (header + 2000)"

# train_format NAME FILE FLAG...: trains 2 epochs in input order; NAME.p holds its P records.
train_format() {
  local name=$1 file=$2
  shift 2
  run_ok "$name.records" "$SPARKTORCH" train --model "$REPO/examples/fashion_mnist_mlp.json" \
    --input "$file" --epochs 2 --seed 4 --no-shuffle --predict --prediction vector \
    --output "$name.pt" "$@"
  grep $'^P\t' "$name.records" >"$name.p"
  summary_field "$name.records" train_loss >"$name.loss"
  assert_eq 2000 "$(summary_field "$name.records" rows_read)" "$name: rows_read"
}

check "train on csv"
train_format csv rows.csv --format csv
assert_lines 2000 csv.p "csv: prediction records"
assert_cmp "$(cat csv.loss)" "<" 1.0 "csv: train_loss (the rows were learnt; measured 0.75)"

check "the comparison sees one changed number: row 1000's last pixel 0 -> 0.5"
awk -F, 'BEGIN { OFS = "," } NR == 1000 { $NF = "0.5" } { print }' rows.csv >changed.csv
assert_eq 1 "$(diff rows.csv changed.csv | grep -c '^>')" "lines changed"
train_format changed changed.csv
if cmp -s csv.p changed.p; then fail "a changed feature did not change the predictions"; fi
echo "  ok: changed.p differs from csv.p"

for variant in "libsvm rows.libsvm --format libsvm" \
               "libsvm0 rows.libsvm0 --format libsvm --zero-based --num-features 784" \
               "vector rows.vector --format vector" \
               "jsonl rows.jsonl --format jsonl" \
               "compact rows.compact --format compact" \
               "float32 rows.float32 --format float32" \
               "gzip rows.csv.gz" \
               "semicolon rows.semicolon --delimiter ; --header"; do
  read -r -a args <<<"$variant"
  check "train on ${args[0]}: the same predictions and loss as csv"
  train_format "${args[@]}"
  assert_same_file csv.p "${args[0]}.p" "${args[0]}: vector predictions"
  assert_eq "$(cat csv.loss)" "$(cat "${args[0]}.loss")" "${args[0]}: train_loss"
done

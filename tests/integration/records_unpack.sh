#!/usr/bin/env bash
# train without --output writes the record stream of sparktorch-formats(7), RECORDS (P, M, E, S);
# unpack reassembles a model that predicts exactly as the one train --output writes, and
# refuses a stream whose chunks are corrupt, missing, repeated or out of order (exit 5, a message
# naming the line and the chunk).
source "$(dirname "$0")/lib.sh"
setup_workdir records_unpack
require_data train2k.csv test2k.csv

MLP="$REPO/examples/fashion_mnist_mlp.json"
ERR="sparktorch: error:"
train=(train --model "$MLP" --input "$DATA/train2k.csv" --epochs 1 --seed 5)

check "train --predict without --output: only P, M, E and S records on stdout"
run_ok records.txt "$SPARKTORCH" "${train[@]}" --predict
assert_eq 0 "$(grep -cvP '^(P\t[^\t]+|M\t\d+\t\d+\t[0-9a-f]{8}\t[A-Za-z0-9+/=]+|E\t\d+\t\d+\t[0-9a-f]{8}|S\t\{.*\})$' records.txt || true)" \
  "lines that are not well-formed records"
assert_eq 2000 "$(grep -c $'^P\t' records.txt)" "P records (one per row)"
assert_eq 1 "$(grep -c $'^S\t' records.txt)" "S records"
assert_eq 1 "$(grep -c $'^E\t' records.txt)" "E records"
assert_eq 0 "$(awk 'length($0) > 1048576' records.txt | wc -l)" "lines over 1 MiB"
# Chunks in order 0..COUNT-1 on consecutive lines, the E record right after them.
layout=$(grep -nP '^[ME]\t' records.txt | awk -F'\t' '
  { split($1, a, ":"); line = a[1]; tag = a[2] }
  NR == 1 { first = line }
  tag == "M" && ($2 != NR - 1 || line != first + NR - 1) { bad = "chunk " $2 " at line " line }
  tag == "M" { count = $3 }
  tag == "E" { end = ($2 == count && $2 == NR - 1 && line == first + NR - 1) ? "ok" : "misplaced" }
  END { print (bad != "" ? bad : end) }')
assert_eq ok "$layout" "M records in order, then E"
chunks=$(grep -c $'^M\t' records.txt)
assert_cmp "$chunks" ">=" 2 "model chunks (the MLP file is over 786,384 bytes)"

check "unpack: the model, the predictions and the summary"
run_ok unpack.out "$SPARKTORCH" unpack --input records.txt --output unpacked.pt \
  --predictions predictions.txt --summary summary.txt
assert_eq 0 "$(wc -c <unpack.out)" "bytes unpack writes on stdout"
grep $'^P\t' records.txt | cut -f2- >expected_predictions.txt
assert_same_file expected_predictions.txt predictions.txt "unpacked predictions"
grep $'^S\t' records.txt | cut -f2- >expected_summary.txt
assert_same_file expected_summary.txt summary.txt "unpacked summary"
read -r _ e_count e_bytes _ < <(grep $'^E\t' records.txt)
assert_eq "$e_count" "$chunks" "E record's chunk count"
assert_eq "$e_bytes" "$(wc -c <unpacked.pt | tr -d ' ')" "E record's byte count = size of the model"

check "the model as sparktorch-formats(7) specifies it: base64 chunks with CRC-32s, read by Python"
python3 - records.txt independent.pt <<'EOF'
import base64, sys, zlib
model = b""
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "M":
        chunk = base64.b64decode(f[4], validate=True)
        assert "%08x" % zlib.crc32(chunk) == f[3], "chunk %s: CRC" % f[1]
        assert len(chunk) == (786384 if int(f[1]) < int(f[2]) - 1 else len(chunk)), "chunk size"
        model += chunk
    elif f[0] == "E":
        assert f[2] == str(len(model)) and f[3] == "%08x" % zlib.crc32(model), "E record"
open(sys.argv[2], "wb").write(model)
EOF
assert_same_file independent.pt unpacked.pt "model bytes decoded in Python"

check "unpack reads stdin as well"
run_ok stdin.out "$SPARKTORCH" unpack --output from_stdin.pt <records.txt
assert_same_file unpacked.pt from_stdin.pt "model unpacked from stdin"

check "the unpacked model predicts as train --predict did, and as train --output's model does"
run_ok again.txt "$SPARKTORCH" predict --model unpacked.pt --input "$DATA/train2k.csv"
assert_same_file expected_predictions.txt again.txt "predict with the unpacked model on the training rows"
run_ok direct.txt "$SPARKTORCH" "${train[@]}" --output direct.pt
run_ok unpacked_vector.txt "$SPARKTORCH" predict --model unpacked.pt --input "$DATA/test2k.csv" \
  --prediction vector
run_ok direct_vector.txt "$SPARKTORCH" predict --model direct.pt --input "$DATA/test2k.csv" \
  --prediction vector
assert_lines 2000 direct_vector.txt "vector predictions"
assert_same_file direct_vector.txt unpacked_vector.txt "vector outputs of the unpacked and the --output model"

# refuse NAME "MESSAGE": unpack NAME must exit 5 with "NAME:MESSAGE" and write no model.
refuse() {
  expect_exit 5 "$ERR $1$2" --stdout-empty -- "$SPARKTORCH" -q unpack --input "$1" --output refused.pt
  [[ ! -e refused.pt ]] || fail "unpack $1 wrote refused.pt"
}
line_of() { grep -nP "^$2" "$1" | head -n 1 | cut -d: -f1; }  # line_of FILE REGEX

check "a base64 character changed in chunk 0: the chunk's CRC does not match"
# Prints the corrupted chunk's CRC-32, which unpack must report.
bad_crc=$(python3 - records.txt corrupt.txt <<'EOF'
import base64, sys, zlib
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "M" and f[1] == "0":
        b64 = f[4][:100] + ("B" if f[4][100] == "A" else "A") + f[4][101:]
        print("%08x" % zlib.crc32(base64.b64decode(b64)))
        line = "\t".join(f[:4] + [b64]) + "\n"
    out.write(line)
EOF
)
good_crc=$(grep -P '^M\t0\t' records.txt | cut -f4)
assert_ne "$good_crc" "$bad_crc" "CRC of the corrupted chunk"
refuse corrupt.txt ":$(line_of corrupt.txt 'M\t0\t'): model chunk 0 of $chunks is corrupt (crc32 $bad_crc, record says $good_crc)"

check "a character that is not base64"
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "M" && $2 == 1 { $5 = "!" substr($5, 2) } { print }' \
  records.txt >not_base64.txt
refuse not_base64.txt ":$(line_of not_base64.txt 'M\t1\t'): model chunk 1 of $chunks is not valid base64 (\"!\" at offset 0)"

check "the last chunk deleted: the end record says which chunk is missing"
last=$((chunks - 1))
grep -vP "^M\t$last\t" records.txt >missing_last.txt
refuse missing_last.txt ":$(line_of missing_last.txt 'E\t'): model end record arrived after $last of $chunks chunks: chunk $last is missing"

check "chunk 0 deleted"
grep -vP '^M\t0\t' records.txt >missing_first.txt
refuse missing_first.txt ":$(line_of missing_first.txt 'M\t1\t'): model chunk 1 arrived first: chunk 0 is missing"

check "chunks 0 and 1 swapped"
awk '/^M\t0\t/ { held = $0; next } { print } /^M\t1\t/ { print held }' records.txt >swapped.txt
assert_eq "$(sort records.txt | md5sum)" "$(sort swapped.txt | md5sum)" "swapped stream holds the same lines"
refuse swapped.txt ":$(line_of swapped.txt 'M\t1\t'): model chunk 1 arrived first: chunk 0 is missing"

check "chunk 0 repeated"
awk '{ print } /^M\t0\t/ { print }' records.txt >repeated.txt
refuse repeated.txt ":$(( $(line_of repeated.txt 'M\t0\t') + 1 )): model chunk 0 arrived again after chunk 0"

check "the end record deleted"
grep -vP '^E\t' records.txt >no_end.txt
refuse no_end.txt ": the model has no end record ($chunks of $chunks chunks arrived)"

check "a line that is not a record"
{ echo "hello"; cat records.txt; } >not_a_record.txt
refuse not_a_record.txt ':1: not a sparktorch record (tag "hello")'

check "a second model"
{ cat records.txt; grep -P '^[ME]\t' records.txt; } >two_models.txt
end_line=$(line_of records.txt 'E\t')
refuse two_models.txt ":$(( $(wc -l <records.txt) + 1 )): a second model begins after the first ended on line $end_line"

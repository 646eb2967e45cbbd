#!/usr/bin/env bash
# --format parquet (man sparktorch): the binary reads Parquet files written by a real Spark
# (tests/formats/data/parquet) as the exact rows, in order, that the same numbers give as csv:
# training on a file, on a directory of part files (Spark's _SUCCESS and .crc files skipped) and
# on numeric columns joined by --features-field gives the weights that the csv gives. Ranks and
# hogwild workers given the same files each read a contiguous share of their rows (mpirun, the
# tracker with --rank-from-stdin and only the rank on stdin, --rank); predict --id-field prints
# ID<TAB>VALUE in row order; stdin, a missing column, a file that is not Parquet and null values
# are errors with their own exit status and one exact line, and --on-bad-row skip counts nulls.
# inspect --format parquet describes files and directories (text and JSON) and refuses, with
# train's message, a file train cannot read (encodings_v1's id: DELTA_BYTE_ARRAY strings), and
# reads parquet-mr's v2 writer's DELTA_BINARY_PACKED integers (delta_v2).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sync_lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"  # its summary_field (strict, cached) replaces the others
setup_workdir parquet

PQ="$REPO/tests/formats/data/parquet"
VEC="$PQ/vectors_snappy.parquet"  # 330 rows: label double, features vector of 6, id string
NUM="$PQ/numeric_gzip.parquet"    # 100 rows: label int, a float, b double, c int64, d int, e [2]
NULLS="$PQ/nulls.parquet"         # 10 rows: features null in row 4, label in 6, x in 8 (1-based)
ERR="sparktorch: error:"
cat >spec.json <<'JSON'
{"layers": [{"type": "linear", "in_features": 6, "out_features": 16}, "relu",
            {"type": "linear", "in_features": 16, "out_features": 1}],
 "loss": "mse", "optimizer": {"type": "adam", "lr": 0.01}}
JSON
COMMON=(--model spec.json --epochs 3 --batch-size 32 --seed 3)

# train_run NAME FLAG...: trains with COMMON and FLAGs, writing NAME.records and NAME.pt.
train_run() {
  local name=$1
  shift
  run_ok "$name.records" "$SPARKTORCH" train "${COMMON[@]}" --output "$name.pt" "$@"
}

# assert_log FILE TEXT WHAT: some line of FILE ends with TEXT (after its time stamp and tag).
assert_log() {
  awk -v t="$2" 'length($0) >= length(t) && substr($0, length($0) - length(t) + 1) == t { f = 1 }
    END { exit !f }' "$1" || fail "$3: no line of $1 ends with '$2': $(tail -5 "$1")"
  echo "  ok: $3: '$2'"
}

# p_ids FILE: the ids of FILE's P records (P<TAB>ID<TAB>VALUE), one a line.
p_ids() { grep $'^P\t' "$1" | cut -f2 || true; }

# jsonl_to_csv JSONL COLUMN...: the rows of an expected.jsonl as csv, the label first, then the
# COLUMNs in order (a vector's or an array's numbers expanded); rows with a null are left out.
jsonl_to_csv() {
  python3 - "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    values = []
    for name in ["label"] + sys.argv[2:]:
        v = r[name]
        values += v["dense"] if isinstance(v, dict) else v if isinstance(v, list) else [v]
    if None not in values:
        print(",".join(repr(float(x)) for x in values))
PY
}

jsonl_to_csv "$PQ/vectors_snappy.expected.jsonl" features >rows.csv
python3 -c '
import json, sys
for line in open(sys.argv[1]): print(json.loads(line)["id"])' "$PQ/vectors_snappy.expected.jsonl" >ids.txt
assert_lines 330 rows.csv "vectors_snappy's rows as csv"
assert_eq "row-0000 row-0329" "$(head -n 1 ids.txt) $(tail -n 1 ids.txt)" "vectors_snappy's first and last ids"

check "a) train --format parquet on vectors_snappy.parquet: the weights of the same rows as csv"
train_run csv --input rows.csv
train_run pq --format parquet --input "$VEC"
assert_eq 330 "$(summary_field pq.records rows_read)" "parquet: rows_read"
assert_eq 0 "$(summary_field pq.records rows_skipped)" "parquet: rows_skipped"
assert_eq "$(summary_field csv.records weights_crc32)" "$(summary_field pq.records weights_crc32)" \
  "parquet's weights_crc32 against csv's"
assert_eq "$(summary_field csv.records train_loss)" "$(summary_field pq.records train_loss)" \
  "parquet's train_loss against csv's"

check "a) the comparison sees one changed number: row 200's 3rd feature in the csv"
awk -F, 'BEGIN { OFS = "," } NR == 200 { $4 = $4 + 0.25 } { print }' rows.csv >changed.csv
assert_eq 1 "$(diff rows.csv changed.csv | grep -c '^>')" "lines changed"
train_run changed --input changed.csv
assert_ne "$(summary_field pq.records weights_crc32)" "$(summary_field changed.records weights_crc32)" \
  "weights_crc32 of the changed csv"

check "b) a directory as Spark writes it (a part file, _SUCCESS, .crc files): the weights of the file"
mkdir table
cp "$VEC" table/part-00000-5f3c-c000.snappy.parquet
: >table/_SUCCESS
printf 'crc\0\1\2' >table/.part-00000-5f3c-c000.snappy.parquet.crc
printf 'crc\0\1\2' >table/._SUCCESS.crc
train_run dir --format parquet --input table
assert_eq 330 "$(summary_field dir.records rows_read)" "directory: rows_read"
assert_eq "$(summary_field pq.records weights_crc32)" "$(summary_field dir.records weights_crc32)" \
  "the directory's weights_crc32 against the file's"

check "b) a directory of no Parquet files but hidden ones is bad input (exit 3)"
mkdir empty_table
: >empty_table/_SUCCESS
expect_exit 3 "$ERR empty_table: a directory without Parquet files" --stdout-empty \
  -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet --input empty_table

if [[ ${WITH_MPI:-1} == 1 ]]; then
  # The ranks' P records carry the rows' ids: a share is exactly those rows, in order.
  head -n 165 ids.txt >ids.0
  tail -n 165 ids.txt >ids.1
  split_rows rows.csv 165 165

  check "c) mpirun -np 2 on one Parquet file: rows 1..165 and 166..330, the weights of 2 csv shares"
  rc=0
  # shellcheck disable=SC2016  # expanded by each rank's sh
  mpirun -np 2 sh -c 'exec "$0" train "$@" >"mpi.$OMPI_COMM_WORLD_RANK" 2>"mpi.$OMPI_COMM_WORLD_RANK.err"' \
    "$SPARKTORCH" "${COMMON[@]}" --format parquet --input "$VEC" --id-field id --predict \
    --output mpi.pt >mpirun.log 2>&1 || rc=$?
  assert_eq 0 "$rc" "mpirun's exit status ($(cat mpirun.log mpi.0.err mpi.1.err | tail -5))"
  assert_log mpi.0.err "sparktorch[rank 0] info: rank 0: rows 1..165 of the 330 rows in 1 Parquet file" "rank 0's log"
  assert_log mpi.1.err "sparktorch[rank 1] info: rank 1: rows 166..330 of the 330 rows in 1 Parquet file" "rank 1's log"
  for r in 0 1; do
    assert_eq sync "$(summary_field "mpi.$r" mode)" "rank $r's mode"
    assert_eq 165 "$(summary_field "mpi.$r" partition_rows)" "rank $r's partition_rows"
    p_ids "mpi.$r" >"mpi.$r.ids"
    assert_same_file "ids.$r" "mpi.$r.ids" "rank $r's P records: the ids of its rows, in order"
  done
  [[ -s mpi.pt ]] || fail "rank 0 wrote no mpi.pt"
  expected=$(summary_field mpi.0 weights_crc32)
  assert_eq "$expected" "$(summary_field mpi.1 weights_crc32)" "rank 1's weights_crc32 against rank 0's"
  rc=0
  # shellcheck disable=SC2016  # expanded by each rank's sh
  mpirun -np 2 sh -c 'exec "$0" -q train "$@" >"csv.$OMPI_COMM_WORLD_RANK"' \
    "$SPARKTORCH" "${COMMON[@]}" --input part0.csv part1.csv --output csvsync.pt \
    >mpirun.log 2>&1 || rc=$?
  assert_eq 0 "$rc" "mpirun's exit status on the csv shares ($(tail -5 mpirun.log))"
  assert_eq "$expected" "$(summary_field csv.0 weights_crc32)" \
    "weights_crc32 against mpirun -np 2 on part0.csv (rows 1..165) and part1.csv (166..330)"

  check "c) the tracker, --rank-from-stdin --input FILE with only \"R<TAB>\" on stdin: the same shares"
  start_tracker 2
  for r in 1 0; do
    printf '%s\t' "$r" | "$SPARKTORCH" train --tracker "$TRACKER" --rank-from-stdin --world-size 2 \
      "${COMMON[@]}" --format parquet --input "$VEC" --id-field id --predict --output tracker.pt \
      >"out.$r" 2>"err.$r" &
    RANK_PID[r]=$!
  done
  for r in 0 1; do
    wait_for "${RANK_PID[r]}"
    assert_eq 0 "$RC" "rank $r's exit status ($(tail -3 "err.$r"))"
  done
  wait_for "$TRACKER_PID"
  assert_eq 0 "$RC" "the tracker's exit status ($(tail -3 tracker.err))"
  assert_log err.0 "sparktorch[rank 0] info: rank 0: rows 1..165 of the 330 rows in 1 Parquet file" "rank 0's log"
  assert_log err.1 "sparktorch[rank 1] info: rank 1: rows 166..330 of the 330 rows in 1 Parquet file" "rank 1's log"
  for r in 0 1; do
    assert_eq "$r" "$(summary_field "out.$r" rank)" "rank $r's summary: rank"
    assert_eq 165 "$(summary_field "out.$r" partition_rows)" "rank $r's partition_rows (the prefix is not a row)"
    p_ids "out.$r" >"out.$r.ids"
    assert_same_file "ids.$r" "out.$r.ids" "rank $r's P records: the ids of its rows, in order"
    assert_eq "$expected" "$(summary_field "out.$r" weights_crc32)" "rank $r's weights_crc32 against mpirun's"
  done

  check "c) mpirun -np 3 on a directory of 2 part files (660 rows): rank 1's share crosses into the second"
  mkdir table2
  cp "$VEC" table2/part-00000.parquet
  cp "$VEC" table2/part-00001.parquet
  : >table2/_SUCCESS
  rc=0
  # shellcheck disable=SC2016  # expanded by each rank's sh
  mpirun -np 3 sh -c 'exec "$0" train "$@" >"mpi3.$OMPI_COMM_WORLD_RANK" 2>"mpi3.$OMPI_COMM_WORLD_RANK.err"' \
    "$SPARKTORCH" --model spec.json --epochs 1 --seed 3 --format parquet --input table2 \
    --id-field id --predict --output mpi3.pt >mpirun.log 2>&1 || rc=$?
  assert_eq 0 "$rc" "mpirun's exit status ($(cat mpirun.log mpi3.*.err | tail -5))"
  assert_log mpi3.0.err "rank 0: rows 1..220 of the 660 rows in 2 Parquet files" "rank 0's log"
  assert_log mpi3.1.err "rank 1: rows 221..440 of the 660 rows in 2 Parquet files" "rank 1's log"
  assert_log mpi3.2.err "rank 2: rows 441..660 of the 660 rows in 2 Parquet files" "rank 2's log"
  cat ids.txt ids.txt >ids2.txt
  for r in 0 1 2; do
    sed -n "$((220 * r + 1)),$((220 * r + 220))p" ids2.txt >"ids3.$r"
    p_ids "mpi3.$r" >"mpi3.$r.ids"
    assert_same_file "ids3.$r" "mpi3.$r.ids" "rank $r's P records: the ids of rows $((220 * r + 1))..$((220 * r + 220))"
  done
else
  check "c) ranks under mpirun and the tracker"
  echo "  skipped: this sparktorch was built without MPI (WITH_MPI=$WITH_MPI)"
fi

check "d) 2 hogwild workers, --rank R --input FILE: rows 1..165 and 166..330, 165 each"
unset SPARKTORCH_SECRET  # the server listens on loopback only, as the other hogwild tests'
MLP_SPEC=spec.json       # start_server's model
head -n 165 ids.txt >ids.0
tail -n 165 ids.txt >ids.1
# hogwild_run HOW: a server and workers 0 and 1 on $VEC, each given its id as HOW says (rank:
# --rank R; stdin: --rank-from-stdin with only "R<TAB>" on stdin); checks their shares.
hogwild_run() {
  local how=$1 i
  start_server 2
  for i in 0 1; do
    if [[ $how == rank ]]; then
      "$SPARKTORCH" train --mode hogwild --server "$SERVER" --rank "$i" --world-size 2 -e 2 \
        --format parquet --input "$VEC" --id-field id --predict </dev/null >"out.$i" 2>"err.$i" &
    else
      printf '%s\t' "$i" | "$SPARKTORCH" train --mode hogwild --server "$SERVER" --rank-from-stdin \
        --world-size 2 -e 2 --format parquet --input "$VEC" --id-field id --predict \
        >"out.$i" 2>"err.$i" &
    fi
    WORKER_PID[i]=$!
  done
  finish_job 2
  assert_job_summary 2
  assert_log err.0 "sparktorch[worker 0] info: rank 0: rows 1..165 of the 330 rows in 1 Parquet file" "worker 0's log"
  assert_log err.1 "sparktorch[worker 1] info: rank 1: rows 166..330 of the 330 rows in 1 Parquet file" "worker 1's log"
  for i in 0 1; do
    assert_log "err.$i" "sparktorch[worker $i] info: read 165 rows of 6 features from $VEC" "worker $i's rows"
    assert_eq "$i" "$(summary_field "out.$i" worker)" "worker $i's summary: worker"
    assert_eq 165 "$(summary_field "out.$i" partition_rows)" "worker $i's partition_rows"
    p_ids "out.$i" >"out.$i.ids"
    assert_same_file "ids.$i" "out.$i.ids" "worker $i's P records: the ids of its rows, in order"
  done
  assert_eq 330 "$(summary_eval server.out 's["rows"]')" "the server's rows (an epoch of both workers)"
}
hogwild_run rank

check "d) the same with --rank-from-stdin and only \"R<TAB>\" on stdin"
hogwild_run stdin

check "d) --rank-from-stdin with --input files and an empty stdin: no rank to take a share by (exit 3)"
NO_RANK="$ERR stdin: expected the rank (digits and a tab) before the end of input (--rank-from-stdin with --input files), got nothing"
expect_exit 3 "$NO_RANK" --stdout-empty -- "$SPARKTORCH" -q train --mode hogwild --server 127.0.0.1:9 \
  --rank-from-stdin --world-size 2 --format parquet --input "$VEC" </dev/null
expect_exit 3 "$NO_RANK" --stdout-empty -- "$SPARKTORCH" -q train --model spec.json --tracker 127.0.0.1:9 \
  --rank-from-stdin --world-size 2 --format parquet --input "$VEC" </dev/null

check "e) predict --format parquet --id-field id: 330 lines ID<TAB>VALUE in row order"
run_ok predict.txt "$SPARKTORCH" predict --model pq.pt --format parquet --input "$VEC" --id-field id
assert_lines 330 predict.txt "predictions"
run_ok predict_csv.txt "$SPARKTORCH" predict --model pq.pt --format csv --input rows.csv
paste ids.txt predict_csv.txt >expected_predict.txt
assert_same_file expected_predict.txt predict.txt "ids and values against the csv rows' predictions"
assert_ne 1 "$(cut -f2 predict.txt | sort -u | wc -l | tr -d ' ')" "distinct values (a constant proves no order)"

check "f) Parquet on stdin is a usage error (exit 2), train and predict"
STDIN_LINE="$ERR --format parquet reads files, not stdin (a Parquet file's metadata is at its end): give the files or their directories with --input, or the format of the rows on stdin with --format"
expect_exit 2 "$STDIN_LINE" --stdout-empty -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet <"$VEC"
expect_exit 2 "$STDIN_LINE" --stdout-empty -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet --input - <"$VEC"
expect_exit 2 "$STDIN_LINE" --stdout-empty -- "$SPARKTORCH" -q predict --model pq.pt <"$VEC"

check "f) a missing column names the flag and the file's columns (exit 3)"
expect_exit 3 "$ERR $VEC: no features column feats; the columns are label, features, id (--features-field)" \
  --stdout-empty -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet --input "$VEC" --features-field feats
expect_exit 3 "$ERR $VEC: no label column y; the columns are label, features, id (--label-field)" \
  --stdout-empty -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet --input "$VEC" --label-field y
expect_exit 3 "$ERR $VEC: no id column key; the columns are label, features, id (--id-field)" \
  --stdout-empty -- "$SPARKTORCH" -q predict --model pq.pt --input "$VEC" --id-field key

check "f) a file that is not Parquet (exit 3)"
expect_exit 3 "$ERR rows.csv: not a Parquet file (no PAR1 at its start and end)" \
  --stdout-empty -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet --input rows.csv

check "f) nulls.parquet, --features-field features,x: a null is a bad row (exit 3) naming row and column"
cat >spec4.json <<'JSON'
{"layers": [{"type": "linear", "in_features": 4, "out_features": 1}],
 "loss": "mse", "optimizer": {"type": "adam", "lr": 0.01}}
JSON
# shellcheck disable=SC2054  # features,x is one argument: the columns features and x
NULL_ARGS=(--model spec4.json --epochs 2 --seed 3 --format parquet --input "$NULLS" --features-field features,x)
expect_exit 3 "$ERR $NULLS: row 4: column features is null" --stdout-empty \
  -- "$SPARKTORCH" -q train "${NULL_ARGS[@]}" --output nulls.pt

check "f) ... and with --on-bad-row skip: 7 rows trained, 3 skipped, the weights of the 7 good rows as csv"
run_ok skip.records "$SPARKTORCH" train "${NULL_ARGS[@]}" --on-bad-row skip --output skip.pt
assert_eq 3 "$(summary_field skip.records rows_skipped)" "rows_skipped"
assert_eq 7 "$(summary_field skip.records rows_read)" "rows_read"
assert_eq 7 "$(summary_field skip.records rows)" "rows trained on"
for bad in "4: column features" "6: column label" "8: column x"; do
  assert_log skip.records.err "sparktorch warning: skipping bad row $NULLS: row $bad is null" "the skipped row"
done
jsonl_to_csv "$PQ/nulls.expected.jsonl" features x >nulls.csv
assert_lines 7 nulls.csv "nulls' good rows as csv (label, features, x)"
run_ok nulls_csv.records "$SPARKTORCH" train --model spec4.json --epochs 2 --seed 3 --input nulls.csv \
  --output nulls_csv.pt
assert_eq "$(summary_field nulls_csv.records weights_crc32)" "$(summary_field skip.records weights_crc32)" \
  "the skipping run's weights_crc32 against the 7 good rows' as csv"

check "g) numeric_gzip.parquet, --features-field a,b,c,d,e (float, double, int64, int, array): as csv"
jsonl_to_csv "$PQ/numeric_gzip.expected.jsonl" a b c d e >numeric.csv
assert_lines 100 numeric.csv "numeric_gzip's rows as csv"
train_run numeric_csv --input numeric.csv
train_run numeric_pq --format parquet --input "$NUM" --features-field a,b,c,d,e
assert_eq "$(summary_field numeric_csv.records weights_crc32)" "$(summary_field numeric_pq.records weights_crc32)" \
  "parquet's weights_crc32 against csv's"
train_run numeric_swapped --format parquet --input "$NUM" --features-field a,b,d,c,e
assert_ne "$(summary_field numeric_pq.records weights_crc32)" "$(summary_field numeric_swapped.records weights_crc32)" \
  "weights_crc32 with the columns c and d swapped (the order of --features-field counts)"

check "h) inspect --format parquet: a directory of two part files, as text"
mkdir inspect_table
cp "$VEC" inspect_table/part-00000.parquet
cp "$PQ/vectors_plain_fallback.parquet" inspect_table/part-00001.parquet
: >inspect_table/_SUCCESS
run_ok inspect.txt "$SPARKTORCH" inspect --format parquet --input inspect_table --id-field id
cat >expected_inspect.txt <<'TXT'
parquet: 2 files, 730 rows
  inspect_table/part-00000.parquet: 330 rows, 3 row groups, SNAPPY
  inspect_table/part-00001.parquet: 400 rows, 3 row groups, UNCOMPRESSED
features: features (vector)
label:    label (number)
id:       id (text)
features per row: 6
sparktorch reads these rows (--format parquet)
TXT
assert_same_file expected_inspect.txt inspect.txt "the text of inspect"

check "h) inspect --json: a bad first row is reported, the features counted from the next good one"
run_ok inspect.json "$SPARKTORCH" inspect --json --format parquet --input "$PQ/nonfinite.parquet"
assert_eq "5 4 1 features:vector,label:number" "$(python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))
print(i["rows"], i["num_features"], len(i["files"]),
      ",".join("%s:%s" % (c["name"], c["kind"]) for c in i["columns"]))' inspect.json)" \
  "rows, features per row, files, columns"
assert_eq "$PQ/nonfinite.parquet: row 1: expected finite features, got nan (--allow-nan accepts it)" \
  "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["first_bad_row"])' inspect.json)" \
  "first_bad_row"

check "h) inspect: files train cannot read are exit 3 with train's message, from the footer"
UNREAD="$PQ/encodings_v1.parquet"  # its id column is DELTA_BYTE_ARRAY
UNREAD_LINE="$ERR $UNREAD: row group 1, column id: encoded as DELTA_BYTE_ARRAY, which sparktorch does not read for BYTE_ARRAY values (it reads PLAIN and dictionary encodings, DELTA_BINARY_PACKED for INT32 and INT64, BYTE_STREAM_SPLIT for INT32, INT64, FLOAT and DOUBLE, and RLE for BOOLEAN)"
expect_exit 3 "$UNREAD_LINE" --stdout-empty -- "$SPARKTORCH" -q inspect --format parquet --input "$UNREAD" --id-field id
expect_exit 3 "$UNREAD_LINE" --stdout-empty -- "$SPARKTORCH" -q train "${COMMON[@]}" --format parquet --input "$UNREAD" --id-field id
check "h) inspect: parquet-mr's v2 writer's DELTA_BINARY_PACKED integers are read (delta_v2: 20 rows of 3 features)"
run_ok delta_v2.json "$SPARKTORCH" inspect --json --format parquet --input "$PQ/delta_v2.parquet"
assert_eq "20 3" \
  "$(python3 -c 'import json, sys; i = json.load(open(sys.argv[1])); print(i["rows"], i["num_features"])' delta_v2.json)" \
  "delta_v2: rows, features per row"
expect_exit 3 "$ERR $VEC: no features column feats; the columns are label, features, id (--features-field)" \
  --stdout-empty -- "$SPARKTORCH" -q inspect --format parquet --input "$VEC" --features-field feats

check "h) inspect: a model or Parquet files, one of them (exit 2)"
expect_exit 2 "$ERR inspect needs a model file, or Parquet files with --format parquet --input" \
  --stdout-empty -- "$SPARKTORCH" -q inspect
expect_exit 2 "$ERR inspect --input reads Parquet files: give --format parquet (other formats have no footer to describe)" \
  --stdout-empty -- "$SPARKTORCH" -q inspect --input "$VEC"
expect_exit 2 "$ERR inspect shows a model or Parquet files (--input), not both" \
  --stdout-empty -- "$SPARKTORCH" -q inspect pq.pt --format parquet --input "$VEC"

check "i) ZSTD pages of another writer (zstd_rust.parquet: the Rust parquet crate): the weights of the same rows as csv"
ZSTD_FILE="$PQ/zstd_rust.parquet"  # 60 rows: label double, x double, e [2] doubles, id string
cat >spec3.json <<'JSON'
{"layers": [{"type": "linear", "in_features": 3, "out_features": 8}, "relu",
            {"type": "linear", "in_features": 8, "out_features": 1}],
 "loss": "mse", "optimizer": {"type": "adam", "lr": 0.01}}
JSON
jsonl_to_csv "$PQ/zstd_rust.expected.jsonl" x e >zstd.csv
assert_lines 60 zstd.csv "zstd_rust's rows as csv"
ZSTD_COMMON=(--model spec3.json --epochs 3 --batch-size 16 --seed 3)
run_ok zstd_csv.records "$SPARKTORCH" train "${ZSTD_COMMON[@]}" --input zstd.csv --output zstd_csv.pt
run_ok zstd_pq.records "$SPARKTORCH" train "${ZSTD_COMMON[@]}" --format parquet --input "$ZSTD_FILE" \
  --features-field x,e --output zstd_pq.pt
assert_eq 60 "$(summary_field zstd_pq.records rows_read)" "rows_read"
assert_eq "$(summary_field zstd_csv.records weights_crc32)" "$(summary_field zstd_pq.records weights_crc32)" \
  "the ZSTD file's weights_crc32 against csv's"

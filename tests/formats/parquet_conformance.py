#!/usr/bin/env python3
"""sparktorch's Parquet reader against pyarrow, the oracle, column by column.

Runs parquet_dump (tests/formats/parquet_dump.cc: what the reader makes of each column of a file)
over
  (a) every file of apache/parquet-testing's data/ and bad_data/ (--corpus), each within 1
      second: a crash or a hang fails;
  (b) files this script writes with pyarrow (every codec it has, data pages v1 and v2, with and
      without dictionaries, DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT, RLE booleans, nulls; int32,
      int64, float, double, bool and list<double> columns) and with DuckDB;
and checks that
  - every column the reader accepts holds, row by row, pyarrow's values as float32 (NaN equal to
    NaN, nulls where pyarrow has nulls, lists where it has lists);
  - every refusal is one JSON line naming the file, the row group and the column, in the reader's
    own words ("FILE: row group G, column C: why");
  - no refusal names a codec or an encoding that the reader says it reads (parquet_dump
    --supported), so that once a codec lands, its files must read; in (b), every column of a
    file compressed with a codec the reader does not read yet is refused for that codec, and
    every other column is read;
and prints a summary: files, columns read and compared, refusals by reason.

Usage: parquet_conformance.py --dump PARQUET_DUMP --corpus PARQUET_TESTING --work DIR
       parquet_conformance.py --dump PARQUET_DUMP --files DIR   (only DIR's .parquet files, every
       numeric column of each to be read: the files Spark writes, spark-real.*.parquet_written)
Exit status: 0 when all holds, 1 otherwise, 77 (the test is skipped, after a line that says why)
when pyarrow is not installed or the corpus is not there; where CI=true a skip is a failure
(exit 1), as tests/skip.sh has it. A pyarrow that is there but fails to import (built for
another numpy) is a failure, never a skip.
"""

import argparse
import collections
import json
import math
import os
import subprocess
import sys



def skip(why):
    """Ends the test as skipped (exit 77), or where CI=true as failed (tests/skip.sh)."""
    if os.environ.get("CI") == "true":
        print(f"parquet_conformance: FAIL: {why} (CI=true: a skip is a failure)", flush=True)
        sys.exit(1)
    print(f"parquet_conformance: skipped: {why}", flush=True)
    sys.exit(77)


try:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
except ModuleNotFoundError as e:  # the base venv of examples/install_python.sh has them
    skip(f"{e} (examples/install_python.sh's base environment has it)")
except ImportError as e:  # there, but broken: a failure
    print(f"parquet_conformance: FAIL: {e}", flush=True)
    sys.exit(1)

TIMEOUT_S = 1.0


class Report:
    def __init__(self):
        self.files = 0
        self.read = 0
        self.compared = 0
        self.by_duckdb = 0  # of those compared: with DuckDB's, as pyarrow cannot open the file
        self.unchecked = collections.Counter()  # read, but pyarrow has no value to hold it to
        self.unchecked_names = []
        self.refused = collections.Counter()
        self.refused_valid = []  # refused as corrupt, though pyarrow reads the column
        self.expected_codec = collections.Counter()
        self.failures = []

    def fail(self, what):
        self.failures.append(what)
        if len(self.failures) <= 50:
            print("FAIL: " + what, flush=True)


def run_dump(dump, path, report):
    """The JSON lines parquet_dump prints for `path`, or None after reporting a failure."""
    try:
        done = subprocess.run([dump, path], capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        report.fail(f"{path}: parquet_dump ran past {TIMEOUT_S} s (a hang?)")
        return None
    if done.returncode != 0:
        report.fail(f"{path}: parquet_dump exited with {done.returncode}: "
                    f"{done.stderr.decode(errors='replace')[-500:]}")
        return None
    lines = []
    for text in done.stdout.decode().splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            report.fail(f"{path}: a line that is not JSON: {text[:200]}")
            return None
        lines.append(line)
    return lines


# --- pyarrow's values ---------------------------------------------------------------------

def integer_storage(t):
    """`t` with its temporal leaves replaced by their integer storage, as Parquet stores them."""
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(integer_storage(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(integer_storage(t.key_type)),
                       t.item_field.with_type(integer_storage(t.item_type)))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        ctor = pa.list_ if pa.types.is_list(t) else pa.large_list
        return ctor(t.value_field.with_type(integer_storage(t.value_type)))
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if (pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t)
            or pa.types.is_duration(t)):
        return pa.int64()
    return t


class NoOracle(Exception):
    pass


def walk(value, t, names):
    """The leaf at the Parquet path `names` (below the value's own node) of the pyarrow value
    `value` of type `t`: None, a scalar, or a list of them for a leaf inside a list."""
    if value is None:
        return None
    if pa.types.is_struct(t):
        if not names or t.get_field_index(names[0]) < 0:
            raise NoOracle(f"no field {names[:1]} in {t}")
        field = t.field(t.get_field_index(names[0]))
        return walk(value[names[0]], field.type, names[1:])
    if pa.types.is_map(t):
        # Parquet: a repeated key_value group of key and value.
        if len(names) < 2:
            raise NoOracle(f"a map path {names}")
        key = names[1] == t.key_field.name
        sub = t.key_type if key else t.item_type
        return [walk(k if key else v, sub, names[2:]) for k, v in value]
    if is_list(t):
        element = t.value_field
        rest = list_rest(element, names)
        if rest is None:
            raise NoOracle(f"path {names} below a {t}")
        return [walk(v, element.type, rest) for v in value]
    if names:
        raise NoOracle(f"path {names} below a {t}")
    return value


def is_list(t):
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def list_rest(element, names):
    """What is left of the Parquet path `names` below a list whose element field is `element`,
    or None. The list's repeated node is either already named (a repeated field without a LIST
    annotation: its name was the struct field's), or is the element itself (two-level lists),
    or a group above the element (three levels)."""
    candidates = []
    if len(names) >= 2 and names[1] == element.name:
        candidates.append(names[2:])
    if names and names[0] == element.name:
        candidates.append(names[1:])
    candidates.append(names)
    for rest in candidates:
        if fits(element.type, rest):
            return rest
    return None


def fits(t, names):
    """Whether the Parquet path `names` leads to a leaf of type `t`."""
    if pa.types.is_struct(t):
        return bool(names) and t.get_field_index(names[0]) >= 0 and fits(
            t.field(t.get_field_index(names[0])).type, names[1:])
    if pa.types.is_map(t):
        return len(names) >= 2 and names[1] in (t.key_field.name, t.item_field.name)
    if is_list(t):
        return list_rest(t.value_field, names) is not None
    return not names


def as_float32(v):
    if isinstance(v, bool):
        return np.float32(1.0 if v else 0.0)
    if isinstance(v, int):  # rounded once, as C++ converts an int64 or uint64
        dtype = np.uint64 if v >= 2 ** 63 else np.int64
        return np.array([v], dtype=dtype).astype(np.float32)[0]
    if isinstance(v, float):
        with np.errstate(over="ignore"):  # a double beyond float's range is its infinity
            return np.float32(v)
    raise NoOracle(f"a {type(v).__name__} value")


def ours_float32(v):
    if isinstance(v, str):
        return np.float32({"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v])
    return np.float32(v)


def same(ours, theirs):
    if theirs is None or ours is None:
        return theirs is None and ours is None
    if isinstance(theirs, list) or isinstance(ours, list):
        return (isinstance(theirs, list) and isinstance(ours, list) and len(ours) == len(theirs)
                and all(same(a, b) for a, b in zip(ours, theirs)))
    a, b = ours_float32(ours), as_float32(theirs)
    return (np.isnan(a) and np.isnan(b)) or a == b


class DuckDbOracle:
    """DuckDB's view of a file pyarrow cannot open (its footer has something pyarrow 18 does not
    know, as the geospatial types): its top-level numeric columns only."""

    def __init__(self, path):
        import duckdb
        self.con = duckdb.connect()
        self.path = path
        groups = self.con.execute(
            "SELECT row_group_id, any_value(row_group_num_rows) FROM parquet_metadata(?) "
            "GROUP BY row_group_id ORDER BY row_group_id", [path]).fetchall()
        self.starts = {}
        start = 0
        for group, rows in groups:
            self.starts[group] = (start, rows)
            start += rows

    def rows(self, group, column):
        if "." in column:
            raise NoOracle("DuckDB: a nested column")
        start, n = self.starts[group]
        kind = self.con.execute(
            "SELECT typeof(c) FROM (SELECT \"" + column.replace('"', '""') + "\" AS c "
            "FROM read_parquet(?)) LIMIT 1", [self.path]).fetchone()
        if kind is None or kind[0] not in ("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT",
                                           "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
                                           "FLOAT", "DOUBLE"):
            raise NoOracle(f"DuckDB: a {kind} column")
        values = self.con.execute(
            "SELECT \"" + column.replace('"', '""') + "\" FROM read_parquet(?, "
            "file_row_number = true) ORDER BY file_row_number LIMIT ? OFFSET ?",
            [self.path, n, start]).fetchall()
        return [v[0] for v in values]


class Oracle:
    """pyarrow's view of one file, read a top-level column of a row group at a time."""

    def __init__(self, path):
        self.file = pq.ParquetFile(path)
        self.cache = {}

    def grid(self):
        m = self.file.metadata
        return {(g, i) for g in range(m.num_row_groups) for i in range(m.num_columns)}

    def rows(self, group, column):
        names = column.split(".")
        key = (group, names[0])
        if key not in self.cache:
            try:
                table = self.file.read_row_group(group, columns=[names[0]])
                chunked = table.column(0)
                plain = integer_storage(chunked.type)
                if plain != chunked.type:
                    chunked = chunked.cast(plain)
                self.cache[key] = (chunked.to_pylist(), chunked.type, None)
            except Exception as e:  # pyarrow refuses the column: no value to compare with
                self.cache[key] = (None, None, f"pyarrow: {type(e).__name__}: {e}")
        values, t, error = self.cache[key]
        if error:
            raise NoOracle(error)
        return [walk(v, t, names[1:]) for v in values]


# --- the checks ---------------------------------------------------------------------------

def check_file(dump, path, supported, report, expect_all_read=False, unread_codec=None):
    """Checks parquet_dump's lines for `path` against pyarrow. `expect_all_read`: every numeric
    column must be read. `unread_codec`: the file's codec, which the reader does not read yet:
    every numeric column must be refused for it."""
    report.files += 1
    lines = run_dump(dump, path, report)
    if lines is None:
        return
    try:
        oracle = Oracle(path)
    except Exception as e:
        oracle = None
        why_no_oracle = f"pyarrow cannot open it: {str(e)[:80]}"
        try:
            duckdb_oracle = DuckDbOracle(path)
        except Exception:
            duckdb_oracle = None
    seen = set()
    for line in lines:
        if line.get("file") != path:
            report.fail(f"{path}: a line about another file: {line}")
            continue
        group, leaf, column = line.get("row_group"), line.get("leaf"), line.get("column")
        if "rows" not in line:
            check_refusal(path, line, supported, report, expect_all_read, unread_codec)
            if line.get("reason") == "corrupt" and oracle is not None:
                try:
                    oracle.rows(group, column)
                    report.refused_valid.append(line["refused"])
                except NoOracle:
                    pass
            if group is None:
                if len(lines) != 1:
                    report.fail(f"{path}: a file refused whole, and {len(lines) - 1} lines more")
                continue
        seen.add((group, leaf))
        if "rows" not in line:
            continue
        report.read += 1
        if unread_codec:
            report.fail(f"{path}: row group {group}, column {column}: read, though compressed "
                        f"with {unread_codec}, which the reader says it does not read")
        try:
            if oracle is not None:
                theirs = oracle.rows(group, column)
            elif duckdb_oracle is not None:
                theirs = duckdb_oracle.rows(group, column)
                report.by_duckdb += 1
            else:
                raise NoOracle(why_no_oracle)
        except NoOracle as e:
            report.unchecked[str(e)[:100]] += 1
            report.unchecked_names.append(f"{path}: {column}")
            continue
        ours = line["rows"]
        if len(ours) != len(theirs):
            report.fail(f"{path}: row group {group}, column {column}: {len(ours)} rows, "
                        f"pyarrow {len(theirs)}")
            continue
        for r, (a, b) in enumerate(zip(ours, theirs)):
            if not same(a, b):
                report.fail(f"{path}: row group {group}, column {column}, row {r}: "
                            f"sparktorch {str(a)[:200]}, pyarrow {str(b)[:200]}")
                break
        else:
            report.compared += 1
    if oracle is not None and lines and lines[0].get("row_group") is not None:
        if seen != oracle.grid():
            report.fail(f"{path}: lines for {len(seen)} column chunks, the file has "
                        f"{len(oracle.grid())}")


def check_refusal(path, line, supported, report, expect_all_read, unread_codec):
    keys = {"file", "row_group", "column", "reason", "refused"}
    if not keys <= line.keys():
        report.fail(f"{path}: a refusal without {sorted(keys - line.keys())}: {line}")
        return
    group, column, reason, message = (line["row_group"], line["column"], line["reason"],
                                      line["refused"])
    report.refused[reason] += 1
    if group is None:
        prefix = f"{path}: "
    else:
        prefix = f"{path}: row group {group + 1}, column {column}: "
    if not message.startswith(prefix) or "\n" in message:
        report.fail(f"{path}: a refusal that does not start {prefix!r}: {message}")
    where = f"{path}: row group {group}, column {column}"
    if reason == "codec":
        if line.get("codec") in supported["codecs"]:
            report.fail(f"{where}: refused for codec {line.get('codec')}, which the reader says "
                        f"it reads: {message}")
        if line.get("codec") not in message:
            report.fail(f"{where}: a codec refusal that does not name the codec: {message}")
        if unread_codec and line.get("codec") == unread_codec:
            report.expected_codec[unread_codec] += 1
            return
    if reason == "encoding" and line.get("encoding") in supported["encodings"].get(
            line.get("type"), []):
        report.fail(f"{where}: refused for encoding {line.get('encoding')}, which the reader "
                    f"says it reads for {line.get('type')}: {message}")
    numeric = line.get("type") in ("BOOLEAN", "INT32", "INT64", "FLOAT", "DOUBLE")
    if (expect_all_read or unread_codec) and numeric:
        report.fail(f"{where}: refused: {message}")


def corpus(dump, root, supported, report):
    """Checks every file of the corpus at `root`; returns why it could not (None when it did)."""
    folders = [os.path.join(root, d) for d in ("data", "bad_data")]
    if not all(os.path.isdir(f) for f in folders):
        return (f"no parquet-testing corpus: no {root}/data and bad_data (apache/parquet-testing, "
                f"expected beside the repository in ../shared/parquet-testing)")
    paths = []
    for folder in folders:
        for here, _, names in os.walk(folder):
            paths += [os.path.join(here, n) for n in names]
    for path in sorted(paths):
        check_file(dump, path, supported, report)
    return None


# --- files written here -------------------------------------------------------------------

def table(n, seed):
    """int32, int64, uint32, uint64, float, double, bool and list<double> columns with nulls,
    extremes, NaN and infinities, and a required double."""
    rng = np.random.RandomState(seed)
    nulls = rng.rand(n) < 0.1

    def column(values, t):
        return pa.array([None if z else v for v, z in zip(values, nulls)], t)

    i32 = rng.randint(-2 ** 31, 2 ** 31, n, dtype=np.int64)
    i32[:4] = [-2 ** 31, 2 ** 31 - 1, -2 ** 31, 0]  # deltas that wrap at 32 bits
    i64 = rng.randint(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
    i64[:4] = [-2 ** 63, 2 ** 63 - 1, -2 ** 63, 0]  # ... and at 64
    small = rng.randint(0, 5, n)  # runs and few distinct values, for dictionaries and RLE
    f64 = rng.standard_normal(n) * 1e3
    f64[:6] = [math.nan, math.inf, -math.inf, -0.0, 1e300, 5e-324]
    with np.errstate(over="ignore"):  # 1e300 is inf as a float
        f64_as_f32 = f64.astype(np.float32)
    lists = [None if z else [float(x) if x % 4 else None for x in range(k)]
             for k, z in zip(rng.randint(0, 5, n), rng.rand(n) < 0.1)]
    return pa.table({
        "i32": column(i32.tolist(), pa.int32()),
        "i64": column(i64.tolist(), pa.int64()),
        "i32_runs": column(small.tolist(), pa.int32()),
        # Unsigned (UINT_32, UINT_64 on INT32, INT64): the high bit is not a sign.
        "u32": column((i32 + 2 ** 31).tolist(), pa.uint32()),
        "u64": column([v + 2 ** 63 for v in i64.tolist()], pa.uint64()),
        "f32": column(f64_as_f32.tolist(), pa.float32()),
        "f64": column(f64.tolist(), pa.float64()),
        "f64_required": pa.array((small * 0.25).tolist(), pa.float64()),
        "b": column((small > 1).tolist(), pa.bool_()),
        "e": pa.array(lists, pa.list_(pa.float64())),
    })


def pyarrow_files(work):
    """(path, codec as Parquet names it) of the files written with pyarrow."""
    files = []
    t = table(3000, 1)
    codecs = {"NONE": "UNCOMPRESSED", "SNAPPY": "SNAPPY", "GZIP": "GZIP", "ZSTD": "ZSTD",
              "LZ4": "LZ4_RAW", "BROTLI": "BROTLI"}
    encodings = {
        "plain": dict(use_dictionary=False),
        "dictionary": dict(use_dictionary=True),
        "delta": dict(use_dictionary=False, column_encoding={
            "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED",
            "i32_runs": "DELTA_BINARY_PACKED", "u32": "DELTA_BINARY_PACKED",
            "u64": "DELTA_BINARY_PACKED", "b": "RLE"}),
        "split": dict(use_dictionary=False, column_encoding={
            "i32": "BYTE_STREAM_SPLIT", "i64": "BYTE_STREAM_SPLIT", "u64": "BYTE_STREAM_SPLIT",
            "f32": "BYTE_STREAM_SPLIT",
            "f64": "BYTE_STREAM_SPLIT", "f64_required": "BYTE_STREAM_SPLIT",
            "e.list.element": "BYTE_STREAM_SPLIT", "b": "RLE"}),
    }
    for codec, parquet_codec in codecs.items():
        if codec != "NONE" and not pa.Codec.is_available(codec.lower()):
            continue
        for page in ("1.0", "2.0"):
            for name, options in encodings.items():
                path = os.path.join(work, f"pyarrow_{codec.lower()}_v{page[0]}_{name}.parquet")
                # Small pages and row groups: many of each.
                pq.write_table(t, path, compression=codec, data_page_version=page,
                               data_page_size=2048, row_group_size=1100, **options)
                files.append((path, parquet_codec))
    return files


def duckdb_files(work):
    try:
        import duckdb
    except ImportError:
        print("parquet_conformance: no DuckDB in this Python: its files are not checked")
        return []
    files = []
    con = duckdb.connect()
    query = """SELECT
        CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 7919 - 50000)::INTEGER END AS i32,
        CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 1000000007)::BIGINT END AS i64,
        (i % 3)::INTEGER AS i32_runs,
        CASE WHEN i % 11 = 0 THEN NULL ELSE (i / 7.0)::FLOAT END AS f32,
        CASE WHEN i % 13 = 0 THEN NULL ELSE (i / 3.0)::DOUBLE END AS f64,
        i % 4 = 0 AS b,
        CASE WHEN i % 17 = 0 THEN NULL
             ELSE [(i * 0.5)::DOUBLE, NULL, i::DOUBLE][1:(i % 4)] END AS e
        FROM range(5000) t(i)"""
    for codec in ("uncompressed", "snappy", "gzip", "zstd", "lz4", "lz4_raw", "brotli"):
        path = os.path.join(work, f"duckdb_{codec}.parquet")
        try:
            con.execute(f"COPY ({query}) TO '{path}' "
                        f"(FORMAT PARQUET, COMPRESSION {codec}, ROW_GROUP_SIZE 2048)")
        except Exception as e:
            print(f"parquet_conformance: DuckDB cannot write {codec}: {e}")
            continue
        files.append(path)
    return files


def written(dump, work, supported, report):
    os.makedirs(work, exist_ok=True)
    files = pyarrow_files(work)
    for path in duckdb_files(work):
        # pyarrow's metadata calls LZ4_RAW "LZ4": parquet_dump's lines name the codec as
        # Parquet does.
        lines = run_dump(dump, path, report) or []
        codecs = {line.get("codec") for line in lines if line.get("codec")}
        if len(codecs) != 1:
            report.fail(f"{path}: chunks of codecs {sorted(codecs)}, not one")
            continue
        files.append((path, codecs.pop()))
    for path, codec in files:
        if codec in supported["codecs"]:
            check_file(dump, path, supported, report, expect_all_read=True)
        else:
            check_file(dump, path, supported, report, unread_codec=codec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", required=True)
    parser.add_argument("--corpus")
    parser.add_argument("--work")
    parser.add_argument("--files", help="instead: only the .parquet files of this folder (as "
                        "Spark wrote them, tests/spark_real/parquet_written_test.py), every "
                        "numeric column of each to be read and to equal pyarrow's")
    args = parser.parse_args()
    if not args.files and not (args.corpus and args.work):
        parser.error("--corpus and --work, or --files")
    supported = json.loads(subprocess.run([args.dump, "--supported"], check=True,
                                          capture_output=True).stdout)
    print(f"parquet_conformance: the reader reads {', '.join(supported['codecs'])}")

    results = {}
    missing = []
    parts = (("parquet-testing",
              lambda r: missing.append(corpus(args.dump, args.corpus, supported, r))),
             ("written here", lambda r: written(args.dump, args.work, supported, r)))
    if args.files:
        parts = ((args.files, lambda r: [check_file(args.dump, os.path.join(args.files, name),
                                                    supported, r, expect_all_read=True)
                                         for name in sorted(os.listdir(args.files))
                                         if name.endswith(".parquet")]),)
    for part, run in parts:
        report = Report()
        run(report)
        results[part] = report
        print(f"\n{part}: {report.files} files; {report.read} column chunks read, "
              f"{report.compared} equal to pyarrow's ({report.by_duckdb} to DuckDB's, where "
              f"pyarrow cannot open the file), "
              f"{sum(report.unchecked.values())} without a pyarrow value; "
              f"{sum(report.refused.values())} refused")
        for reason, n in sorted(report.refused.items(), key=lambda x: -x[1]):
            print(f"  refused, {reason}: {n}")
        for codec, n in sorted(report.expected_codec.items()):
            print(f"  of which expected, {codec} not read yet: {n}")
        for message in report.refused_valid:
            print(f"  refused as corrupt, though pyarrow reads it: {message}")
        for name in report.unchecked_names:
            print(f"  read, unchecked: {name}")
        for why, n in sorted(report.unchecked.items(), key=lambda x: -x[1]):
            print(f"  read, unchecked ({why}): {n}")
        print(f"  disagreements and other failures: {len(report.failures)}")
    failures = sum(len(r.failures) for r in results.values())
    if not failures and any(missing):
        skip(next(m for m in missing if m) + "; the rest passed")
    print(f"\nparquet_conformance: {'FAILED' if failures else 'passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

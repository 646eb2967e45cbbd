"""Writes the Parquet test fixtures in this folder with a real Apache Spark (parquet-mr).

Regenerate (from the repository root; Spark 2.4.4 was used for the committed files, 3.x works too):

    export SPARK_HOME=/opt/spark-2.4.4 PYSPARK_PYTHON=/usr/bin/python3 PYSPARK_DRIVER_PYTHON=/usr/bin/python3
    $SPARK_HOME/bin/spark-submit --master 'local[1]' tests/formats/data/parquet/make_fixtures.py

(`/work/shared/spark/install.sh` installs Spark 2.4.4 and prints its SPARK_HOME.)

Each fixture NAME.parquet is one plain Parquet file (Spark writes a directory with coalesce(1); the
single part-*.parquet file is moved to NAME.parquet and the rest is removed). Beside it,
NAME.expected.jsonl holds one JSON object per row, in the file's row order, made by reading the
written file back with Spark: keys are the column names, ML vectors become
{"dense": [all values]}, arrays become lists, null is null.

After writing, the script prints for each fixture the row-group count, the Parquet schema from the
footer, the codec and encodings of each column chunk of the first row group, and per column chunk
the number of data pages and their value encodings (read through parquet-mr over py4j).
"""

import glob
import json
import os
import random
import shutil
import struct
import sys

from pyspark.ml.linalg import DenseVector, SparseVector, Vector, VectorUDT
from pyspark.sql import SparkSession
from pyspark.sql.types import (ArrayType, DecimalType, DoubleType, FloatType, IntegerType,
                               LongType, StringType,
                               StructField, StructType)

HERE = os.path.dirname(os.path.abspath(__file__))

# Hadoop conf keys the fixtures change; they are unset (back to parquet-mr's defaults:
# block 128 MiB, page 1 MiB, dictionary page 1 MiB, page-size check every >= 100 rows)
# before each fixture.
PARQUET_KEYS = ("parquet.block.size", "parquet.page.size", "parquet.dictionary.page.size",
                "parquet.page.size.row.check.min", "parquet.page.size.row.check.max",
                "parquet.writer.version", "parquet.enable.dictionary")

spark = SparkSession.builder.appName("sparktorch-parquet-fixtures").getOrCreate()
spark.sparkContext.setLogLevel("WARN")
sc = spark.sparkContext
jvm = sc._jvm
hconf = sc._jsc.hadoopConfiguration()


def reset_conf():
    for key in PARQUET_KEYS:
        hconf.unset(key)


def set_conf(**settings):
    reset_conf()
    for key, value in settings.items():
        hconf.setInt("parquet." + key.replace("_", "."), int(value))


def to_json_value(v):
    if v is None:
        return None
    if isinstance(v, Vector):
        return {"dense": v.toArray().tolist()}
    if isinstance(v, (list, tuple)):
        return [to_json_value(x) for x in v]
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float, str)):
        return v
    if type(v).__name__ == "Decimal":
        return str(v)
    raise TypeError("unexpected value %r of type %s" % (v, type(v)))


def write_fixture(name, rows, schema, compression, expected=True):
    """Writes rows as HERE/name.parquet (one file) and, when `expected`, HERE/name.expected.jsonl
    (JSON has no NaN or infinity: the tests of such a fixture name its values themselves)."""
    tmp = os.path.join(HERE, "_tmp_" + name)
    shutil.rmtree(tmp, ignore_errors=True)
    df = spark.createDataFrame(rows, schema).coalesce(1)
    df.write.mode("overwrite").option("compression", compression).parquet(tmp)
    parts = glob.glob(os.path.join(tmp, "part-*.parquet"))
    if len(parts) != 1:
        raise RuntimeError("expected one part file in %s, got %r" % (tmp, parts))
    out = os.path.join(HERE, name + ".parquet")
    if os.path.exists(out):
        os.remove(out)
    shutil.move(parts[0], out)
    shutil.rmtree(tmp)

    back = spark.read.parquet(out)
    cols = back.columns
    got = back.collect()
    if len(got) != len(rows):
        raise RuntimeError("%s: wrote %d rows, read back %d" % (name, len(rows), len(got)))
    if not expected:
        reset_conf()
        return out
    # The read-back rows must be the written rows, in order (FLOAT columns as float32).
    float_cols = [i for i, f in enumerate(schema.fields) if isinstance(f.dataType, FloatType)]
    for k, (w, r) in enumerate(zip(rows, got)):
        w = [to_json_value(x) for x in w]
        for i in float_cols:
            w[i] = struct.unpack("<f", struct.pack("<f", w[i]))[0]
        if w != [to_json_value(r[c]) for c in cols]:
            raise RuntimeError("%s row %d: wrote %r, read back %r" % (name, k, w, r))
    with open(os.path.join(HERE, name + ".expected.jsonl"), "w") as f:
        for r in got:
            obj = {c: to_json_value(r[c]) for c in cols}
            f.write(json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n")
    reset_conf()
    return out


def footer_report(path):
    """Prints what parquet-mr's footer (and the pages) say about the file; returns the row-group count."""
    conf = jvm.org.apache.hadoop.conf.Configuration()
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    footer = jvm.org.apache.parquet.hadoop.ParquetFileReader.readFooter(conf, hpath)
    blocks = footer.getBlocks()
    n = blocks.size()
    schema = footer.getFileMetaData().getSchema()
    print("=== %s: %d bytes, %d row group(s), rows per group %s" % (
        os.path.basename(path), os.path.getsize(path), n,
        [blocks.get(i).getRowCount() for i in range(n)]))
    print(schema.toString().rstrip())
    print("first row group column chunks:")
    for c in blocks.get(0).getColumns():
        print("  %-28s codec=%-12s encodings=%s" % (
            c.getPath().toDotString(), c.getCodec().toString(),
            sorted(e.toString() for e in c.getEncodings())))
    # Data pages per column chunk, with their value encodings.
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(conf, hpath)
    try:
        descs = schema.getColumns()
        g = 0
        while True:
            store = reader.readNextRowGroup()
            if store is None:
                break
            parts = []
            for d in descs:
                pr = store.getPageReader(d)
                dict_page = pr.readDictionaryPage() is not None
                encs = []
                while True:
                    p = pr.readPage()
                    if p is None:
                        break
                    v2 = p.getClass().getSimpleName() == "DataPageV2"
                    encs.append((p.getDataEncoding() if v2 else p.getValueEncoding()).toString())
                summary = "%s:%s%dp" % (".".join(d.getPath()), "dict+" if dict_page else "", len(encs))
                if any(e != "PLAIN_DICTIONARY" for e in encs):
                    summary += "[" + ",".join(e.replace("PLAIN_DICTIONARY", "D") for e in encs) + "]"
                parts.append(summary)
            print("  row group %d pages: %s" % (g, " ".join(parts)))
            g += 1
    finally:
        reader.close()
    return n


def vector_struct(name, nullable=True):
    return StructField(name, VectorUDT(), nullable)


def main():
    reset_conf()
    written = []

    # 1. vectors_snappy: dictionary-encoded vectors, several row groups and pages.
    rnd = random.Random(7)
    vals = [0.0, 0.25, 0.5, 1.0, -2.0]
    rows = []
    for i in range(330):
        kind = rnd.randrange(4)
        if kind == 0:
            vec = DenseVector([rnd.choice(vals) for _ in range(6)])
        else:
            nnz = (0, 1, 3)[kind - 1]
            idx = sorted(rnd.sample(range(6), nnz))
            vec = SparseVector(6, idx, [rnd.choice(vals[1:]) for _ in idx])
        rows.append((rnd.choice(vals), vec, "row-%04d" % i))
    schema = StructType([StructField("label", DoubleType(), False), vector_struct("features"),
                         StructField("id", StringType(), True)])
    set_conf(block_size=4096, page_size=256, page_size_row_check_min=10)
    written.append(write_fixture("vectors_snappy", rows, schema, "snappy"))

    # 2. vectors_plain_fallback: the doubles overflow the small dictionary (512 bytes = 64
    # doubles), so parquet-mr falls back to PLAIN in the middle of a column chunk: the chunk holds
    # a dictionary page, dictionary-encoded data pages, then PLAIN data pages. About half of the
    # values are distinct random doubles; the other half repeat a few values, because parquet-mr
    # also abandons the dictionary (with no dictionary page at all) when the chunk's FIRST page
    # does not get smaller with it, which is what happens when every value is distinct.
    rnd = random.Random(7)
    common = [0.0, 1.0, -1.0, 0.5]

    def value(scale):
        # Rounded to 6 decimals only to keep the .expected.jsonl short; still distinct doubles.
        return rnd.choice(common) if rnd.random() < 0.5 else round(rnd.uniform(-scale, scale), 6)

    rows = []
    for i in range(400):
        kind = rnd.randrange(4)
        if kind == 0:
            vec = DenseVector([value(10.0) for _ in range(6)])
        else:
            nnz = (0, 1, 3)[kind - 1]
            idx = sorted(rnd.sample(range(6), nnz))
            vec = SparseVector(6, idx, [value(10.0) for _ in idx])
        rows.append((value(100.0), vec, "id-%04d" % i))
    set_conf(block_size=8192, page_size=128, dictionary_page_size=512, page_size_row_check_min=5)
    written.append(write_fixture("vectors_plain_fallback", rows, schema, "none"))

    # 3. numeric_gzip: plain numeric columns, an array column and a string, gzip.
    rows = []
    for i in range(100):
        rows.append((i % 3,                              # label int
                     (i % 17) * 0.1 - 0.5,               # a float (stored as float32)
                     i * 1.5 - 33.25,                    # b double
                     (i - 50) * 123456789012,            # c long (beyond 32 bits, below 2^53)
                     (i * 7919) % 2001 - 1000,           # d int
                     [i * 0.5, -i * 0.25],               # e array<double>, 2 per row
                     "name_%d" % (i * i)))               # name string
    schema = StructType([StructField("label", IntegerType(), False),
                         StructField("a", FloatType(), True),
                         StructField("b", DoubleType(), True),
                         StructField("c", LongType(), True),
                         StructField("d", IntegerType(), True),
                         StructField("e", ArrayType(DoubleType(), True), True),
                         StructField("name", StringType(), True)])
    written.append(write_fixture("numeric_gzip", rows, schema, "gzip"))

    # 4. nulls: row 3 features null, row 5 label null, row 7 x null.
    rows = []
    for i in range(10):
        label = None if i == 5 else float(i % 2)
        feats = None if i == 3 else DenseVector([i * 1.0, i + 0.5, -i * 2.0])
        x = None if i == 7 else i * 0.125
        rows.append((label, feats, x, "s%d" % i))
    schema = StructType([StructField("label", DoubleType(), True), vector_struct("features"),
                         StructField("x", DoubleType(), True), StructField("s", StringType(), True)])
    written.append(write_fixture("nulls", rows, schema, "snappy"))

    # 5. one_dense_vector_label: the label itself is a vector.
    rows = [(DenseVector([i * 1.0, -i * 0.5]), DenseVector([i + 0.25, i * 2.0, 1.0 - i]))
            for i in range(5)]
    schema = StructType([vector_struct("label"), vector_struct("features")])
    written.append(write_fixture("one_dense_vector_label", rows, schema, "snappy"))

    # 6. decimals: a DECIMAL(10,2) column, stored as INT64 unscaled values (which a reader must
    # not take for the numbers), beside a double.
    from decimal import Decimal  # pylint: disable=import-outside-toplevel
    rows = [(float(i), Decimal("%d.25" % i)) for i in range(4)]
    schema = StructType([StructField("label", DoubleType(), False),
                         StructField("price", DecimalType(10, 2), True)])
    written.append(write_fixture("decimals", rows, schema, "snappy"))

    # 7. nonfinite: NaN and infinities in sparse and dense vectors and in the label; the last row
    # is finite. No .expected.jsonl: parquet_rows_test names these values.
    nan, inf = float("nan"), float("inf")
    rows = [(0.0, SparseVector(4, [1], [nan])),
            (1.0, DenseVector([1.0, inf, 0.0, 0.0])),
            (nan, DenseVector([1.0, 2.0, 3.0, 4.0])),
            (1.0, SparseVector(4, [0, 3], [-inf, 2.0])),
            (0.0, DenseVector([0.5, 0.0, 0.0, 1.0]))]
    schema = StructType([StructField("label", DoubleType(), False), vector_struct("features")])
    written.append(write_fixture("nonfinite", rows, schema, "snappy", expected=False))

    # 8. delta_v2: parquet-mr's v2 writer without dictionaries stores the integers (the label,
    # the vector's type, size and indices) as DELTA_BINARY_PACKED, which sparktorch does not read:
    # its footer says so before any page is read.
    rows = [(i % 10, DenseVector([i * 0.5, -i * 1.0, 1.0])) for i in range(20)]
    schema = StructType([StructField("label", IntegerType(), False), vector_struct("features")])
    reset_conf()
    hconf.set("parquet.writer.version", "v2")
    hconf.set("parquet.enable.dictionary", "false")
    written.append(write_fixture("delta_v2", rows, schema, "snappy"))

    for path in written:
        for f in (path, path[:-len(".parquet")] + ".expected.jsonl"):
            if os.path.exists(f) and os.path.getsize(f) >= 40 * 1024:
                raise RuntimeError("%s is over 40 KB" % f)
    counts = {}
    for path in written:
        counts[os.path.basename(path)] = footer_report(path)
    print("row groups:", counts)
    if counts["vectors_snappy.parquet"] < 3 or counts["vectors_plain_fallback.parquet"] < 2:
        raise RuntimeError("too few row groups: %r" % counts)


if __name__ == "__main__":
    try:
        main()
    finally:
        spark.stop()
    sys.exit(0)

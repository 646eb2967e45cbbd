"""The spark-submit job of parquet_written_test.py: Parquet files as Spark writes them, for the
reader's conformance check (issue 26; sparktorch-formats(7), PARQUET).

One small DataFrame (200 rows: a double label, int, bigint, float, double and boolean columns,
an array of doubles, a dense and a sparse Spark ML vector, nulls in every nullable column) is
written once per way Spark can write it: each compression codec this Spark's Parquet writer has
(none, snappy, gzip, zstd, lz4, lz4_raw), with the v1 and the v2 writer (`parquet.writer.version`
PARQUET_1_0 / PARQUET_2_0: data page v2 and DELTA_BINARY_PACKED integers), with and without
dictionaries. Each case is one file, OUT/CASE.parquet; a case this Spark cannot write is listed
in OUT/refused.txt with Spark's reason.

  spark-submit parquet_written_job.py OUT
"""
import os
import shutil
import sys

from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import SparkSession
from pyspark.sql import types as T

CODECS = ("uncompressed", "snappy", "gzip", "zstd", "lz4", "lz4_raw")


def rows():
    for i in range(200):
        null = i % 17 == 5
        yield (float(i % 10),
               None if null else i - 100,
               None if null else (i - 100) * 10_000_000_019,
               None if null else i / 8.0 - 3,
               None if null else (i - 50) * 1.000001e-3,
               None if null else i % 3 == 0,
               None if null else [float(i), -0.5 * i, 1e-5],
               Vectors.dense([i / 255.0, 0.0, 1.0, -float(i)]),
               Vectors.sparse(6, [1, 4], [float(i), 0.25]) if i % 4 else Vectors.sparse(6, [], []))


SCHEMA = T.StructType([
    T.StructField("label", T.DoubleType(), False),
    T.StructField("i32", T.IntegerType(), True),
    T.StructField("i64", T.LongType(), True),
    T.StructField("f32", T.FloatType(), True),
    T.StructField("f64", T.DoubleType(), True),
    T.StructField("flag", T.BooleanType(), True),
    T.StructField("arr", T.ArrayType(T.DoubleType(), False), True),
    T.StructField("dense", VectorUDT(), False),
    T.StructField("sparse", VectorUDT(), False),
])


def main():
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    spark = SparkSession.builder.appName("parquet_written").getOrCreate()
    df = spark.createDataFrame(list(rows()), SCHEMA).coalesce(1).cache()
    df.count()
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # pylint: disable=protected-access
    refused = []
    for version in ("v1", "v2"):
        hadoop.set("parquet.writer.version", "PARQUET_1_0" if version == "v1" else "PARQUET_2_0")
        for dictionary in (True, False):
            for codec in CODECS:
                case = "spark-%s-%s-%s" % (version, codec, "dict" if dictionary else "plain")
                folder = os.path.join(out, case + ".dir")
                try:
                    (df.write.option("compression", codec)
                     .option("parquet.enable.dictionary", str(dictionary).lower())
                     .parquet(folder))
                except Exception as e:  # pylint: disable=broad-except  # a codec this line lacks
                    refused.append("%s: %s" % (case, str(e).strip().splitlines()[0][:300]))
                    continue
                parts = [f for f in os.listdir(folder) if f.endswith(".parquet")]
                if len(parts) != 1:
                    raise SystemExit("%s: %d part files, expected 1" % (case, len(parts)))
                os.rename(os.path.join(folder, parts[0]), os.path.join(out, case + ".parquet"))
                shutil.rmtree(folder)
    with open(os.path.join(out, "refused.txt"), "w") as f:
        f.write("".join(line + "\n" for line in refused))
    print("parquet_written: Spark %s wrote %d files, refused %d cases"
          % (spark.version, len([f for f in os.listdir(out) if f.endswith(".parquet")]),
             len(refused)))
    spark.stop()


if __name__ == "__main__":
    main()

"""Fixture job of the spark-real tests (spark-real.data): writes the integration fixture's
Fashion-MNIST rows (CSV lines `label,784 pixels`, no header) as the Spark sources the tests
read, once, into OUT:

  train.parquet  label (double), features (a Spark ML vector, by VectorAssembler): 12,000 rows
                 in two files of 6,000 (two partitions when read)
  train1.parquet the same rows in one file of one Parquet row group, which Spark 2.4 reads as
                 two splits of which one holds every row and the other none
  test.parquet   id (0, 1, ... in the CSV's order), label, features: 2,000 rows in one file, so
                 that Spark reads them back in that order, in one partition
  train.csv      label, p0..p783 with a header line (numeric columns train.py assembles)
  bad.csv        label, p0..p783: 300 rows in part-00000 (the first partition Spark reads: the
                 larger file) whose row BAD_ROW has the label 42, and 100 rows in part-00001
  bad.parquet    label, features: the same 400 rows in part-00000 (300) and part-00001 (100),
                 where row BAD_PARQUET_ROW of part-00001 (its own count, 1-based) has the label
                 42: in rank 1's share (rows 201..400) when 2 tasks read the files themselves
  decimal.parquet  label, features: train.parquet's first 4,000 rows in two files whose label
                 is a DECIMAL(3,1) (an INT32 with the DECIMAL annotation), which the binary does
                 not read: Spark must read them for it

  spark-submit prepare_data.py --train DATA/train12k.csv --test DATA/test2k.csv --out OUT
"""
import argparse
import glob
import os
import shutil

from pyspark.ml.feature import VectorAssembler
from pyspark.sql import SparkSession, Window, functions

PIXELS = ["p%d" % i for i in range(784)]
BAD_ROW = 17  # 1-based, in the first partition of bad.csv
BAD_PARQUET_ROW = 17  # 1-based, in bad.parquet's part-00001 (row 317 of the 400)
BAD_LABEL = 42


def read_rows(spark, path):
    """The CSV's rows in file order, in one partition, with an `id`: 0, 1, ..."""
    df = spark.read.csv(os.path.abspath(path), inferSchema=True).coalesce(1)
    df = df.toDF("label", *PIXELS).withColumn("label", functions.col("label").cast("double"))
    return df.withColumn("id", functions.monotonically_increasing_id())


def assemble(df):
    return VectorAssembler(inputCols=PIXELS, outputCol="features").transform(df)


def write_parts(frames, path, fmt):
    """Writes each DataFrame of `frames` as one file of folder `path`, in order: part-00000,
    part-00001, ... (Spark 3.5 and 4 plan a union of coalesced frames as one partition)."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for i, frame in enumerate(frames):
        tmp = "%s.%d.tmp" % (path, i)
        frame.coalesce(1).write.mode("overwrite").option("header", "true").format(fmt).save(tmp)
        (part,) = glob.glob(os.path.join(tmp, "part-00000-*"))
        name = "part-%05d-%s" % (i, os.path.basename(part).split("-", 2)[2])
        shutil.move(part, os.path.join(path, name))
        shutil.rmtree(tmp)
    open(os.path.join(path, "_SUCCESS"), "w").close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    spark = SparkSession.builder.appName("sparktorch spark-real data").getOrCreate()
    out = lambda name: os.path.abspath(os.path.join(args.out, name))  # noqa: E731

    train = read_rows(spark, args.train).cache()
    assembled = assemble(train).select("id", "label", "features")
    assembled.repartitionByRange(2, "id").sortWithinPartitions("id").select(
        "label", "features").write.mode("overwrite").parquet(out("train.parquet"))
    assembled.select("label", "features").coalesce(1).write.mode("overwrite").parquet(
        out("train1.parquet"))
    train.select("label", *PIXELS).write.mode("overwrite").option("header", "true").csv(
        out("train.csv"))

    test = read_rows(spark, args.test)
    assemble(test).select("id", "label", "features").coalesce(1).write.mode(
        "overwrite").parquet(out("test.parquet"))

    # Two files of different sizes: Spark reads the larger first, so it is partition 0 (rank 0).
    first = train.filter(train.id < 300).withColumn(
        "label", functions.when(train.id == BAD_ROW - 1, float(BAD_LABEL))
        .otherwise(train.label))
    second = train.filter((train.id >= 300) & (train.id < 400))
    write_parts([first.select("label", *PIXELS), second.select("label", *PIXELS)],
                out("bad.csv"), "csv")
    # The same rows as vectors, the label 42 moved to part-00001 (the second file).
    first = assemble(train.filter(train.id < 300))
    second = assemble(train.filter((train.id >= 300) & (train.id < 400))).withColumn(
        "label", functions.when(train.id == 300 + BAD_PARQUET_ROW - 1, float(BAD_LABEL))
        .otherwise(train.label))
    write_parts([first.select("label", "features"), second.select("label", "features")],
                out("bad.parquet"), "parquet")

    assembled.filter(assembled.id < 4000).repartitionByRange(2, "id").sortWithinPartitions(
        "id").selectExpr("CAST(label AS DECIMAL(3,1)) AS label", "features").write.mode(
            "overwrite").parquet(out("decimal.parquet"))

    for name in ("train.parquet", "train1.parquet", "train.csv", "test.parquet", "bad.csv",
                 "bad.parquet", "decimal.parquet"):
        df = spark.read.load(out(name), format=name.split(".")[1], header=True)
        rows = df.rdd.mapPartitions(lambda part: [sum(1 for _ in part)]).collect()
        print("wrote %s: %d rows, partitions of %s" % (out(name), sum(rows), rows))
    spark.stop()


if __name__ == "__main__":
    main()

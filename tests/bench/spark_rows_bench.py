"""Rows per second from a Spark DataFrame into the binary and back (man/sparktorch-spark.7, PERFORMANCE: "Rows into the binary").

    spark-submit --master 'local[2]' tests/bench/spark_rows_bench.py --data out/spark \
        --binary build/sparktorch

For each kind of input, the 60,000 Fashion-MNIST training rows in 2 partitions, and for each
way the rows reach the binary (files: the tasks read the Parquet files themselves, readParquet,
for the Parquet inputs, training only; through Spark, readParquet=False: float32,
sparktorch-spark.jar's `<BASE64>`; text: Spark's decimal text, as without the jar,
SPARKTORCH_JAR=""):
  vector (as assembled)  Parquet with a Spark ML `features` vector column as VectorAssembler
                         makes it (sparse where most pixels are 0: 52,171 of the rows);
  vector (dense)         the same vectors, all dense;
  numeric columns (CSV)  a CSV file with a header, label and p0..p783, read with inferSchema;
  numeric columns        the same columns in Parquet,
it prints:
  into train   rows/s from the DataFrame into `sparktorch train` in a 1-epoch sync fit: the
               rows over the slowest rank's read_seconds (its summary), 2 tasks together;
  predict      rows/s of sparktorch_spark.spark.predict (rows to `sparktorch predict` and the
               predictions back beside their rows), counted by an aggregate over the result:
               with the jar (float32) each row and its prediction in one pass (PipeRows),
               without it (text) the JVM's pipe zipped with a second read of the rows;
and, for the vector input as assembled, spark.predict's other paths, forced:
  zipped       the JVM's pipe zipped with a second read (the path without the jar);
  through Python  every row through a Python worker (the path without the jar when a
               DataFrame may give its rows in another order when read twice).
Each figure is the better of 2 runs in this session (the first pays for the JVM's warm-up). It
fails on nothing but errors; tests/bench/spark_bench.sh runs it.
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))

from pyspark.ml.linalg import DenseVector, VectorUDT  # noqa: E402
from pyspark.sql import SparkSession, functions  # noqa: E402

from sparktorch_spark import options as opts  # noqa: E402
from sparktorch_spark import rows as text_rows  # noqa: E402
from sparktorch_spark import spark as layer  # noqa: E402
from sparktorch_spark.options import TrainOptions  # noqa: E402
from sparktorch_spark import columns, jvm, shipping  # noqa: E402
from sparktorch_spark.tasks import binary_candidates, predict_command, process_env  # noqa: E402

SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")


def inputs(spark, data):
    """{name: DataFrame} of the inputs, writing the derived ones into `data` once."""
    assembled = spark.read.parquet(os.path.join(data, "fashion_train.parquet"))
    dense_path = os.path.join(data, "fashion_train_dense.parquet")
    if not os.path.exists(dense_path):
        to_dense = functions.udf(lambda v: DenseVector(v.toArray()), VectorUDT())
        assembled.withColumn("features", to_dense("features")).write.parquet(dense_path)
    csv = spark.read.option("header", "true").option("inferSchema", "true").csv(
        os.path.join(data, "fashion_train.csv"))
    columns_path = os.path.join(data, "fashion_train_columns.parquet")
    if not os.path.exists(columns_path):
        csv.write.parquet(columns_path)
    return [("vector (as assembled)", assembled),
            ("vector (dense)", spark.read.parquet(dense_path)),
            ("numeric columns (CSV)", csv),
            ("numeric columns", spark.read.parquet(columns_path))]


def best(runs, work):
    """The smallest of `runs` timings of `work()` (seconds), and its last result."""
    times, result = [], None
    for _ in range(runs):
        start = time.time()
        result = work()
        times.append(time.time() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--partitions", type=int, default=2)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    spark = SparkSession.builder.appName("sparktorch rows bench").getOrCreate()
    table = []
    for name, df in inputs(spark, args.data):
        df = df.coalesce(args.partitions) if df.rdd.getNumPartitions() > args.partitions else df
        for path in ("files", "float32", "text"):
            if path == "files" and "CSV" in name:
                continue  # a CSV file is not read by the tasks themselves
            if path == "text":
                os.environ["SPARKTORCH_JAR"] = ""
            else:
                os.environ.pop("SPARKTORCH_JAR", None)
            table.append(_measure(name, path, df, binary, args.partitions))
    spark.stop()
    print("\nrows/s, 2 tasks on %d partitions together (better of 2 runs)" % args.partitions)
    print("%-24s %-8s %12s %12s %12s %16s" % ("input", "path", "into train", "predict",
                                              "zipped", "through Python"))
    for line in table:
        forced = ["%.0f" % v for v in line[4:]] or ["", ""]
        predict = "" if line[3] is None else "%.0f" % line[3]
        print("%-24s %-8s %12.0f %12s %12s %16s" % tuple(line[:3] + [predict] + forced))


def _measure(name, path, df, binary, partitions):
    """[name, path, rows/s into train, rows/s of predict(, rows/s zipped, through Python)]."""
    rows = df.count()
    options = TrainOptions(torchObj=SPEC, labelCol="label", iters=1, partitions=partitions,
                           binary=binary, verbose=-1, readParquet=path == "files",
                           inputCols=None if "features" in df.columns else
                           [c for c in df.columns if c != "label"])
    reads = []
    for _ in range(2):
        result = layer.train(df, options)
        reads.append(max(s["read_seconds"] for s in result.summaries))
    model = result.model
    if path == "files":
        return [name, path, rows / min(reads), None]  # prediction has no such path
    features = df.drop("label")

    def predicted(frame):
        return frame.agg(functions.sum("predictions")).first()[0]

    predict_seconds, _ = best(2, lambda: predicted(layer.predict(features, model,
                                                                 binary=binary)))
    line = [name, path, rows / min(reads), rows / predict_seconds]
    if name.startswith("vector (as"):
        for forced in (_zipped, _through_python):
            seconds, _ = best(2, lambda: predicted(forced(features, model, binary)))
            line.append(rows / seconds)
    return line


def _command_and_text(df, model, binary):
    """The prediction command and the rows' text, as spark.predict makes them."""
    sc = df.sql_ctx.sparkSession.sparkContext
    with tempfile.NamedTemporaryFile(suffix=".pt", delete=False) as f:
        f.write(model)
    command = predict_command(binary_candidates(binary, shipping.files_dir(sc)),
                              opts.verbosity_flags(-1), model_path=shipping.ship_file(sc, f.name),
                              vector_out=False)
    text = text_rows.row_text(None, columns.column_kinds(df, ["features"]),
                              shipping.features_encoder(df.sql_ctx.sparkSession, [binary]))
    return command, text


def _zipped(df, model, binary):
    """spark.predict's zipped path, forced (taken without the jar for DataFrames that read
    again in the same order)."""
    command, text = _command_and_text(df, model, binary)
    sc = df.sql_ctx.sparkSession.sparkContext
    predicted = jvm.pipe(sc, jvm.lines(df.selectExpr(text)), command, process_env(1),
                         barrier=False)
    paired = jvm.zip_lines(df, predicted, "line")
    return paired.selectExpr("*", "CAST(line AS DOUBLE) AS predictions")


def _through_python(df, model, binary):
    """spark.predict's Python path, forced (taken without the jar for DataFrames read in no
    fixed order)."""
    command, text = _command_and_text(df, model, binary)
    return layer._predict_through_python(df, text, command, False, "predictions",  # noqa pylint: disable=protected-access
                                         env=process_env(1))


if __name__ == "__main__":
    main()

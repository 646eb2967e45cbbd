"""The spark-submit job of rows_test.py: every kind of column the Spark layer turns into rows,
through real Spark SQL.

For each case it writes a JSON line to FACTS: the case's name, the rows' text as Spark SQL made
it (rows.row_text, collected in order), the rows as they are with sparktorch-spark.jar's
function (`encoded`: the features as float32 `<BASE64>` where it gives them), and, for the
feature cases, the predictions of spark.predict, each with the row's id: with the jar (one pass
through sparktorch-spark.jar's PipeRows) on the DataFrame read back from Parquet and on the same
rows through a plan with a nondeterministic filter; without it (SPARKTORCH_JAR="") on the first
(the JVM's pipe zipped with a second read of the rows) and on the second (the Python worker's
path). Once also: the processes a prediction of 40,000 rows left running after a consumer that
stopped at the first row (`limit(1)`), and two predictions of 8 partitions: their sums and the
predict processes after each (kept between tasks), then how many remain after the keep time.
With the jar, a last line: each of seven vectors as the float32 record PipeRows writes from the
vector's cell for a vector column (VectorRecords), told back as text by a decoder, beside what
the record must hold.

  spark-submit rows_job.py --model MODEL.pt --binary SPARKTORCH --work DIR --facts FACTS
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["REPO"], "spark-scripts"))

from pyspark.ml.linalg import SparseVector  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.ml.linalg import Vectors  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.ml.linalg import VectorUDT  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.sql import SparkSession  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.sql import functions as F  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.sql import types as T  # noqa: E402  pylint: disable=wrong-import-position

from sparktorch_spark import columns, jvm, shipping  # noqa: E402  pylint: disable=wrong-import-position
from sparktorch_spark import rows as text_rows  # noqa: E402  pylint: disable=wrong-import-position
from sparktorch_spark import spark as layer  # noqa: E402  pylint: disable=wrong-import-position

def frame(spark):
    schema = T.StructType([
        T.StructField("id", T.IntegerType()),
        T.StructField("label", T.IntegerType()),
        T.StructField("target", T.DoubleType()),
        T.StructField("dense", VectorUDT()),
        T.StructField("sparse", VectorUDT()),
        T.StructField("i", T.IntegerType()),
        T.StructField("d", T.DoubleType()),
        T.StructField("f", T.FloatType()),
        T.StructField("l", T.LongType()),
        T.StructField("arr", T.ArrayType(T.DoubleType())),
        T.StructField("vlabel", VectorUDT()),
        T.StructField("slabel", VectorUDT()),
        T.StructField("holey", T.DoubleType()),
    ])
    rows = [
        (0, 0, 1.5, Vectors.dense([0.0, 0.5, -2.0, 1e-05]),
         Vectors.sparse(4, [1, 3], [0.5, 1e-05]), 1, 0.5, 2.5, 7, [0.25, -1.0, 3.0],
         Vectors.dense([1.0, 0.0]), Vectors.sparse(2, [0], [1.0]), 1.0),
        (1, 2, -0.25, Vectors.dense([1.0, -1.0, 0.25, 3.0]),
         Vectors.sparse(4, [], []), -3, 1e-07, -0.5, 12345678901, [0.0, 1.5, -2.0],
         Vectors.dense([0.0, 1.0]), Vectors.sparse(2, [1], [1.0]), None),
        (2, 1, 0.0, Vectors.dense([2.0, 2.0, 2.0, 2.0]),
         Vectors.sparse(4, [0, 2], [-1.0, 4.0]), 0, -2.0, 0.125, -1, [1.0, 1.0, 1.0],
         Vectors.dense([0.5, 0.5]), Vectors.sparse(2, [0, 1], [0.5, 0.5]), 2.0),
    ]
    return spark.createDataFrame(rows, schema)


# (case, label column or None, feature columns): the features are four numbers in every case.
CASES = [
    ("dense vector, class label", "label", ["dense"]),
    ("sparse vector, class label", "label", ["sparse"]),
    ("numeric columns (int, double, float, long), double label", "target", ["i", "d", "f", "l"]),
    ("an array column and a number, no label", None, ["arr", "i"]),
    ("dense vector label, dense vector", "vlabel", ["dense"]),
    ("sparse vector label, sparse vector", "slabel", ["sparse"]),
    ("a null cell among numeric columns", "label", ["i", "holey", "d", "f"]),
]


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--model", "--binary", "--work", "--facts"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    spark = SparkSession.builder.appName("sparktorch rows test").getOrCreate()
    saved = os.path.join(args.work, "rows.parquet")
    frame(spark).coalesce(1).write.mode("overwrite").parquet(saved)
    df = spark.read.parquet(saved)
    with open(args.model, "rb") as f:
        model = f.read()
    encoder = shipping.features_encoder(spark, [args.binary])
    with open(args.facts, "w") as out:
        for case, label, features in CASES:
            kinds = columns.column_kinds(df, features)
            labelled = columns.label_column(df, label) if label else None
            fact = {"case": case, "encoder": encoder}
            for key, name in (("lines", None), ("encoded", encoder)):
                text = text_rows.row_text(labelled, kinds, name)
                fact[key] = [r[0] for r in df.orderBy("id").selectExpr(text).collect()]
            if label is None or label == "label":
                # Keeps every row (ids are 0, 1, ...); Spark 4 folds `rand() >= 0.0` to true.
                shuffled = df.where(F.rand(seed=7) * F.col("id") >= 0.0)
                fact["zip_path"] = jvm.recomputes_in_order(df)
                fact["python_path"] = not jvm.recomputes_in_order(shuffled)
                for key, data in (("one_pass", df), ("one_pass_shuffled", shuffled),
                                  ("zipped_text", df), ("through_python_text", shuffled)):
                    if key.endswith("_text"):
                        os.environ["SPARKTORCH_JAR"] = ""
                    try:
                        fact[key] = _predictions(layer.predict(data, model, input_cols=features,
                                                               binary=args.binary))
                    except Exception as e:  # pylint: disable=broad-except  # the null case
                        fact[key + "_error"] = str(e)
                    os.environ.pop("SPARKTORCH_JAR", None)
                if case == CASES[0][0]:
                    # Far more rows than a batch and the pipes hold: the process still waits
                    # for rows when the task has its one.
                    many = spark.range(0, 40000, 1, 1).selectExpr(
                        "CAST(id AS INT) AS id", "CAST(id % 7 AS DOUBLE) AS a", "1.0 AS b",
                        "2.0 AS c", "3.0 AS d")
                    fact["first"] = layer.predict(many, model, input_cols=["a", "b", "c", "d"],
                                                  binary=args.binary).limit(1).collect()[0]["id"]
                    fact["left_running"] = _predictions_running(model)
                    # 8 partitions, twice: each executor slot keeps its process for the next
                    # task (here 3 s, not 30), the second prediction starts none.
                    layer.PREDICT_KEEP_SECONDS = 3
                    eight = many.limit(4000).repartition(8)
                    fact["kept"] = []
                    for _ in range(2):
                        total = layer.predict(eight, model, input_cols=["a", "b", "c", "d"],
                                              binary=args.binary).selectExpr(
                                                  "sum(predictions)").first()[0]
                        fact["kept"].append([total, _predictions_pids(model)])
                    fact["kept_after"] = _predictions_running(model)
            out.write(json.dumps(fact) + "\n")
        if encoder:
            out.write(json.dumps(_vector_records(spark)) + "\n")
    spark.stop()


# Reads float32 records on stdin and answers each with a line that says what it held (the
# command PipeRows runs in _vector_records): "dense [values]", "sparse SIZE [indices] [values]",
# "null", and the group's end line for the group end record.
_RECORDS_TO_TEXT = r"""
import struct, sys
rows = sys.stdin.buffer
def take(form, n):
    return list(struct.unpack("<%%d%%s" %% (n, form), rows.read(4 * n)))
while True:
    head = rows.read(4)
    if len(head) < 4:
        break
    head, = struct.unpack("<I", head)
    if head == 0xFFFFFFFE:
        print(%r, flush=True)
    elif head == 0xFFFFFFFF:
        print("null", flush=True)
    elif head & 0x80000000:
        count = head & 0x7FFFFFFF
        size, = take("I", 1)
        print("sparse %%d %%s %%s" %% (size, take("I", count), take("f", count)), flush=True)
    else:
        print("dense %%s" %% take("f", head), flush=True)
""" % layer.GROUP_END


def _float32(values):
    return list(struct.unpack("<%df" % len(values), struct.pack("<%df" % len(values), *values)))


def _vector_records(spark):
    """{"vector_records": [[expected, PipeRows' record]...]}: each of seven vectors (dense,
    sparse as a sparse record, sparse as a dense one, empty, null) as the record PipeRows
    writes from the vector's cell (VectorRecords), told back as text by a decoder
    (_RECORDS_TO_TEXT), beside what the float32 row format says the record must hold."""
    vectors = [Vectors.dense([0.0, 0.5, -2.0, 1e-05, 3.0e38, -0.0, 7.0, 1.0, 2.0, 3.0]),
               Vectors.sparse(10, [1, 9], [0.5, 1e-05]), Vectors.sparse(10, [4], [-2.5]),
               Vectors.sparse(10, [], []), None, Vectors.dense([]),
               Vectors.sparse(3, [0, 2], [1.0, 2.0])]
    expected = []
    for v in vectors:
        if v is None:
            expected.append("null")
        elif isinstance(v, SparseVector) and 2 * len(v.indices) < v.size:
            expected.append("sparse %d %s %s" % (v.size, [int(i) for i in v.indices],
                                                 _float32(v.values)))
        else:
            expected.append("dense %s" % _float32(v.toArray()))
    schema = T.StructType([T.StructField("id", T.IntegerType()), T.StructField("v", VectorUDT())])
    df = spark.createDataFrame(list(enumerate(vectors)), schema).coalesce(1)
    piped = jvm.pipe_rows(df, [sys.executable, "-c", _RECORDS_TO_TEXT], {}, "decoder",
                          layer.GROUP_END, 0, "line", vector_col="v")
    got = [r["line"] for r in piped.orderBy("id").collect()]
    return {"vector_records": [[w, g] for w, g in zip(expected, got)], "count": len(got)}


def _predictions_pids(model):
    """The process ids of the `sparktorch predict` processes of `model` (a shipped copy's name
    holds its size) that read lines of the vector format (numeric columns; a vector column's
    predictions read float32 records, and their kept processes are other ones), sorted."""
    pattern = "^[^ ]*sparktorch .*predict --model .*-%d-model.pt --format vector" % len(model)
    found = subprocess.run(["pgrep", "-f", pattern], stdout=subprocess.PIPE, check=False)
    return sorted(int(pid) for pid in found.stdout.decode().split())


def _predictions_running(model, seconds=10):
    """How many `sparktorch predict` processes of `model` still run after up to `seconds`: a
    task that stopped reading kills its own, and an idle kept one ends after its keep time."""
    deadline = time.time() + seconds
    while True:
        running = _predictions_pids(model)
        if not running or time.time() > deadline:
            return len(running)
        time.sleep(0.2)


def _predictions(df):
    return sorted([r["id"], r["predictions"]] for r in df.select("id", "predictions").collect())


if __name__ == "__main__":
    main()

"""The transforms of peers_bench.py (its docstring says what each measures): sparktorch's
SparkTorchModel.transform, SparkTorch 0.2.0's, predict_batch_udf's, and the parts of
sparktorch's (Spark's read alone, with the lines, the binary alone, coalesced), each warmed up
before it is timed."""
import functools
import glob
import io
import os
import sys
import time
import traceback

import torch
from pyspark.sql import DataFrame, functions as F

FEATURES = 784
WARM_ROWS = 20000  # each transform's untimed warm-up


def transform_frame(name, df, net, ours_model_bytes, args, make_predict_fn):
    """`df` with a `prediction` double column, as the tool `name` adds it."""
    if name == "ours":
        from sparktorch_spark.ml import create_spark_torch_model  # pylint: disable=import-outside-toplevel
        return create_spark_torch_model(ours_model_bytes or scripted(net), inputCol="features", predictionCol="prediction",
                                        binary=os.path.abspath(args.binary)).transform(df)
    if name == "SparkTorch":
        from sparktorch import create_spark_torch_model  # pylint: disable=import-outside-toplevel
        return create_spark_torch_model(net, inputCol="features",
                                        predictionCol="prediction").transform(df)
    from pyspark.ml.functions import vector_to_array  # pylint: disable=import-outside-toplevel
    return df.withColumn("prediction", batch_udf(net, make_predict_fn)(
        vector_to_array("features", "float32")))


_BATCH_UDFS = {}  # id(net) -> (net, its predict_batch_udf)


def batch_udf(net, make_predict_fn):
    """predict_batch_udf of `net`'s weights (float32 rows of FEATURES), made once per net as its
    user makes it once: the UDF's id keys the model its Python workers cache, so the warm-up
    and every timed run use the model each worker loaded once."""
    if id(net) not in _BATCH_UDFS:
        from pyspark.ml.functions import predict_batch_udf  # pylint: disable=import-outside-toplevel
        from pyspark.sql.types import DoubleType  # pylint: disable=import-outside-toplevel
        state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        _BATCH_UDFS[id(net)] = (net, predict_batch_udf(
            make_predict_fn(state), return_type=DoubleType(), batch_size=1024,
            input_tensor_shapes=[[FEATURES]]))
    return _BATCH_UDFS[id(net)][1]


def ours_lines(df, args):
    """The SQL of the line sparktorch's transform pipes for each row of `df` (its features as
    float32 in base64, through sparktorch-spark.jar, else Spark's decimal text), as
    sparktorch_spark.spark.predict makes it."""
    from sparktorch_spark import rows as text_rows  # pylint: disable=import-outside-toplevel
    from sparktorch_spark import columns, shipping  # pylint: disable=import-outside-toplevel
    encoder = shipping.features_encoder(df.sparkSession, [os.path.abspath(args.binary)])
    return text_rows.row_text(None, columns.column_kinds(df, ["features"]), encoder)


def binary_alone(spark, args, paths, net, ours_model_bytes):
    """(rows, seconds) of `sparktorch predict` alone on the lines of the training rows (one copy,
    from files that Spark wrote first), one process per file at once, as the tasks run it."""
    import subprocess  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel
    train = spark.read.parquet(paths["train"])
    with tempfile.TemporaryDirectory(prefix="peers-bench-", dir=args.work) as tmp:
        lines = os.path.join(tmp, "lines")
        train.selectExpr(ours_lines(train, args) + " AS t").coalesce(args.tasks).write.text(
            lines)
        model = os.path.join(tmp, "model.pt")
        with open(model, "wb") as f:
            f.write(ours_model_bytes or scripted(net))
        parts = sorted(glob.glob(os.path.join(lines, "part-*")))
        command = [os.path.abspath(args.binary), "-q", "predict", "--model", model, "--format",
                   "vector", "--batch-size", "1024", "--threads", "1"]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        started = time.time()
        running = []
        for part in parts:
            with open(part, "rb") as rows_in, open(part + ".out", "wb") as out:
                running.append(subprocess.Popen(command, stdin=rows_in, stdout=out, env=env))
        if any(p.wait() for p in running):
            raise RuntimeError("sparktorch predict failed: %s" % " ".join(command))
        seconds = time.time() - started
        rows = 0
        for part in parts:
            with open(part + ".out", "rb") as f:
                rows += sum(1 for _ in f)
    return rows, seconds


def scripted(net):
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(net), buffer)
    return buffer.getvalue()


def run_transform(name, spark, args, paths, net, ours_model_bytes, make_predict_fn):
    """(rows/s, rows, share predicted right, error, tasks). `make_predict_fn(state)` is
    predict_batch_udf's function of the MLP's weights (peers_bench.py's: in __main__, so that
    cloudpickle ships it, and the MLP it builds, by value)."""
    say("transform %s" % name)
    try:
        if name == "ours-binary":
            rows, seconds = binary_alone(spark, args, paths, net, ours_model_bytes)
            return rows / seconds, rows, None, None, args.tasks
        train = spark.read.parquet(paths["train"])
        copies = args.sparktorch020_copies if name == "SparkTorch" else args.transform_copies
        df = functools.reduce(DataFrame.unionAll, [train] * copies)
        if name.endswith("-coalesced"):  # one task per core: each starts its process once
            name, df = name[:-len("-coalesced")], df.coalesce(args.tasks)
        if name in ("read-only", "ours-lines"):  # Spark's part of the work, alone
            if name == "ours-lines":
                df = df.selectExpr(ours_lines(df, args) + " AS t")
            rows = df.count()  # and the warm-up
            started = time.time()
            df.write.format("noop").mode("overwrite").save()
            seconds = time.time() - started
            return rows / seconds, rows, None, None, df.rdd.getNumPartitions()
        # Over both task slots: a kept process, or a Python worker, for each.
        warm = train.limit(WARM_ROWS // (10 if name == "SparkTorch" else 1)).repartition(
            args.tasks)
        transform_frame(name, warm, net, ours_model_bytes, args, make_predict_fn).agg(
            F.sum("prediction")).first()
        out = transform_frame(name, df, net, ours_model_bytes, args, make_predict_fn)
        started = time.time()
        right, rows = out.agg(F.sum((F.col("prediction") == F.col("label")).cast("long")),
                              F.count("*")).first()
        seconds = time.time() - started
        say("transform %s: %d rows in %.2f s" % (name, rows, seconds))
        return rows / seconds, rows, right / rows, None, df.rdd.getNumPartitions()
    except Exception as e:  # pylint: disable=broad-except
        say("transform %s failed:\n%s" % (name, traceback.format_exc()))
        return None, None, None, one_line(e), None


def say(text):
    print("peers_bench: %s" % text, file=sys.__stderr__, flush=True)


def one_line(e):
    text = " ".join(("%s: %s" % (type(e).__name__, e)).split())
    return text if len(text) <= 400 else text[:400] + " ..."

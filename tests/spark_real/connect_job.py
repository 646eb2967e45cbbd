"""The Spark Connect client of connect_test.py: the same stages as a classic session's, on a
session of `SparkSession.builder.remote(URL)`, with no spark-submit. Writes one JSON line of
facts per phase to FACTS:

  all     sync and hogwild fits on train.parquet (12,000 rows) with their accuracy on
          test.parquet through SparkTorchModel.transform, the transform's predictions and
          useVectorOut's outputs beside PyTorch 2.x's own forward of the fitted model on the
          same rows, a Pipeline saved and loaded (on 3.5, whose Pipeline persistence needs a
          JVM on the client, the model stage itself), and each failure's one-line error: a bad
          label, a null vector, no binary on the executors, more partitions than slots, and a
          transform with no binary
  lost    a sync fit of EPOCHS epochs with seed 7919 (the test kills one of its ranks): its
          attempts and rows
  bundle  with no --binary (SPARKTORCH_BUNDLE names the bundle, which reaches the executors
          as an archive artifact): a sync fit and its transform, and the one-line error of a
          fit with one partition more than the master's slots
Every phase also writes the job secrets its fits' sparktorch processes had in their
environment (read from /proc while they run: the client is on the same machine), and whether
any plan this client sent (every collect's) holds one.

  python connect_job.py --remote sc://HOST:PORT [--binary SPARKTORCH] --data SPARK_DATA
                        --work DIR --facts FACTS --phase all|lost|bundle
"""
import argparse
import glob
import io
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["REPO"], "spark-scripts"))

import numpy as np  # noqa: E402  pylint: disable=wrong-import-position
import pyarrow.parquet as pq  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.ml import Pipeline, PipelineModel  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.sql import SparkSession  # noqa: E402  pylint: disable=wrong-import-position
from pyspark.sql import functions as F  # noqa: E402  pylint: disable=wrong-import-position

from sparktorch_spark.ml import SparkTorch, SparkTorchModel  # noqa: E402  pylint: disable=wrong-import-position

SPEC = os.path.join(os.environ["REPO"], "examples", "fashion_mnist_mlp.json")
LOST_EPOCHS = 8


class SecretWatch:
    """The SPARKTORCH_SECRET values of the sparktorch processes on this machine, read from
    /proc every 50 ms while it runs, and the plans of every collect of this client."""

    def __init__(self):
        self.secrets, self.plans = set(), []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        from pyspark.sql.connect.dataframe import DataFrame  # noqa pylint: disable=import-outside-toplevel
        original, plans = DataFrame.collect, self.plans

        def collect(df):
            plans.append(df._plan.to_proto(df._session.client).SerializeToString())  # noqa pylint: disable=protected-access
            return original(df)
        DataFrame.collect = collect

    def _watch(self):
        while not self.stopping.wait(0.05):
            for path in glob.glob("/proc/[0-9]*/environ"):
                try:
                    with open(path, "rb") as f:
                        environ = f.read()
                except OSError:
                    continue
                for entry in environ.split(b"\0"):
                    if entry.startswith(b"SPARKTORCH_SECRET=") and len(entry) > 18:
                        self.secrets.add(entry[18:].decode())

    def __enter__(self):
        self.thread.start()
        return self

    def stop(self):
        """Stops watching; the secrets no longer change after it returns."""
        self.stopping.set()
        self.thread.join()

    def __exit__(self, *_):
        self.stop()

    def facts(self):
        return {"secrets": sorted(self.secrets),
                "secret_in_plan": any(s.encode() in p for s in self.secrets for p in self.plans),
                "plans": len(self.plans)}


def stage(binary, mode="sync", iters=2, **more):
    return SparkTorch(inputCol="features", labelCol="label", predictionCol="prediction",
                      torchObj=SPEC, iters=iters, miniBatch=64, mode=mode, binary=binary,
                      partitions=2, **more)


def error_of(call):
    """(class name, message) of what `call()` raises; None when it returns."""
    try:
        call()
    except Exception as e:  # pylint: disable=broad-except
        return [type(e).__name__, str(e)]
    return None


def dense(vector):
    """A Spark ML vector as Parquet holds it (type 0 sparse, 1 dense), as a list."""
    if vector["type"] == 1:
        return vector["values"]
    out = [0.0] * vector["size"]
    for i, v in zip(vector["indices"], vector["values"]):
        out[i] = v
    return out


def torch_outputs(model, data):
    """The fitted model's outputs on test.parquet's rows, by PyTorch 2.x itself."""
    import torch  # pylint: disable=import-outside-toplevel
    table = pq.read_table(os.path.join(data, "test.parquet")).to_pydict()
    x = torch.tensor(np.array([dense(f) for f in table["features"]], dtype=np.float32))
    with torch.no_grad():
        out = torch.jit.load(io.BytesIO(model))(x).numpy()
    return dict(zip(table["id"], out.tolist()))


def fit_facts(spark, args, mode, **more):
    train = spark.read.parquet(os.path.join(args.data, "train.parquet"))
    test = spark.read.parquet(os.path.join(args.data, "test.parquet"))
    started = time.time()
    model = stage(args.binary, mode, **more).fit(train)
    fact = {"mode": mode, "seconds": time.time() - started, "attempts": model.attempts,
            "readParquet": more.get("readParquet", True),
            "rows": sum(s.get("partition_rows", 0) for s in model.summaries)}
    predicted = model.transform(test)
    fact["schema"] = predicted.schema.simpleString()
    rows = predicted.select("id", "label", "prediction").collect()
    fact["accuracy"] = sum(r["prediction"] == r["label"] for r in rows) / len(rows)
    outputs = torch_outputs(model.modelBytes(), args.data)
    fact["torch_agrees"] = sum(r["prediction"] == float(np.argmax(outputs[r["id"]]))
                               for r in rows)
    fact["count"] = len(rows)
    if mode == "sync":
        vectors = model.setUseVectorOut(True).transform(test).orderBy("id").limit(20).collect()
        fact["vector_gap"] = max(float(np.max(np.abs(np.array(r["prediction"].toArray()) -
                                                     np.array(outputs[r["id"]]))))
                                 for r in vectors)
    return fact


def all_facts(spark, args, out):
    for mode, more in (("sync", {}), ("hogwild", {}), ("sync", {"readParquet": False})):
        out.write(json.dumps(fit_facts(spark, args, mode, **more)) + "\n")
        out.flush()
    train = spark.read.parquet(os.path.join(args.data, "train.parquet"))
    test = spark.read.parquet(os.path.join(args.data, "test.parquet"))
    fitted = Pipeline(stages=[stage(args.binary, iters=1)]).fit(train)
    saved = os.path.join(args.work, "pipeline")
    if spark.version.startswith("3."):  # Spark 3.5's Pipeline persistence needs a JVM here
        fitted.stages[0].write().save(saved)
        loaded = SparkTorchModel.load(saved)
    else:
        fitted.write().overwrite().save(saved)
        loaded = PipelineModel.load(saved)
    sums = [m.transform(test).agg(F.sum("prediction")).first()[0] for m in (fitted, loaded)]
    out.write(json.dumps({"pipeline_sums": sums, "spark": spark.version}) + "\n")
    bad = spark.read.parquet(os.path.join(args.data, "bad.parquet"))
    nulls = test.limit(50).withColumn(
        "features", F.when(F.col("id") == 7, F.lit(None)).otherwise(F.col("features")))
    failures = {
        "bad_label": error_of(lambda: stage(args.binary, iters=1).fit(bad)),
        "null_vector": error_of(lambda: stage(args.binary, iters=1).fit(nulls)),
        "no_binary": error_of(lambda: stage("/nonexistent/sparktorch", iters=1).fit(train)),
        "partitions": error_of(lambda: stage(args.binary, iters=1).setPartitions(3).fit(train)),
        "transform_no_binary": error_of(lambda: fitted.stages[0].setBinary(
            "/nonexistent/sparktorch").transform(test).collect()),
    }
    out.write(json.dumps({"failures": failures}) + "\n")


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--remote", "--data", "--work", "--facts", "--phase"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--binary")
    args = parser.parse_args()
    spark = SparkSession.builder.remote(args.remote).getOrCreate()
    with open(args.facts, "w") as out, SecretWatch() as watch:
        if args.phase == "bundle":
            fact = fit_facts(spark, args, "sync")
            train = spark.read.parquet(os.path.join(args.data, "train.parquet"))
            fact["too_many"] = error_of(
                lambda: stage(args.binary, iters=1).setPartitions(3).fit(train))
            out.write(json.dumps(fact) + "\n")
        elif args.phase == "lost":
            train = spark.read.parquet(os.path.join(args.data, "train.parquet"))
            model = stage(args.binary, iters=LOST_EPOCHS, seed=7919, retries=1).fit(train)
            rows = sum(s.get("partition_rows", 0) for s in model.summaries)
            out.write(json.dumps({"attempts": model.attempts, "rows": rows}) + "\n")
        else:
            all_facts(spark, args, out)
        watch.stop()
        out.write(json.dumps(watch.facts()) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()

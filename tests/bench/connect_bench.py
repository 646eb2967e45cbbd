"""sparktorch's fits and transform from a Spark Connect client, on the data and with the options
of peers_bench.py (which wrote the Parquet files into --work first), for peers_bench.sh to
print beside the classic session's figures: the same MLP 784-256-256-10, Adam, batch 128, 3
epochs, 2 tasks, a Connect server on the same master. On Connect the rows always go through
Spark (mapInArrow; no readParquet). The fit's seconds are `estimator.fit(df)`'s wall clock,
rows in to the model back on the client; the accuracy is the model's on the test rows in torch
on the client, as peers_bench.py evaluates every fit; the transform is the fitted model over
--transform-copies copies of the training rows, forced by one aggregate, in rows/s.

  python connect_bench.py --remote sc://HOST:PORT --binary SPARKTORCH --work out/peers
"""
import argparse
import functools
import io
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from peers_bench import (REPO, SPEC, Stamped, accuracy, parquet_parts,  # noqa: E402
                         phases_text, read_vectors, say)
from spark_fit_bench import PHASES, stamped_stderr  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "spark-scripts"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--remote", required=True)
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "sparktorch"))
    parser.add_argument("--work", default=os.path.join(REPO, "out", "peers"))
    parser.add_argument("--transform-copies", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--server-log", help="the Connect server's log (its tasks' stderr): "
                        "each fit is then split into phases as peers_bench.py splits the "
                        "classic fits")
    args = parser.parse_args()
    torch.set_num_threads(1)
    from pyspark.sql import DataFrame, SparkSession  # pylint: disable=import-outside-toplevel
    from pyspark.sql import functions as F  # pylint: disable=import-outside-toplevel
    from sparktorch_spark.ml import SparkTorch  # pylint: disable=import-outside-toplevel
    spark = SparkSession.builder.remote(args.remote).getOrCreate()
    train = spark.read.parquet(os.path.join(args.work, "fashion_train.parquet"))
    test = read_vectors(parquet_parts(os.path.join(args.work, "fashion_test.parquet")))
    rows = train.count()
    binary = os.path.abspath(args.binary)
    print("Spark Connect (Spark %s, a server on the same master), %d training rows:"
          % (spark.version, rows))
    print("%-34s %8s %9s" % ("fit", "seconds", "accuracy"))
    model = None
    for mode in ("sync", "hogwild"):
        say("connect fit %s" % mode)
        stage = SparkTorch(torchObj=SPEC, inputCol="features", labelCol="label",
                           iters=args.epochs, miniBatch=args.batch, lr=args.lr, mode=mode,
                           partitions=args.tasks, binary=binary)
        stamped = Stamped(sys.stderr)
        old, sys.stderr = sys.stderr, stamped
        started = time.time()
        try:
            fitted = stage.fit(train)
        finally:
            returned = time.time()
            sys.stderr = old
        net = torch.jit.load(io.BytesIO(fitted.modelBytes()))
        print("%-34s %8.2f %9.4f" % ("sparktorch %s, Connect" % mode, returned - started,
                                     accuracy(net, test)), flush=True)
        if args.server_log:
            lines = stamped.lines + stamped_stderr(args.server_log)
            print("  phases: %s" % phases_text(PHASES, lines, started, returned), flush=True)
        model = model or fitted
    copies = functools.reduce(DataFrame.unionAll, [train] * args.transform_copies)
    out = model.setPredictionCol("prediction").transform(copies)
    say("connect transform")
    started = time.time()
    right, count = out.agg(F.sum((F.col("prediction") == F.col("label")).cast("long")),
                           F.count("*")).first()
    seconds = time.time() - started
    print("%-34s %8d rows/s (%d rows, right share %.4f)"
          % ("sparktorch transform, Connect", count / seconds, count, right / count))
    spark.stop()


if __name__ == "__main__":
    main()

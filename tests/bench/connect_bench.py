"""sparktorch's fits and transform from a Spark Connect client, beside TorchDistributor's fit and
predict_batch_udf's transform from the same client, on the data and with the options of
peers_bench.py (which wrote the Parquet files into --work first), for peers_bench.sh to print
beside the classic session's figures: the same MLP 784-256-256-10, Adam, batch 128, 3 epochs, 2
tasks, a Connect server on the same master. sparktorch's fits take the DataFrame of
`spark.read.parquet`, so the tasks read the files themselves (readParquet) as on the classic
path. The fit's seconds are `estimator.fit(df)`'s (`TorchDistributor(...).run`'s) wall clock,
rows in to the model back on the client, split into phases from the server's log with
--server-log; the accuracy is the model's on the test rows in torch on the client, as
peers_bench.py evaluates every fit; each transform is its model over --transform-copies copies
of the training rows, forced by one aggregate after an untimed warm-up on WARM_ROWS rows, in
rows/s (predict_batch_udf with peers_transforms.py's function and the fitted weights). Every
fit and transform runs --runs (3) times, interleaved, as in peers_bench.py: the first fit of a
fresh server meets cold Python workers, as the classic run's first fit meets a cold JVM.

  python connect_bench.py --remote sc://HOST:PORT --binary SPARKTORCH --work out/peers \
      [--server-log LOG] [--peers TorchDistributor,predict_batch_udf|none] [--runs N]
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

import peers_bench  # noqa: E402
from peers_bench import (REPO, SPEC, Stamped, accuracy, build_mlp, copy_weights,  # noqa: E402
                         install_spark_workarounds, make_predict_fn, parquet_parts,
                         phases_text, read_vectors, say)
from peers_transforms import WARM_ROWS, one_line, transform_frame  # noqa: E402
from peers_report import spread  # noqa: E402
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3, help="runs of every fit and transform, "
                        "interleaved; the report gives their median, min and max")
    parser.add_argument("--peers", default="TorchDistributor,predict_batch_udf",
                        help="the peers to run from the Connect client too (comma list, or "
                        "none)")
    parser.add_argument("--server-log", help="the Connect server's log (its tasks' stderr): "
                        "each fit is then split into phases as peers_bench.py splits the "
                        "classic fits")
    args = parser.parse_args()
    # Absolute: the server and its executors' Python workers resolve a path in their own
    # working folders (TorchDistributor's ranks failed with FileNotFoundError on out/peers/...).
    args.work = os.path.abspath(args.work)
    torch.set_num_threads(1)
    # The peers' functions (train_fn, make_predict_fn, the MLP) travel by value: the executors
    # cannot import tests/bench.
    from pyspark import cloudpickle  # pylint: disable=import-outside-toplevel
    cloudpickle.register_pickle_by_value(peers_bench)
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
    print("%-34s %22s %9s  (%d interleaved runs: median (min-max); phases of the last)"
          % ("fit", "seconds", "accuracy", args.runs))
    fits = {"sparktorch sync, Connect": [], "sparktorch hogwild, Connect": []}
    if "TorchDistributor" in args.peers:
        fits["TorchDistributor, Connect"] = []
    model = None
    for _ in range(args.runs):
        for name in fits:
            if name.startswith("TorchDistributor"):
                fits[name].append(distributor(args, test))
                continue
            mode = name.split()[1].rstrip(",")
            fitted, outcome = fit_ours(args, train, test, mode, SparkTorch)
            fits[name].append(outcome)
            model = model or fitted
    for name, runs in fits.items():
        done = [r for r in runs if r[0] is not None]
        failed = [r[2] for r in runs if r[0] is None]
        print("%-34s %22s %9s" % (name, spread([r[0] for r in done], "%.2f"),
                                  spread([r[1] for r in done], "%.4f") if done else "-"))
        for note in ([done[-1][2]] if done else []) + ["FAILED: " + f for f in failed]:
            print("  %s" % note, flush=True)
    copies = functools.reduce(DataFrame.unionAll, [train] * args.transform_copies)
    transforms = {"sparktorch transform, Connect":
                  model.setPredictionCol("prediction").transform(copies)}
    if "predict_batch_udf" in args.peers:
        transforms["predict_batch_udf, Connect"] = batch_udf(spark, copies, model)
    rates = {name: [] for name in transforms}
    for _ in range(args.runs):
        for name, out in transforms.items():
            say("connect transform %s" % name)
            # One untimed warm-up over the first WARM_ROWS rows, as peers_bench.py warms each.
            out.limit(WARM_ROWS).agg(F.count("prediction")).first()
            started = time.time()
            right, count = out.agg(F.sum((F.col("prediction") == F.col("label")).cast("long")),
                                   F.count("*")).first()
            rates[name].append(count / (time.time() - started))
            say("connect transform %s: %d rows/s, right share %.4f" % (name, rates[name][-1],
                                                                       right / count))
    for name, runs in rates.items():
        print("%-34s %22s rows/s (%d rows)" % (name, spread(runs, "%.0f"), count), flush=True)
    names = list(rates)
    if len(names) == 2:
        ratios = [a / b for a, b in zip(rates[names[0]], rates[names[1]])]
        print("%-34s %22s" % ("sparktorch / predict_batch_udf", spread(ratios, "%.2fx")))
    spark.stop()


def fit_ours(args, train, test, mode, estimator):
    """(fitted model, (seconds, test accuracy, phases)) of one sparktorch fit from this client."""
    say("connect fit %s" % mode)
    stage = estimator(torchObj=SPEC, inputCol="features", labelCol="label", iters=args.epochs,
                      miniBatch=args.batch, lr=args.lr, mode=mode, threads=1,
                      binary=os.path.abspath(args.binary))
    stamped = Stamped(sys.stderr)
    old, sys.stderr = sys.stderr, stamped
    started = time.time()
    try:
        fitted = stage.fit(train)
    finally:
        returned = time.time()
        sys.stderr = old
    net = torch.jit.load(io.BytesIO(fitted.modelBytes()))
    phases = ""
    if args.server_log:
        lines = stamped.lines + stamped_stderr(args.server_log)
        phases = "phases: " + phases_text(PHASES, lines, started, returned)
    return fitted, (returned - started, accuracy(net, test), phases)


def distributor(args, test):
    """(seconds, test accuracy, note) of TorchDistributor's fit from this Connect client, with
    peers_bench.py's train_fn (shipped by value: the executors cannot import tests/bench);
    (None, None, the error) when it fails."""
    say("connect fit TorchDistributor")
    try:
        seconds, net, note, _ = peers_bench.fit_distributor(
            args, {"train": os.path.join(args.work, "fashion_train.parquet")})
    except Exception as e:  # pylint: disable=broad-except  # reported, the others go on
        return None, None, one_line(e)
    return seconds, accuracy(net, test), note


def batch_udf(spark, df, model):
    """`df` with predict_batch_udf's `prediction` of the fitted model's weights, as
    peers_transforms.py adds it on the classic session (with its Spark 4.3.0 workaround)."""
    install_spark_workarounds(spark)
    net = build_mlp()
    copy_weights(torch.jit.load(io.BytesIO(model.modelBytes())), net)
    return transform_frame("predict_batch_udf", df, net, None, None, make_predict_fn)


if __name__ == "__main__":
    main()

"""A Spark fit end to end, in phases, as a user waits for it (man/sparktorch-spark.7, PERFORMANCE: "A fit in phases").

    spark-submit --master 'local[2]' tests/bench/spark_fit_bench.py \
        --train out/spark/fashion_train.parquet --test out/spark/fashion_test.parquet \
        --binary build/sparktorch [--epochs 3] [--partitions 2] [--mode sync]

Trains examples/fashion_mnist_mlp.json with sparktorch_spark.spark.train on the training set
(a Spark ML `features` vector column, as examples/spark_fashion_mnist.py prepares it), then
predicts the test set with sparktorch_spark.spark.predict, and prints:

- the phases of the fit, from the timestamps of the lines the driver, serve and the ranks log
  (tasks of a local master log to this process's stderr): start-up and checks (the fit's call
  to the driver's "job N (attempt 1 of M)" line, written as the training stage starts: serve
  started, and listening too in hogwild), ranks starting (to every rank at the tracker), rows into the binary (to
  the last rank's `read N rows`), training (to the last epoch's line), model back (to the fit's
  return, the model verified on the driver);
- the fit's total, the test accuracy and the prediction's rows/s.

It reports numbers and fails on nothing but errors. tests/bench/spark_bench.sh runs it.
"""
import argparse
import io
import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))

from pyspark.sql import SparkSession, functions  # noqa: E402

from sparktorch_spark import spark as layer  # noqa: E402
from sparktorch_spark.options import TrainOptions  # noqa: E402

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ")
# The lines that end each phase, as serve and the ranks log them.
PHASES = (("start-up and checks", re.compile(r"^sparktorch: job \d+ \(attempt 1 ")),
          ("ranks starting", re.compile(r"all \d+ ranks arrived|joined the parameter server")),
          ("rows into the binary", re.compile(r"read \d+ rows of \d+ features")),
          ("training", re.compile(r"epoch (\d+)/\1:")))


class Stamped(io.TextIOBase):
    """A log that keeps every line with the time it arrived, and passes it on."""

    def __init__(self, out):
        super().__init__()
        self.out = out
        self.lines = []
        self.lock = threading.Lock()

    def write(self, text):
        now = time.time()
        with self.lock:
            for line in text.splitlines():
                self.lines.append((now, line))
        self.out.write(text)
        return len(text)

    def flush(self):
        self.out.flush()


def stamped_stderr(path):
    """(time, line) of every line with a timestamp in the file `path` (this process's stderr:
    serve's lines come through the driver's log, the ranks' from Spark's PipedRDD)."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            found = STAMP.match(line)
            if found:
                out.append((time.mktime(time.strptime(found.group(1)[:19], "%Y-%m-%d %H:%M:%S"))
                            + float(found.group(1)[19:]), line.rstrip("\n")))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--mode", default="sync")
    parser.add_argument("--fits", type=int, default=1, help="fits in this one session (the "
                        "first pays for the JVM's warm-up)")
    parser.add_argument("--read-parquet", choices=("true", "false"), default="true",
                        help="readParquet: the tasks read the Parquet files themselves (true), "
                        "or the rows come through Spark (false)")
    parser.add_argument("--stderr", help="the file this process's stderr goes to (for the "
                        "ranks' lines; spark_bench.sh sets it)")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("sparktorch fit bench").getOrCreate()
    master = spark.sparkContext.master
    train = spark.read.parquet(args.train)
    test = spark.read.parquet(args.test)
    options = TrainOptions(torchObj=os.path.join(REPO, "examples", "fashion_mnist_mlp.json"),
                           labelCol="label", iters=args.epochs, partitions=args.partitions,
                           mode=args.mode, binary=os.path.abspath(args.binary),
                           driverBinary=os.path.abspath(args.binary),
                           readParquet=args.read_parquet == "true")
    for fit in range(1, args.fits + 1):
        log = Stamped(sys.stderr)
        started = time.time()
        result = layer.train(train, options, log=log)
        returned = time.time()
        lines = log.lines + (stamped_stderr(args.stderr) if args.stderr else [])
        print_phases(lines, started, returned)
        print("  fit %d of %d on %s: %d rows, %d %s tasks, %d epochs, %d attempt(s), readParquet=%s"
              % (fit, args.fits, master, getattr(result, "rows", -1),  # -1: before 9da8025
                 args.partitions, args.mode, args.epochs, result.attempts, args.read_parquet))
        summaries = getattr(result, "summaries", None) or []
        if summaries:
            print("  the slowest rank: %s" % ", ".join(
                "%s %.2f s" % (what, max(s.get(key, 0) for s in summaries))
                for what, key in (("reading its rows", "read_seconds"),
                                  ("training", "train_seconds"), ("in all", "total_seconds"))))

    predicted = layer.predict(test, result.model, binary=os.path.abspath(args.binary))
    t0 = time.time()
    row = predicted.select(functions.sum((predicted["label"] == predicted["predictions"])
                                         .cast("int")), functions.count("*")).first()
    predict_seconds = time.time() - t0
    print("test accuracy %.4f (%d of %d rows); predicted in %.2f s (%.0f rows/s)"
          % (row[0] / row[1], row[0], row[1], predict_seconds, row[1] / predict_seconds))
    spark.stop()


def print_phases(lines, started, returned):
    """Prints how long each phase of the fit that ran from `started` to `returned` took."""
    print()
    last = started
    for name, pattern in PHASES:
        times = [t for t, line in lines if pattern.search(line) and started <= t <= returned]
        end = max(times + [last])
        print("  %-22s %6.2f s" % (name, end - last))
        last = end
    print("  %-22s %6.2f s" % ("model back", returned - last))
    print("  %-22s %6.2f s" % ("the whole fit", returned - started))


if __name__ == "__main__":
    main()

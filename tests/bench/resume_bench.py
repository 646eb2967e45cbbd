"""What a lost task costs a Spark fit: interrupted against uninterrupted fit time.

    spark-submit --master 'local-cluster[2,1,1024]' tests/bench/resume_bench.py \
        --binary build/sparktorch [--work out/resume] [--epochs 16] [--kills 0.3,0.7,0.95] \
        [--repeats 3] [--quick]

tests/bench/resume_bench.sh picks the Spark line and the Python and runs this.

The fit: sparktorch's ML stage (sparktorch_spark.ml.SparkTorch), the MLP of
examples/fashion_mnist_mlp.json, Fashion-MNIST's 60,000 training rows as Parquet (the tasks read
them, readParquet), 2 tasks, sync, --epochs epochs, batch 128, Adam lr 1e-3, retries 1.
Variants, interleaved round by round:
  whole          no kill
  whole,none     no kill, checkpointEvery=0: what the checkpoints cost (rank 0 serialises the
                 model and Adam's state, 3.2 MB, and sends it to the driver after every epoch)
  kill@F         a thread of this driver kills one rank (SIGKILL, the newest `sparktorch train`
                 process) once rank 0's checkpoint (checkpointDir) holds epoch ceil(F x epochs)
                 (at most the one before the last, which has no checkpoint) or later, i.e. at
                 fraction F of the training; the job resumes from that
                 checkpoint (checkpointEvery 1, the default)
  kill@F,none    the same kill with checkpointEvery=0: the job runs again from epoch 1, as every
                 peer's barrier job (and sparktorch before checkpoints) does
Measured: the fit's wall clock (rows in to the model back on the driver), its attempts and the
epoch the second started from, the test accuracy (10,000 rows) through the fitted model in torch
on the driver. The table gives medians with min and max, and each variant's median over the
whole fit's. The kill point counts epochs, not seconds: epochs take the same time here, and the
epoch a checkpoint holds is what the driver can see.
"""
import argparse
import io
import json
import math
import os
import signal
import statistics
import sys
import threading
import time
import traceback
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))
sys.path.insert(0, os.path.join(REPO, "examples"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from peers_bench import SPEC, accuracy, parquet_parts, read_vectors, write_data  # noqa: E402
from peers_transforms import one_line  # noqa: E402
from rows_scale_bench import _argv, _pids, is_ours  # noqa: E402  pylint: disable=protected-access


def say(text):
    print("resume_bench: %s" % text, flush=True)


def checkpoint_epoch(path):
    """The epochs run of the checkpoint at `path`, or 0."""
    try:
        with zipfile.ZipFile(path) as z:
            name = next(n for n in z.namelist() if n.endswith("/extra/sparktorch.json"))
            return json.loads(z.read(name))["training"]["epochs_run"]
    except (OSError, KeyError, StopIteration, ValueError, zipfile.BadZipFile):
        return 0


def train_pids():
    """Our ranks running now (rows_scale_bench's /proc reading), oldest first."""
    return sorted(pid for pid in _pids() if is_ours(pid, _argv(pid) or []))


class Killer:
    """Kills the newest rank once `path` holds a checkpoint of epoch `epoch` or later (with
    checkpoints), or once `after` seconds of training have passed (without: the epoch of the
    whole fit's median at the same fraction, measured first)."""

    def __init__(self, path, epoch, after=None):
        self.path, self.epoch, self.after = path, epoch, after
        self.killed_at = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._started = time.monotonic()
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(10)

    def _watch(self):
        first_seen = None
        while not self._stop.wait(0.02):
            pids = train_pids()
            if pids and first_seen is None:
                first_seen = time.monotonic()
            if not pids:
                continue
            if self.after is not None:
                due = first_seen is not None and time.monotonic() - first_seen >= self.after
            else:
                due = checkpoint_epoch(self.path) >= self.epoch
            if due:
                os.kill(pids[-1], signal.SIGKILL)
                self.killed_at = time.monotonic() - self._started
                return


def fit(spark, args, train, variant, test, whole_train_seconds):
    """One fit; returns a dict of what it measured."""
    from sparktorch_spark.ml import SparkTorch  # pylint: disable=import-outside-toplevel
    binary = os.path.abspath(args.binary)
    folder = os.path.join(args.work, "checkpoints-%d" % os.getpid())
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "checkpoint.pt")
    if os.path.exists(path):
        os.remove(path)
    kill, none = variant
    stage = SparkTorch(torchObj=SPEC, inputCol="features", labelCol="label", iters=args.epochs,
                       miniBatch=args.batch, lr=args.lr, mode="sync", partitions=2,
                       binary=binary, driverBinary=binary, seed=args.seed, retries=1,
                       checkpointEvery=0 if none else 1, checkpointDir=None if none else folder)
    killer = None
    if kill is not None:
        # A checkpoint comes after every epoch but the last.
        epoch = min(args.epochs - 1, max(1, math.ceil(kill * args.epochs)))
        # Without checkpoints there is no file to watch: the kill comes at the same share of
        # the whole fit's training time instead.
        killer = Killer(path, epoch, after=kill * whole_train_seconds if none else None)
    result = {"variant": variant}
    try:
        df = spark.read.parquet(train)
        started = time.time()
        model = stage.fit(df)
        result["seconds"] = time.time() - started
        result["attempts"] = model.attempts
        result["starts"] = model.attemptStarts
        result["train_seconds"] = max(s.get("train_seconds", 0) for s in model.summaries)
        result["accuracy"] = accuracy(torch.jit.load(io.BytesIO(model.modelBytes())), test)
        say("%s: %.2f s, %d attempt(s) from epochs %s, test accuracy %.4f"
            % (name(variant), result["seconds"], model.attempts, model.attemptStarts,
               result["accuracy"]))
    except Exception as e:  # pylint: disable=broad-except
        result["error"] = one_line(e)
        say("%s failed:\n%s" % (name(variant), traceback.format_exc()))
    finally:
        if killer is not None:
            killer.stop()
            if kill is not None and killer.killed_at is None:
                result.setdefault("error", "the kill did not come before the fit ended")
    return result


def name(variant):
    kill, none = variant
    return ("whole" if kill is None else "kill@%g" % kill) + (",none" if none else "")


def print_table(args, results, variants):
    print()
    print("resume_bench: Spark %s, master %s, %d cores, 2 tasks, sync, %d epochs, batch %d, "
          "%d round(s) interleaved" % (args.spark_version, args.master, os.cpu_count(),
                                        args.epochs, args.batch, args.repeats))
    print("%-14s %4s %8s %13s %9s %-14s %8s" % ("variant", "runs", "median s", "min-max s",
                                                "x whole", "2nd from", "accuracy"))
    whole = None
    for variant in variants:
        done = [r for r in results if r["variant"] == variant and "error" not in r]
        errors = [r["error"] for r in results if r["variant"] == variant and "error" in r]
        if not done:
            print("%-14s failed: %s" % (name(variant), errors[0] if errors else "no runs"))
            continue
        seconds = [r["seconds"] for r in done]
        median = statistics.median(seconds)
        if variant == (None, False):
            whole = median
        starts = sorted({str(r["starts"][-1]) for r in done if r["attempts"] > 1})
        print("%-14s %4d %8.2f %6.2f-%-6.2f %9s %-14s %8.4f%s" % (
            name(variant), len(done), median, min(seconds), max(seconds),
            "%.2fx" % (median / whole) if whole else "-", ",".join(starts) or "-",
            statistics.median(r["accuracy"] for r in done),
            "  (%d failed: %s)" % (len(errors), errors[0]) if errors else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "sparktorch"))
    parser.add_argument("--work", default=os.path.join(REPO, "out", "resume"))
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--kills", default="0.3,0.7,0.95")
    parser.add_argument("--without", default="0.7",
                        help="kill points also measured without checkpoints")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="6,000 training rows")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = os.path.join(args.work, "quick") if args.quick else args.work
    os.makedirs(work, exist_ok=True)
    args.work = work
    limits = {"train": 6000, "test": 1000} if args.quick else {"train": None, "test": None}
    spark = SparkSession.builder.appName("sparktorch resume bench").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    args.spark_version, args.master = spark.version, spark.sparkContext.master
    paths = write_data(spark, work, limits)
    spark.read.parquet(paths["train"]).count()  # warms the JVM up
    test = read_vectors(parquet_parts(paths["test"]))
    kills = [float(k) for k in args.kills.split(",") if k]
    without = [float(k) for k in args.without.split(",") if k]
    variants = ([(None, False), (None, True)] + [(k, False) for k in kills] +
                [(k, True) for k in without])
    results = []
    whole_train = None
    for round_ in range(1, args.repeats + 1):
        say("round %d of %d" % (round_, args.repeats))
        for variant in variants:
            result = fit(spark, args, paths["train"], variant, test, whole_train or 0)
            if variant == (None, False) and "train_seconds" in result and whole_train is None:
                whole_train = result["train_seconds"]
            results.append(result)
    spark.stop()
    print_table(args, results, variants)


if __name__ == "__main__":
    main()

"""How a Spark fit's time and a training rank's peak anonymous memory grow with the rows.

    spark-submit --master 'local[2]' --driver-memory 3g tests/bench/rows_scale_bench.py \
        --binary build/sparktorch [--work out/rows_scale] [--sizes 60k,600k] \
        [--fits ours-files,ours-spark,TorchDistributor] [--repeats 3] [--quick]

tests/bench/rows_scale_bench.sh picks the Spark line and the Python and runs this.

Data, written once into --work: Fashion-MNIST train and test as Parquet (a `label` double and a
Spark ML `features` vector, 2 files each; peers_bench.write_data), then for the 10x and 100x
sizes a directory of hard links to the 2 training part files (part-00000-copy3.parquet, ...):
no extra disk, and spark.read.parquet of it is the bigger DataFrame. 600k and 6m are
therefore 10 and 100 copies of the same 60,000 rows. --quick: 6,000 training and 1,000 test
rows in --work/quick, the sizes then meaning 6k, 60k and 600k rows.

Sizes (--sizes): 60k (10 epochs), 600k (1 epoch), 6m (1 epoch): the rows visited are the same,
600,000, except for 6m (6,000,000). Fits (--fits), each the MLP of
examples/fashion_mnist_mlp.json (784-256-256-10), Adam lr 1e-3, batch 128 per task, 2 tasks,
sync, one thread per process:
  ours-files         sparktorch's ML stage (sparktorch_spark.ml.SparkTorch), readParquet=True:
                     the tasks' binaries read their share of the Parquet files themselves
  ours-spark         the same with readParquet=False: the rows through Spark's pipe
  TorchDistributor   TorchDistributor(num_processes=2, local_mode=False).run of
                     peers_bench.distributor_train (DDP over gloo, each process reading its
                     share of the files with pyarrow into memory), after
                     torch.set_num_threads(1); not run at 6m (its processes hold every row as
                     float64 and then float32: about 28 GB a process, more than the machine)

Measured for each fit:
  seconds      the wall clock of the fit call: rows in to the model back on the driver
  accuracy     the test set (10,000 rows, read with pyarrow) through the fitted model in torch
               on the driver, the same for every fit (peers_bench.accuracy)
  peak RssAnon a thread of this driver reads /proc every 50 ms (--sample-ms): the training
               processes that started during the fit (ours: the process whose executable is
               `sparktorch` with `train` in its arguments, one per rank; TorchDistributor's:
               the torchrun workers, `python -u .../train.py`, not torchrun's agent nor its
               wrapper), and the RssAnon of each in /proc/PID/status; reported is the largest
               of the processes' peaks (the peak of one rank), in MiB, and how many processes
               were seen. Sampling can miss a peak shorter than 50 ms.
  spilled      the largest `spilled_bytes` of our ranks' summary records (rows beyond
               --row-memory, 128M by default, go to an unlinked spill file, mapped back as
               page cache, which RssAnon does not count; the row buffer grows by doubling, and
               when its next doubling would pass the budget every row read so far goes to the
               file: 30,000 rows a rank (94 MB) spill whole under the default 128M)
The rounds are interleaved: round 1 of every (size, fit), then round 2, and so on; the table
gives the median with min and max of the seconds, the median peak, seconds per 1000 rows visited,
and for each fit the ratio of the 600k (1 epoch) median to the 60k (10 epochs) one.

Asymmetries: TorchDistributor's process memory includes its own Python interpreter, torch and
pyarrow (a few hundred MiB before any row), ours is a C++ binary with LibTorch; its rows are
float32 tensors in the process, ours are float32 up to --row-memory and then the spill file.
TorchDistributor shuffles each epoch (DataLoader(shuffle=True)), so 10 epochs of 60k and 1
epoch of 600k visit rows in different orders; the 600k copies make it see every row 10 times
within its one epoch. The driver's torch runs on one thread.

It reports numbers and fails on nothing but errors; a fit that fails is reported with its error.
"""
import argparse
import io
import os
import statistics
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))
sys.path.insert(0, os.path.join(REPO, "examples"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import peers_bench  # noqa: E402  (tests/bench/peers_bench.py)
from peers_bench import (SPEC, accuracy, build_mlp, distributor_train, parquet_parts,  # noqa: E402
                         read_vectors, write_data)
from peers_transforms import one_line  # noqa: E402

# TorchDistributor's processes unpickle the train function; peers_bench's functions pickled
# by value, that module (which imports its neighbours) need not be importable in them. The
# train function must name them, not the module (a module is pickled by reference).
cloudpickle.register_pickle_by_value(peers_bench)

SIZES = {"60k": (1, 10), "600k": (10, 1), "6m": (100, 1)}  # copies of the training set, epochs
FITS = ("ours-files", "ours-spark", "TorchDistributor")


def say(text):
    print("rows_scale_bench: %s" % text, flush=True)


# --- data -----------------------------------------------------------------------------------

def linked_copies(train, copies):
    """A directory beside `train` of `copies` hard links to each of its part files; returns
    its path (`train` itself for 1 copy)."""
    if copies == 1:
        return train
    out = "%s_x%d" % (train, copies)
    parts = parquet_parts(train)
    os.makedirs(out, exist_ok=True)
    for copy in range(copies):
        for i, part in enumerate(parts):
            link = os.path.join(out, "part-%05d-copy%d.parquet" % (i, copy))
            if not os.path.exists(link):
                os.link(part, link)
    return out


# --- memory ---------------------------------------------------------------------------------

def is_ours(pid, argv):
    """A rank of our training job: the `sparktorch` binary itself (not the /bin/sh launcher
    that execs it) running `train`."""
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return False
    return os.path.basename(exe) == "sparktorch" and "train" in argv


def is_distributor(_pid, argv):
    """A TorchDistributor training process: torchrun's worker `python -u DIR/train.py ...`
    (its agent and Spark's wrapper of it run `python -m ...` with the same file)."""
    return "-m" not in argv and any(a.endswith("/train.py") for a in argv[1:])


class PeakSampler:
    """A thread that, every `interval` seconds while started, finds the processes that
    started since and that `match(pid, argv)`, and keeps each one's peak RssAnon (kB)."""

    def __init__(self, interval):
        self.interval = interval
        self.lock = threading.Lock()
        self.active = threading.Event()
        self.match = None
        self.old = set()
        self.peaks = {}
        threading.Thread(target=self._run, daemon=True).start()

    def start(self, match):
        with self.lock:
            self.match = match
            self.old = set(_pids())
            self.peaks = {}
        self.active.set()

    def stop(self):
        """The peaks since start: {pid: kB}."""
        self.active.clear()
        with self.lock:
            return dict(self.peaks)

    def _run(self):
        while True:
            self.active.wait()
            with self.lock:
                if self.active.is_set():
                    self._sample()
            time.sleep(self.interval)

    def _sample(self):
        for pid in _pids():
            if pid in self.old:
                continue
            if pid not in self.peaks:
                argv = _argv(pid)
                if argv is None or not self.match(pid, argv):
                    continue  # looked at again next time: it may exec the binary yet
            anon = _rss_anon(pid)
            if anon is not None:
                self.peaks[pid] = max(anon, self.peaks.get(pid, 0))


def _pids():
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _argv(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return None


def _rss_anon(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


# --- fits -----------------------------------------------------------------------------------

def distributor_train_one_thread(files, epochs, batch, lr, seed):
    """peers_bench.distributor_train on one torch thread, as each of our ranks computes."""
    torch.set_num_threads(1)
    return distributor_train(files, epochs, batch, lr, seed)


def fit_ours(spark, args, train, epochs, read_parquet):
    """Our ML stage's fit; returns (seconds, net, largest spilled_bytes, rows trained)."""
    from sparktorch_spark.ml import SparkTorch  # pylint: disable=import-outside-toplevel
    binary = os.path.abspath(args.binary)
    stage = SparkTorch(torchObj=SPEC, inputCol="features", labelCol="label", iters=epochs,
                       miniBatch=args.batch, lr=args.lr, mode="sync", partitions=args.tasks,
                       binary=binary, driverBinary=binary, readParquet=read_parquet)
    df = spark.read.parquet(train)
    started = time.time()
    model = stage.fit(df)
    seconds = time.time() - started
    summaries = getattr(model, "summaries", None) or []
    spilled = max((s.get("spilled_bytes", 0) for s in summaries), default=None)
    rows = sum(s.get("partition_rows", 0) for s in summaries)
    return seconds, torch.jit.load(io.BytesIO(model.modelBytes())), spilled, rows


def fit_distributor(args, train, epochs):
    """TorchDistributor's fit; returns (seconds, net, None, None)."""
    # pylint: disable-next=import-outside-toplevel
    from pyspark.ml.torch.distributor import TorchDistributor
    files = parquet_parts(train)
    started = time.time()
    out = TorchDistributor(num_processes=args.tasks, local_mode=False, use_gpu=False).run(
        distributor_train_one_thread, files, epochs, args.batch, args.lr, args.seed)
    seconds = time.time() - started
    net = build_mlp()
    net.load_state_dict(out["state"])
    return seconds, net, None, None


def run_fit(spark, args, sampler, size, fit, test):
    """One fit of `fit` on `size`, with its peak memory; returns a dict of what it measured."""
    copies, epochs = SIZES[size]
    train = args.trains[size]
    result = {"size": size, "fit": fit, "epochs": epochs}
    say("%s, %s (%d epochs)" % (size, fit, epochs))
    sampler.start(is_ours if fit.startswith("ours") else is_distributor)
    try:
        if fit == "TorchDistributor":
            outcome = fit_distributor(args, train, epochs)
        else:
            outcome = fit_ours(spark, args, train, epochs, fit == "ours-files")
        peaks = sampler.stop()
        result["seconds"], net, result["spilled"], result["rows"] = outcome
        result["accuracy"] = accuracy(net, test)
        result["peak_mib"] = max(peaks.values(), default=0) / 1024
        result["processes"] = len(peaks)
        say("%s, %s: %.2f s, test accuracy %.4f, peak RssAnon %.0f MiB (%d processes)%s"
            % (size, fit, result["seconds"], result["accuracy"], result["peak_mib"],
               len(peaks), "" if result["spilled"] is None
               else ", spilled %d bytes" % result["spilled"]))
    except Exception as e:  # pylint: disable=broad-except
        sampler.stop()
        result["error"] = one_line(e)
        say("%s, %s failed:\n%s" % (size, fit, traceback.format_exc()))
    return result


# --- report ---------------------------------------------------------------------------------

def print_table(args, results, base_rows):
    print()
    print("rows_scale_bench: Spark %s, master %s, %d cores, %d tasks, sync, batch %d, "
          "%d round(s) interleaved" % (args.spark_version, args.master, os.cpu_count(),
                                        args.tasks, args.batch, args.repeats))
    header = ("size", "rows", "epochs", "fit", "runs", "median s", "min-max s", "s/1000 rows",
              "peak RssAnon MiB", "procs", "accuracy", "spilled MiB")
    print("%-5s %9s %6s %-16s %4s %8s %13s %11s %16s %5s %8s %11s" % header)
    medians = {}
    for size in args.sizes:
        copies, epochs = SIZES[size]
        rows = base_rows * copies
        for fit in args.fits:
            mine = [r for r in results if r["size"] == size and r["fit"] == fit]
            done = [r for r in mine if "error" not in r]
            errors = [r["error"] for r in mine if "error" in r]
            if not mine:
                continue
            if not done:
                print("%-5s %9d %6d %-16s failed: %s" % (size, rows, epochs, fit, errors[0]))
                continue
            seconds = [r["seconds"] for r in done]
            peak = statistics.median(r["peak_mib"] for r in done)
            spilled = [r["spilled"] for r in done if r["spilled"] is not None]
            medians[size, fit] = (statistics.median(seconds), peak)
            print("%-5s %9d %6d %-16s %4d %8.2f %6.2f-%-6.2f %11.4f %16.0f %5s %8.4f %11s%s" % (
                size, rows, epochs, fit, len(done), statistics.median(seconds), min(seconds),
                max(seconds), statistics.median(seconds) / (rows * epochs / 1000), peak,
                "/".join(sorted({str(r["processes"]) for r in done})),
                statistics.median(r["accuracy"] for r in done),
                "%.1f" % (max(spilled) / 2**20) if spilled else "-",
                "  (%d failed: %s)" % (len(errors), errors[0]) if errors else ""))
    if "60k" in args.sizes and "600k" in args.sizes:
        print()
        print("600k rows x 1 epoch against 60k rows x 10 epochs (ratio of the medians):")
        for fit in args.fits:
            if (("60k", fit) in medians) and (("600k", fit) in medians):
                small, large = medians["60k", fit], medians["600k", fit]
                print("  %-16s time %.2fx (%.2f s -> %.2f s), peak RssAnon %.2fx "
                      "(%.0f MiB -> %.0f MiB)" % (fit, large[0] / small[0], small[0], large[0],
                                                   large[1] / small[1] if small[1] else 0,
                                                   small[1], large[1]))


# --- driver ---------------------------------------------------------------------------------

def names(spec, known, what):
    chosen = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in known]
    if unknown:
        sys.exit("rows_scale_bench: no %s named %s (there are %s)"
                 % (what, ", ".join(unknown), ", ".join(known)))
    return chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "sparktorch"))
    parser.add_argument("--work", default=os.path.join(REPO, "out", "rows_scale"))
    parser.add_argument("--sizes", default="60k,600k", help="comma list of %s" % ", ".join(SIZES))
    parser.add_argument("--fits", default=",".join(FITS), help="comma list of %s"
                        % ", ".join(FITS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="6,000 training and 1,000 test rows (the sizes 10x smaller)")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-ms", type=float, default=50)
    args = parser.parse_args()
    args.sizes = names(args.sizes, SIZES, "size")
    args.fits = names(args.fits, FITS, "fit")
    torch.set_num_threads(1)

    work = os.path.join(args.work, "quick") if args.quick else args.work
    os.makedirs(work, exist_ok=True)
    limits = {"train": 6000, "test": 1000} if args.quick else {"train": None, "test": None}
    spark = SparkSession.builder.appName("sparktorch rows scale bench").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    args.spark_version, args.master = spark.version, spark.sparkContext.master
    paths = write_data(spark, work, limits)
    base_rows = spark.read.parquet(paths["train"]).count()  # also warms the JVM up
    args.trains = {size: linked_copies(paths["train"], SIZES[size][0]) for size in args.sizes}
    test = read_vectors(parquet_parts(paths["test"]))
    for size in args.sizes:
        copies, epochs = SIZES[size]
        say("%s: %d rows (%d files in %s), %d epoch(s): %d rows visited"
            % (size, base_rows * copies, len(parquet_parts(args.trains[size])),
               args.trains[size], epochs, base_rows * copies * epochs))
    if "6m" in args.sizes and "TorchDistributor" in args.fits:
        say("6m, TorchDistributor: not run: each process would hold its half of the rows in "
            "memory, float64 then float32 (about 28 GB), more than this machine's %.0f GiB"
            % (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30))

    sampler = PeakSampler(args.sample_ms / 1000)
    results = []
    for round_ in range(1, args.repeats + 1):
        say("round %d of %d" % (round_, args.repeats))
        for size in args.sizes:
            for fit in args.fits:
                if size == "6m" and fit == "TorchDistributor":
                    continue
                results.append(run_fit(spark, args, sampler, size, fit, test))
    spark.stop()
    print_table(args, results, base_rows)


if __name__ == "__main__":
    main()

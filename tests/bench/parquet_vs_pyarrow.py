"""sparktorch's Parquet reader beside pyarrow's read_table on the same files, interleaved.

    python tests/bench/parquet_vs_pyarrow.py [--parquet-bench build/tests/bench/parquet_bench]
        [--runs 5] [FILE ...]

FILEs: Parquet files with a `label` double and a Spark ML `features` vector (default: the part
files of out/peers/fashion_train.parquet, which tests/bench/peers_bench.sh writes: the 60,000
Fashion-MNIST training rows as dense vectors, 2 files). Each run times, one after the other:

  sparktorch          parquet_bench (ParquetRowReader over every file, as a training task
                      reads them: each row's features as float32), one iteration, one thread;
                      its own real time, the process start not included
  pyarrow, 1 thread   pq.read_table(FILES, columns=[label, features], use_threads=False) and
                      the vectors (dense or sparse) to one dense float32 array [rows, width]
                      (what a TorchDistributor user's train_fn makes of them), in this process
  pyarrow, threads    the same with use_threads=True (pyarrow's pool: every core)

and prints every run, then each entry's median (min-max) and the ratio of pyarrow's seconds to
sparktorch's, run by run. The files are read once before the runs, so every entry reads from
the page cache.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def ours(bench, files):
    """Seconds of one pass of sparktorch's reader over `files` (parquet_bench's real time)."""
    out = subprocess.run([bench] + files + ["--benchmark_min_time=0.01",
                                            "--benchmark_format=json"],
                         capture_output=True, text=True, check=True).stdout
    run = json.loads(out)["benchmarks"][0]
    if run["iterations"] != 1:
        sys.exit("parquet_bench ran %d iterations, not 1" % run["iterations"])
    return run["real_time"] / {"ms": 1e3, "us": 1e6, "ns": 1e9, "s": 1}[run["time_unit"]]


def pyarrow(files, threads):
    """(seconds, rows) of read_table and the features to one dense float32 array."""
    started = time.perf_counter()
    table = pq.read_table(files, columns=["label", "features"], use_threads=threads)
    x = dense_rows(table.column("features").combine_chunks())
    labels = table.column("label").to_numpy()
    seconds = time.perf_counter() - started
    assert len(x) == len(labels)
    return seconds, len(x)


def dense_rows(vectors):
    """Spark ML vectors (type 0 sparse / 1 dense, size, indices, values) as one float32 array
    [rows, width], without a Python loop over the rows."""
    kinds = vectors.field("type").to_numpy(zero_copy_only=False)
    values = vectors.field("values")
    value_offsets = values.offsets.to_numpy()
    flat = values.values.to_numpy()
    lengths = np.diff(value_offsets)
    sizes = vectors.field("size").to_numpy(zero_copy_only=False)
    dense = kinds == 1
    width = int(max(lengths[dense].max(initial=0), np.nan_to_num(sizes[~dense]).max(initial=0)))
    x = np.zeros((len(kinds), width), np.float32)
    rows = np.nonzero(dense)[0]
    if len(rows):
        x[rows] = flat[value_offsets[rows][:, None] + np.arange(width)]
    if (~dense).any():
        indices = vectors.field("indices")
        owner = np.repeat(np.arange(len(kinds)), np.diff(indices.offsets.to_numpy()))
        sparse = ~dense[owner]
        at = np.repeat(~dense, lengths)  # the values of sparse rows, in the same order
        x[owner[sparse], indices.values.to_numpy()[sparse]] = flat[at]
    return x


def spread(values):
    return "%.3f s (%.3f-%.3f)" % (statistics.median(values), min(values), max(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parquet-bench",
                        default=os.path.join(REPO, "build", "tests", "bench", "parquet_bench"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(
        REPO, "out", "peers", "fashion_train.parquet", "part-*.parquet")))
    if not files:
        sys.exit("no files: give some, or run tests/bench/peers_bench.sh first")
    for path in files:  # into the page cache
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    rows = pyarrow(files, False)[1]
    print("%d files, %d rows, %.1f MB; pyarrow %s, %d cores; load average %.2f"
          % (len(files), rows, sum(os.path.getsize(p) for p in files) / 1e6, pa.__version__,
             os.cpu_count(), os.getloadavg()[0]))
    times = {"sparktorch": [], "pyarrow, 1 thread": [], "pyarrow, threads": []}
    for run in range(args.runs):
        times["sparktorch"].append(ours(args.parquet_bench, files))
        times["pyarrow, 1 thread"].append(pyarrow(files, False)[0])
        times["pyarrow, threads"].append(pyarrow(files, True)[0])
        print("run %d: %s" % (run + 1, ", ".join("%s %.3f s" % (k, v[-1])
                                                for k, v in times.items())), flush=True)
    print()
    for name, seconds in times.items():
        print("%-18s %s" % (name, spread(seconds)))
    for name in ("pyarrow, 1 thread", "pyarrow, threads"):
        ratios = [a / b for a, b in zip(times[name], times["sparktorch"])]
        print("%s / sparktorch: %.2fx (%.2f-%.2f), run by run"
              % (name, statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()

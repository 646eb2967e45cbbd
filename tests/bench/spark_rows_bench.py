"""What a Spark task spends on its rows: sparktorch_spark's RowEncoder (numpy, and the struct
fallback when numpy is missing) on Fashion-MNIST rows, and the whole predict path of a task,
PredictTask (encode, pipe through `sparktorch predict`, pair the answers with the rows).

  python3 tests/bench/spark_rows_bench.py [MODEL.pt]     # after examples/quickstart.sh

Uses out/fashion_test.csv (10,000 rows) and out/fashion_mnist_mlp.pt from the quickstart.
Reports rows/s; it never fails on time. Run it with /usr/bin/python3 to include numpy.
"""
import io
import os
import sys
import time

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))

from sparktorch_spark import rows as rows_module  # noqa: E402
from sparktorch_spark.rows import RowEncoder  # noqa: E402
from sparktorch_spark.tasks import PredictTask  # noqa: E402


def best_of(runs, work):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    model_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "out",
                                                                    "fashion_mnist_mlp.pt")
    with open(os.path.join(REPO, "out", "fashion_test.csv")) as f:
        table = [tuple(float(v) for v in line.split(",")) for line in f]
    names = ["p%d" % i for i in range(784)]
    numpy = rows_module.numpy
    for label, use_numpy in (("numpy", True), ("struct", False)):
        if use_numpy and numpy is None:
            print("encode (numpy): numpy not installed here")
            continue
        rows_module.numpy = numpy if use_numpy else None
        encoder = RowEncoder(1, names)
        seconds = best_of(3, lambda: [encoder.encode(r) for r in table])
        print("encode (%s): %d rows in %.3f s: %.0f rows/s"
              % (label, len(table), seconds, len(table) / seconds))
    rows_module.numpy = numpy
    with open(model_path, "rb") as f:
        model = f.read()
    task = PredictTask(os.path.join(REPO, "build", "sparktorch"), ["-q"], model, range(1, 785),
                       names)
    seconds = best_of(3, lambda: list(task(iter(table), log=io.StringIO())))
    print("PredictTask (encode, sparktorch predict, pair): %d rows in %.3f s: %.0f rows/s"
          % (len(table), seconds, len(table) / seconds))


if __name__ == "__main__":
    main()

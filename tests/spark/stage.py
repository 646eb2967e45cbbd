"""What the Spark layer does with a task, without Spark, for the tests in tests/spark/.

`Stage(partitions)` is a `run_stage` for sparktorch_spark.job.run_training: it runs the task
on every partition at once, each in a thread as the tasks of a barrier stage run, and returns
their (rank, line) pairs in rank order, or raises the first task's error. Partitions are lists
of tuples `(label, features...)`, as `df.select(label, *features)` gives them. Environment:
REPO (the repository), DATA (the integration fixture's Fashion-MNIST CSV files).
"""
import io
import os
import sys
import threading

REPO = os.environ["REPO"]
DATA = os.environ["DATA"]
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))


def csv_rows(name, count):
    """The first `count` rows of a fixture CSV file as tuples (label, pixel, pixel, ...)."""
    out = []
    with open(os.path.join(DATA, name)) as f:
        for line in f:
            if len(out) == count:
                break
            out.append(tuple(float(v) for v in line.split(",")))
    return out


def split(rows, n):
    return [rows[i::n] for i in range(n)]


class Stage:
    """Runs a task over `partitions` at once. `fail(rank, attempt)` may return an exception
    to raise in that task after its first rows, as a task killed by Spark would end. Each call
    is one attempt; `attempts` counts them, `logs` keeps every task's log."""

    def __init__(self, partitions, fail=None):
        self.partitions = partitions
        self.fail = fail
        self.attempts = 0
        self.logs = []

    def rows(self, rank, attempt):
        for n, row in enumerate(self.partitions[rank]):
            if n == 10 and self.fail:
                error = self.fail(rank, attempt)
                if error is not None:
                    raise error
            yield row

    def __call__(self, task):
        self.attempts += 1
        attempt = self.attempts - 1

        def run(rank):
            log = io.StringIO()
            self.logs.append(log)
            return list(task(rank, self.rows(rank, attempt), attempt, log=log))

        results = run_at_once([lambda r=r: run(r) for r in range(len(self.partitions))])
        return [pair for result in results for pair in result]


def run_at_once(calls):
    """Runs every callable in `calls` at once, each in a thread as a stage's tasks run; returns
    their results in order, or raises the first error once all have ended."""
    results, errors = [None] * len(calls), []

    def run(i):
        try:
            results[i] = calls[i]()
        except BaseException as e:  # pylint: disable=broad-except
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    if errors:
        raise errors[0]
    return results

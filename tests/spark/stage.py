"""What the Spark layer does with a training job's tasks, without Spark, for tests/spark/.

`Stage(partitions)` is a `run_stage` for sparktorch_spark.job.run_training: it runs the task's
command on every partition at once, each in a thread as the tasks of a barrier stage run, fed
the partition's rows as the JVM's RDD.pipe feeds them (the `vector` format that
sparktorch_spark.rows makes, the partition id before the first row), and returns every line
they wrote in partition order, or raises the first task's error. Partitions are lists of
tuples `(label, feature, feature, ...)`. Environment: REPO (the repository), DATA (the
integration fixture's Fashion-MNIST CSV files).
"""
import io
import json
import os
import signal
import sys
import threading
import time
import zipfile

REPO = os.environ["REPO"]
DATA = os.environ["DATA"]
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))

from sparktorch_spark.runner import pipe_partition  # noqa: E402


def vector_row(row, label=True):
    """A row as Spark SQL writes it for the binary: `LABEL,[F,F,...]` (rows.row_text)."""
    features = "[%s]" % ",".join(repr(float(v)) for v in row[1 if label else 0:])
    return "%r,%s" % (float(row[0]), features) if label else features


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
    """Runs a task's command over `partitions` at once. `fail(rank, attempt)` may return an
    exception to raise in that task after its first rows, as a task killed by Spark would end.
    A call for another number of tasks re-splits the rows among them. Each call is one
    attempt; `attempts` counts them, `logs` keeps every task's log,
    `commands` every attempt's command and `envs` what it added to the tasks' environment."""

    def __init__(self, partitions, fail=None):
        self.partitions = partitions
        self.fail = fail
        self.attempts = 0
        self.logs = []
        self.commands = []
        self.envs = []

    def rows(self, rank, attempt):
        for n, row in enumerate(self.partitions[rank]):
            if n == 10 and self.fail:
                error = self.fail(rank, attempt)
                if error is not None:
                    raise error
            line = vector_row(row)
            yield "%d\t%s" % (rank, line) if n == 0 else line

    def __call__(self, command, env, tasks=None):
        self.attempts += 1
        attempt = self.attempts - 1
        self.commands.append(list(command))
        self.envs.append(dict(env))
        if tasks is not None and tasks != len(self.partitions):  # re-split, as a repartition
            rows = [row for part in self.partitions for row in part]
            self.partitions = split(rows, tasks)

        def run(rank):
            log = io.StringIO()
            self.logs.append(log)
            return list(pipe_partition(self.rows(rank, attempt), command,
                                       env=dict(os.environ, **env), log=log))

        results = run_at_once([lambda r=r: run(r) for r in range(len(self.partitions))])
        return [line for result in results for line in result]


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


def manifest(model):
    """The manifest sparktorch embedded in a .pt (a path or its bytes)."""
    with zipfile.ZipFile(model if isinstance(model, str) else io.BytesIO(model)) as z:
        name = next(n for n in z.namelist() if n.endswith("/extra/sparktorch.json"))
        return json.loads(z.read(name))


class KillAfterCheckpoint:
    """Kills one `sparktorch train` process of `binary` that this process started (SIGKILL,
    the newest) once the checkpoint file `path` holds the model after epoch `epoch` or later,
    as an executor lost mid-training ends its task; once. `killed_after` is then the
    checkpoint's epoch. Only this process's children: ctest runs other tests beside this one,
    whose Spark tasks run the same binary."""

    def __init__(self, binary, path, epoch):
        self.binary, self.path, self.epoch = binary, path, epoch
        self.killed_after = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(10)

    def _trains(self):
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    argv = f.read().split(b"\0")
                with open("/proc/%s/stat" % entry, "rb") as f:
                    parent = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == os.getpid() and self.binary.encode() in argv and b"train" in argv \
                    and b"--tracker" in argv:
                pids.append(int(entry))
        return sorted(pids)

    def _watch(self):
        while not self._stop.wait(0.02):
            try:
                done = manifest(self.path)["training"]["epochs_run"]
            except (OSError, KeyError, StopIteration, ValueError, zipfile.BadZipFile):
                continue
            pids = self._trains()
            if done >= self.epoch and pids:
                os.kill(pids[-1], signal.SIGKILL)
                self.killed_after = done
                return
            time.sleep(0)

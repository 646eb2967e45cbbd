"""What a Spark task runs: one partition through `sparktorch train` or `sparktorch predict`.

`TrainTask` and `PredictTask` are plain picklable objects that Spark ships to the executors and
calls with a partition's rows (tuples); they know nothing of Spark, so the tests call them with
plain lists, N at once, against the real binary. `check_binary` is the pre-flight task that
finds the binary on an executor and runs it once.
"""
import collections
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import zlib

from .rows import RowEncoder, parse_prediction
from .runner import pipe_partition

ARCHIVE_BINARY = os.path.join("sparktorch", "sparktorch")  # --archives bundle.tar.gz#sparktorch


class BinaryMissing(RuntimeError):
    """No sparktorch binary where the job said, or where --archives puts it."""


def _spark_files_root():
    try:
        from pyspark import SparkFiles  # pylint: disable=import-outside-toplevel
        return SparkFiles.getRootDirectory()
    except Exception:  # pylint: disable=broad-except  # outside Spark, or no SparkFiles yet
        return None


def find_binary(configured=None):
    """The absolute path of the sparktorch binary on this machine: `configured` (a path, relative
    to the working directory or to Spark's files directory), else the bundle that `--archives
    sparktorch-...tar.gz#sparktorch` unpacked (in the working directory, or Spark's files
    directory), else `sparktorch` on PATH. Raises BinaryMissing listing where it looked."""
    root = _spark_files_root()
    names = [configured] if configured else [ARCHIVE_BINARY]
    tried = []
    for name in names:
        candidates = [name] if os.path.isabs(name) else [os.path.abspath(name)] + (
            [os.path.join(root, name)] if root else [])
        for path in candidates:
            tried.append(path)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    if not configured or os.sep not in configured:
        on_path = shutil.which(configured or "sparktorch")
        tried.append("%s on PATH" % (configured or "sparktorch"))
        if on_path:
            return os.path.abspath(on_path)
    raise BinaryMissing("no sparktorch binary on %s: tried %s (ship the bundle with "
                        "spark-submit --archives sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch,"
                        " or give its path with binary=)" % (socket.gethostname(), ", ".join(tried)))


def check_binary(configured=None):
    """Pre-flight: (host, None) when the binary is found and runs here, else (host, message)."""
    host = socket.gethostname()
    try:
        path = find_binary(configured)
        done = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=60, check=False)
    except (BinaryMissing, OSError, subprocess.TimeoutExpired) as e:
        return host, str(e)
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return host, "%s --version exited with status %d: %s" % (
            path, done.returncode, err[-1] if err else "(nothing on stderr)")
    return host, None


def _columns(names):
    """Column names for a message, the middle of a long list elided."""
    names = list(names)
    shown = names if len(names) <= 6 else names[:3] + ["..."] + names[-2:]
    return "%s (%d)" % (", ".join(shown), len(names)) if len(names) > 1 else ", ".join(names)


def _write_files(files):
    """Writes {name: bytes} into a new temporary directory; returns the directory."""
    directory = tempfile.mkdtemp(prefix="sparktorch-task-")
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    return directory


class TrainTask:
    """One partition of a training job: `task(rank, rows, attempt)` pipes `rows` (tuples
    `(label, features...)`) through `sparktorch train` as rank (or worker) `rank` of
    `world_size`, and yields `(rank, line)` for every record it writes.

    `args` are the flags that say how to train (options.train_flags) and, in sync mode, what
    (options.model_flags with file names relative to the task's directory); `files` the
    model and config files those names refer to, written in a temporary directory; `env` is
    added to the process's environment (the job's secret and id)."""

    def __init__(self, binary, global_flags, mode, address, world_size, args, files, env,
                 label_width, feature_names, row_args):
        self.binary = binary
        self.global_flags = list(global_flags)
        self.mode = mode
        self.address = address
        self.world_size = world_size
        self.args = list(args)
        self.files = dict(files)
        self.env = dict(env)
        self.label_width = label_width
        self.feature_names = list(feature_names)
        self.row_args = list(row_args)

    def command(self, rank, directory):
        where = ["--tracker" if self.mode == "sync" else "--server", self.address,
                 "--rank", str(rank), "--world-size", str(self.world_size)]
        args = [os.path.join(directory, a) if a in self.files else a for a in self.args]
        return ([find_binary(self.binary)] + self.global_flags + ["train", "--mode", self.mode]
                + where + self.row_args + args)

    def __call__(self, rank, rows, attempt=0, log=None):
        if self.mode == "hogwild" and attempt > 0:
            # The parameter server counted this worker as lost and does not take it back; the
            # job goes on with the others, so a retried task has nothing left to do.
            (log or sys.stderr).write("sparktorch: worker %d was lost in an earlier attempt of "
                                      "this task; the parameter server goes on without it\n" % rank)
            return
        directory = _write_files(self.files)
        try:
            encoder = RowEncoder(self.label_width, self.feature_names)
            env = dict(os.environ, **self.env)
            lines = (encoder.encode(row) for row in rows)
            what = ("sparktorch train, rank %d of %d (its stdin: this partition's rows, line N "
                    "the Nth; %sfeatures from %s)"
                    % (rank, self.world_size, "the label first, then " if self.label_width else
                       "no label, ", _columns(self.feature_names)))
            for line in pipe_partition(lines, self.command(rank, directory), env=env, log=log,
                                       what=what):
                yield rank, line
        finally:
            shutil.rmtree(directory, ignore_errors=True)


_model_files = {}  # CRC-32 of a model's bytes -> its file in this Python worker


def _model_file(model):
    """A local file holding `model` (bytes), written once per Python worker process."""
    key = (zlib.crc32(model), len(model))
    path = _model_files.get(key)
    if path is None or not os.path.exists(path):
        path = os.path.join(_write_files({"model.pt": model}), "model.pt")
        _model_files[key] = path
    return path


class PredictTask:
    """Predictions for one partition: `task(rows)` pipes the features of `rows` (tuples; the
    features are the cells at `feature_positions`) through `sparktorch predict` and yields
    `row + (prediction,)` for every row, in order. As SparkTorch gives them: with `vector_out`,
    the list of the model's outputs (`--prediction vector`, or `probabilities` when
    `probabilities`); else a float, the output itself when the model has one, the index of the
    largest (the class) when it has several. A row the binary skipped (`on_bad_row="skip"`)
    gets None.

    `model` is the model's bytes, or an object whose `.value` they are (a Spark broadcast)."""

    def __init__(self, binary, global_flags, model, feature_positions, feature_names,
                 vector_out=False, probabilities=False, batch_size=1024, threads=1, device="cpu",
                 on_bad_row="fail"):
        self.binary = binary
        self.global_flags = list(global_flags)
        self.model = model
        self.feature_positions = list(feature_positions)
        self.feature_names = list(feature_names)
        self.vector_out = vector_out
        self.probabilities = probabilities
        self.batch_size = batch_size
        self.threads = threads
        self.device = device
        self.on_bad_row = on_bad_row

    def command(self):
        model = self.model.value if hasattr(self.model, "value") else self.model
        args = [find_binary(self.binary)] + self.global_flags + [
            "predict", "--model", _model_file(model), "--format", "compact",
            "--on-bad-row", self.on_bad_row, "--batch-size", str(self.batch_size),
            "--threads", str(self.threads), "--device", self.device,
            "--prediction", "probabilities" if self.probabilities else "vector"]
        return args

    def value(self, text):
        outputs = parse_prediction(text)
        if self.vector_out:
            return outputs
        return outputs[0] if len(outputs) == 1 else float(outputs.index(max(outputs)))

    def __call__(self, rows, log=None):
        encoder = RowEncoder(0, self.feature_names)
        pending = collections.deque()  # rows written and not yet answered, with their ids

        def lines():
            for n, row in enumerate(rows):
                pending.append((n, row))
                yield encoder.encode([row[p] for p in self.feature_positions], n)

        # predict writes one line per row, in order: "ID<TAB>VALUE", or an empty line for a
        # row it skipped (on_bad_row="skip").
        what = ("sparktorch predict (its stdin: this partition's rows, line N the Nth; features "
                "from %s)" % _columns(self.feature_names))
        for line in pipe_partition(lines(), self.command(), log=log, what=what):
            n, row = pending.popleft()
            if not line:
                yield tuple(row) + (None,)
                continue
            row_id, _, value = line.partition("\t")
            if row_id != str(n):
                raise RuntimeError("sparktorch predict answered row %s where row %d was due"
                                   % (row_id, n))
            yield tuple(row) + (self.value(value),)
        if pending:
            raise RuntimeError("sparktorch predict answered %d rows fewer than it was given"
                               % len(pending))

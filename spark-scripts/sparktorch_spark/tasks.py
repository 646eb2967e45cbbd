"""What a Spark task runs: the command lines of `sparktorch train` and `sparktorch predict` on an
executor, and the task that predicts rows passing through Python.

The JVM's `RDD.pipe` runs one command for every partition, fixed on the driver, so a task's
command starts with a launcher (`/bin/sh -c`, on every Linux executor) that finds the binary on
the executor as `find_binary` would: the configured path, else the bundle that `--archives
sparktorch-...tar.gz#sparktorch` unpacked in the working directory (or, with a local master, in
Spark's files directory), else `sparktorch` on PATH. Without one it says where it looked and
exits with exit_codes.NOT_FOUND. Nothing here needs Spark.
"""
import collections
import os
import shutil
import socket

from . import exit_codes
from .runner import pipe_partition

ARCHIVE_BINARY = os.path.join("sparktorch", "sparktorch")  # --archives bundle.tar.gz#sparktorch
ARCHIVE_HINT = ("ship the bundle with spark-submit --archives "
                "sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch, or give its path with "
                "binary=")

# Runs the first candidate that is an executable file (a name without a slash: on PATH) with
# the arguments after "--"; else prints $SPARKTORCH_MISSING (launcher_env) with the host's name
# for its @host@, and exits NOT_FOUND.
# One short line: Spark quotes a failed task's whole command in its logs, so the command must
# be readable there and hold no message of a failure that did not happen.
_LAUNCHER = ('f=; for b do shift; [ "$b" = -- ] && break; [ -n "$f" ] && continue; '
             'case $b in */*) [ -f "$b" ] && [ -x "$b" ] && f=$b;; '
             '*) f=$(command -v -- "$b");; esac; done; [ -n "$f" ] && exec "$f" "$@"; '
             'm=$SPARKTORCH_MISSING; echo "${m%%%%@host@*}$(uname -n)${m#*@host@}" >&2; exit %d'
             % exit_codes.NOT_FOUND)


class BinaryMissing(RuntimeError):
    """No sparktorch binary where the job said, or where --archives puts it."""


def binary_candidates(configured=None, files_dir=None):
    """Where a task looks for the binary, in order: `configured` (a path, relative to the task's
    working directory or to `files_dir`, Spark's files directory when it is not the working
    directory; or a name on PATH), else the bundle there, else `sparktorch` on PATH."""
    name = configured or ARCHIVE_BINARY
    if os.path.isabs(name) or (configured and os.sep not in configured):
        return [name]
    out = [os.path.join(".", name)]
    if files_dir and os.path.abspath(files_dir) != os.path.abspath("."):
        out.append(os.path.join(files_dir, name))
    if not configured:
        out.append("sparktorch")
    return out


def launcher(candidates):
    """The command prefix that runs the first of `candidates` found on the executor; the
    binary's arguments follow it. Its environment needs launcher_env(candidates)."""
    return ["/bin/sh", "-c", _LAUNCHER, "sparktorch-launcher"] + list(candidates) + ["--"]


def launcher_env(candidates):
    """What the launcher of `candidates` needs in its environment: the message it prints when
    it finds none of them."""
    return {"SPARKTORCH_MISSING": "sparktorch: error: no sparktorch binary on @host@: tried %s "
                                  "(%s)" % (", ".join(candidates), ARCHIVE_HINT)}


def find_binary(configured=None, files_dir=None):
    """The absolute path of the binary on this machine, looked for as a task's launcher looks
    (see binary_candidates). Raises BinaryMissing listing where it looked."""
    tried = []
    for candidate in binary_candidates(configured, files_dir):
        if os.sep in candidate:
            tried.append(candidate)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return os.path.abspath(candidate)
        else:
            tried.append("%s on PATH" % candidate)
            on_path = shutil.which(candidate)
            if on_path:
                return os.path.abspath(on_path)
    raise BinaryMissing("no sparktorch binary on %s: tried %s (%s)"
                        % (socket.gethostname(), ", ".join(tried), ARCHIVE_HINT))


def process_env(threads, candidates=()):
    """What the layer adds to the environment of every sparktorch process it starts (the tasks,
    serve): OpenBLAS's thread count, the `threads` the process computes with, and for a task
    started by the launcher of `candidates`, its launcher_env. OpenBLAS starts a
    thread per core as the binary loads, before the binary sets the count it uses (--threads),
    and an idle one spins for a while: 0.1-0.2 s of CPU a start, taken from the other processes
    starting on the same cores (sparktorch-spark(7), PERFORMANCE)."""
    env = {"OPENBLAS_NUM_THREADS": str(threads)}
    if candidates:
        env.update(launcher_env(candidates))
    return env


def train_command(candidates, global_flags, *, mode, address, world_size, args):
    """The command of every task of a training job: rows on stdin, its rank (or worker id)
    before the first row (rows.with_partition_prefix), its records on stdout. `args` are the
    row flags and how (and, in sync mode, what) to train."""
    where = ["--tracker" if mode == "sync" else "--server", address]
    return (launcher(candidates) + list(global_flags) + ["train", "--mode", mode] + where +
            ["--rank-from-stdin", "--world-size", str(world_size)] + list(args))


# The line that ends a partition's rows, and the answers to them, for a predict process kept
# between tasks (sparktorch-spark.jar's PipeRows; `sparktorch predict --group-end`). Rows are
# numbers, so no row is this line.
GROUP_END = "#sparktorch-end-of-partition"
# The same end for a process that reads float32 records: the format's group end record (it
# answers with GROUP_END's line all the same).
GROUP_END_RECORD = b"\xfe\xff\xff\xff"


def predict_command(candidates, global_flags, *, model_path, vector_out, probabilities=False,
                    batch_size=1024, threads=1, device="cpu", on_bad_row="fail", groups=False,
                    row_format="vector"):
    """The command of a prediction task: rows of `row_format` on stdin (`vector` lines, or
    `float32` records as sparktorch-spark.jar's PipeRows writes a vector column), exactly one line
    on stdout for each (empty for a row skipped under on_bad_row="skip"), in order: the
    model's outputs, comma-separated, with `vector_out` (the probabilities with
    `probabilities`), else the model's own prediction (a class index, a binary classifier's 0
    or 1, a regression's outputs). With `groups`, partition after partition, each followed by
    GROUP_END, which the command echoes after the partition's answers."""
    kind = ["--prediction", "probabilities"] if probabilities else (
        ["--prediction", "vector"] if vector_out else [])
    return launcher(candidates) + list(global_flags) + [
        "predict", "--model", model_path, "--format", row_format, "--on-bad-row", on_bad_row,
        "--batch-size", str(batch_size), "--threads", str(threads), "--device", device] + kind + (
            ["--group-end", GROUP_END] if groups else [])


def prediction_value(text, vector_out):
    """A prediction line's value, as SparkTorch gives it: the list of outputs with `vector_out`;
    else a float, the output itself when the model has one, the index of the largest (the
    class) when it has several; None for an empty line (a skipped row)."""
    if not text:
        return None
    outputs = [float(v) for v in text.split(",")]
    if vector_out:
        return outputs
    return outputs[0] if len(outputs) == 1 else float(outputs.index(max(outputs)))


# How long an executor (on Spark Connect, a Python worker) keeps an idle `sparktorch predict`
# process for its next task of the same model and options: starting one and loading the model
# costs ~0.5 s a partition.
PREDICT_KEEP_SECONDS = 30

# What a prediction task runs, as its errors name it.
PREDICT_WHAT = "sparktorch predict (its stdin: this partition's rows, line or record N the Nth)"


class PredictTask:
    """Predictions for one partition whose rows pass through Python: `task(rows)` writes the
    last cell of every row (its text, rows.row_text) to `command` and yields the row without
    that cell plus its prediction (prediction_value), in order. spark.predict takes it only
    without sparktorch-spark.jar, for DataFrames that Spark could give in another order when
    read twice (it pairs rows and predictions in the JVM otherwise). `env` is added to the command's environment (process_env)."""

    def __init__(self, command, vector_out, env=None):
        self.command = list(command)
        self.vector_out = vector_out
        self.env = dict(env or {})

    def __call__(self, rows, log=None):
        pending = collections.deque()  # rows written and not yet answered

        def lines():
            for row in rows:
                pending.append(row[:-1])
                yield row[-1]

        env = dict(os.environ, **self.env) if self.env else None
        for line in pipe_partition(lines(), self.command, env=env, log=log, what=PREDICT_WHAT):
            yield tuple(pending.popleft()) + (prediction_value(line, self.vector_out),)
        if pending:
            raise RuntimeError("sparktorch predict answered %d rows fewer than it was given"
                               % len(pending))

"""Spark Connect training: the job inside one barrier stage, as nothing on the executors can be
assumed to reach the client.

The client repartitions the DataFrame to the job's task count and maps its Arrow batches with
`mapInArrow(TrainTask(...), barrier=True)`. In the stage, task 0 starts `sparktorch serve` (the
tracker of a synchronous job, the parameter server of a hogwild one) on its executor; its
address reaches every task through `BarrierTaskContext.allGather`; each task then runs
`sparktorch train --rank R` with its partition's rows (arrow_rows' `compact` lines) on stdin.
The records the ranks write (rank 0's model in sync mode) and, in hogwild mode, the server's
model come back as the stage's rows, which the client collects and checks as job.py does.
A task that fails raises one line (`sparktorch rank R failed (WHY): LAST ERROR LINE`), which
the client finds in Spark's error and raises as JobFailed.
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

from . import exit_codes
from . import options as opts
from .job import JobFailed, TrainResult, model_files, new_job_id
from .options import OptionError
from .records import read_records
from .serve import Serve, ServeError, last_error
from .tasks import BinaryMissing, find_binary, process_env

_FAILED = re.compile(r"sparktorch (?:rank \d+ failed|serve failed|task failed)[^\n]*")
_OUTPUT = "rank int, line string, model binary"
_STATUS = re.compile(r"\((?:exit status (\d+)|killed by signal (\d+))")


def train(df, options, mode, columns, label, log):
    """Trains on `df`, a Connect DataFrame: `columns` and `label` as spark.train finds them
    ([(name, kind)]; (name, kind) or None). Returns a job.TrainResult; raises OptionError,
    JobFailed."""
    from . import connect  # pylint: disable=import-outside-toplevel
    session = df.sparkSession
    connect.ship_package(session)
    cpus = int(session.conf.get("spark.task.cpus", "1") or 1)
    slots = _slots(session.conf.get("spark.master", ""), cpus)
    n = options.partitions or slots or int(session.conf.get("spark.default.parallelism", "2"))
    if slots and n > slots:
        raise OptionError("partitions=%d, but a barrier stage can get %d slots on %s: every "
                          "task of a barrier stage must run at once; use partitions=%d or fewer"
                          % (n, slots, session.conf.get("spark.master", ""), slots))
    threads = options.threads or cpus
    model_path, config_path = model_files(options)
    base = dict(
        mode=mode, world_size=n, binary=options.binary,
        global_flags=opts.verbosity_flags(options.verbose),
        serve_args=opts.serve_flags(options, mode, n),
        train_args=opts.train_flags(options, mode, threads), on_bad_row=options.onBadRow,
        model_args=opts.model_flags(options, "@model@", "@config@" if config_path else None),
        model=_read(model_path), config=_read(config_path) if config_path else None,
        names=(os.path.basename(model_path), os.path.basename(config_path or "model.json")),
        env=process_env(threads), label=[label] if label else [], columns=list(columns))
    names = [name for name, _ in base["label"] + base["columns"]]
    data = df.select(*names).repartition(n)
    for attempt in range(1, options.retries + 2):
        job_id = new_job_id()
        spec = dict(base, job_id=job_id, secret=os.urandom(16).hex())
        log.write("sparktorch: job %d (attempt %d of %d) on Spark Connect: %d %s tasks, serve "
                  "in task 0\n" % (job_id, attempt, options.retries + 1, n, mode))
        log.flush()
        try:
            rows = data.mapInArrow(TrainTask(spec), _OUTPUT, barrier=True).collect()
        except Exception as e:  # pylint: disable=broad-except  # Spark's, with a task's message
            found = _FAILED.search(str(e))
            why = found.group(0) if found else (str(e).strip().splitlines() or [repr(e)])[0]
            if "no sparktorch binary" in why:
                raise BinaryMissing(why) from None
            status = _STATUS.search(why)
            code = None if status is None else int(status.group(1) or -int(status.group(2)))
            if (code in exit_codes.RETRYABLE or (code is not None and code < 0)) and \
                    attempt <= options.retries:
                log.write("sparktorch: job %d failed and runs again with a new job id: %s\n"
                          % (job_id, why))
                continue
            raise JobFailed("sparktorch job %d failed (attempt %d of %d): %s (rank R is the "
                            "stage's partition R; each task's log has its rank's messages)"
                            % (job_id, attempt, options.retries + 1, why)) from None
        return _result(mode, rows, job_id, attempt)
    raise AssertionError("unreachable")


def task_gpus(context):
    """The addresses of the GPUs Spark gave the task of `context` (its "gpu" resource, as
    spark.task.resource.gpu.amount asks), or []."""
    try:
        gpu = context.resources().get("gpu")
    except Exception:  # pylint: disable=broad-except  # a TaskContext without resources
        return []
    return list(gpu.addresses) if gpu is not None else []


def _result(mode, rows, job_id, attempt):
    """The TrainResult of the stage's rows, checked as job.py checks a classic job's."""
    rows = sorted(rows, key=lambda r: r["rank"])
    records = read_records([r["line"] for r in rows if r["line"] is not None])
    served = [r["model"] for r in rows if r["model"] is not None]
    if mode == "hogwild":
        if not served:
            raise JobFailed("sparktorch job %d: the parameter server wrote no model" % job_id)
        return TrainResult(served[0], records.summaries, job_id, attempt)
    if records.model is None:
        raise JobFailed("sparktorch job %d: rank 0 wrote no model" % job_id)
    checksums = {s.get("weights_crc32") for s in records.summaries}
    if len(checksums) != 1:
        raise JobFailed("the ranks ended with different weights (weights_crc32 %s)"
                        % ", ".join(sorted(str(c) for c in checksums)))
    return TrainResult(records.model, records.summaries, job_id, attempt)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _slots(master, cpus):
    from .slots import master_slots  # pylint: disable=import-outside-toplevel
    return master_slots(master, cpus) if master else None


class TrainTask:
    """One task of the stage: its rank of the job (and task 0's serve)."""

    def __init__(self, spec):
        self.spec = spec

    def __call__(self, batches):
        import pyarrow as pa  # pylint: disable=import-outside-toplevel
        from pyspark import BarrierTaskContext  # pylint: disable=import-outside-toplevel
        context = BarrierTaskContext.get()
        rank = context.partitionId()
        work = tempfile.mkdtemp(prefix="sparktorch-task-")
        serve = None
        try:
            serve, shared = self._serve(context, rank, work)
            address = context.allGather(shared)[0]
            if address.startswith("!"):  # every task says why task 0's serve did not start
                raise RuntimeError(address[1:])
            lines = self._rank(rank, address, batches, work, task_gpus(context))
            out = [(rank, line, None) for line in lines]
            if serve is not None:
                try:
                    out += [(self.spec["world_size"], line, None) for line in serve.finish(60)]
                except ServeError as e:
                    raise RuntimeError("sparktorch serve failed: %s" % e) from None
                if serve.model_path:
                    out.append((self.spec["world_size"], None, serve.model()))
            yield pa.RecordBatch.from_arrays(
                [pa.array([r for r, _, _ in out], pa.int32()),
                 pa.array([line for _, line, _ in out], pa.string()),
                 pa.array([m for _, _, m in out], pa.binary())], names=["rank", "line", "model"])
        finally:
            if serve is not None:
                serve.close()
            shutil.rmtree(work, ignore_errors=True)

    def _files(self, work):
        """Where this task wrote the model and its config: the flags that name them."""
        spec = self.spec
        model_name, config_name = spec["names"]
        paths = {"@model@": os.path.join(work, model_name),
                 "@config@": os.path.join(work, config_name)}
        for key, data in (("@model@", spec["model"]), ("@config@", spec["config"])):
            if data is not None:
                with open(paths[key], "wb") as f:
                    f.write(data)
        return [paths.get(a, a) for a in spec["model_args"]]

    def _env(self):
        spec = self.spec
        return dict(os.environ, **spec["env"], SPARKTORCH_SECRET=spec["secret"],
                    SPARKTORCH_JOB_ID=str(spec["job_id"]))

    def _serve(self, context, rank, work):
        """(serve or None, what task 0 shares: serve's address, or '!' and why it failed)."""
        if rank != 0:
            return None, ""
        spec = self.spec
        hogwild = spec["mode"] == "hogwild"
        args = spec["serve_args"] + (self._files(work) if hogwild else
                                     ["--job-id", str(spec["job_id"])])
        host = context.getTaskInfos()[0].address.rsplit(":", 1)[0]
        try:
            binary = find_binary(spec["binary"])
            serve = Serve(binary, spec["global_flags"], args, env=self._env(),
                          listen=("0.0.0.0", 0), host=host, model_output=hogwild, wait=hogwild,
                          log=sys.stderr)
        except (BinaryMissing, ServeError) as e:
            return None, "!sparktorch serve failed: %s" % e
        return serve, serve.address

    def _rank(self, rank, address, batches, work, gpus=()):
        """Runs this task's `sparktorch train` on its rows; returns its stdout lines. `gpus`:
        the addresses of the GPUs Spark gave the task (`--task-gpus`, which `--device cuda` or
        `auto` trains on)."""
        from . import arrow_rows  # pylint: disable=import-outside-toplevel  # numpy: executors
        spec = self.spec
        batches = iter(batches)
        first = next(batches, None)
        label_width = 0
        if first is not None and spec["label"]:
            label_width = arrow_rows.batch_matrix(first, spec["label"]).shape[1]
        rows = ["--format", "compact", "--on-bad-row", spec["on_bad_row"]] + (
            ["--label-col", "0" if label_width <= 1 else "0:%d" % (label_width - 1)]
            if spec["label"] else ["--no-label"])
        where = ["--tracker" if spec["mode"] == "sync" else "--server", address]
        try:
            binary = find_binary(spec["binary"])
        except BinaryMissing as e:
            raise RuntimeError("sparktorch task failed: %s" % e) from None
        command = ([binary] + spec["global_flags"] +
                   ["train", "--mode", spec["mode"]] + where +
                   ["--rank", str(rank), "--world-size", str(spec["world_size"])] +
                   (["--task-gpus", ",".join(gpus)] if gpus else []) + rows +
                   spec["train_args"] + (self._files(work) if spec["mode"] == "sync" else []))
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=self._env())
        tail, out, failed = [], [], []
        readers = [threading.Thread(target=_lines, args=(process.stdout, out, None)),
                   threading.Thread(target=_lines, args=(process.stderr, tail, sys.stderr))]
        for t in readers:
            t.daemon = True
            t.start()
        try:
            for batch in itertools.chain([first] if first is not None else [], batches):
                matrix = arrow_rows.batch_matrix(batch, spec["label"] + spec["columns"])
                process.stdin.write(arrow_rows.compact_lines(matrix))
        except arrow_rows.BadRows as e:
            failed.append(str(e))
            process.kill()
        except OSError:
            pass  # it stopped reading: its exit status says why
        finally:
            try:
                process.stdin.close()
            except OSError:
                pass
        code = process.wait()
        for t in readers:
            t.join()
        if failed:
            raise RuntimeError("sparktorch rank %d failed (a bad row): %s" % (rank, failed[0]))
        if code != 0:
            raise RuntimeError("sparktorch rank %d failed (%s): %s"
                               % (rank, exit_codes.describe(code), last_error(tail[-20:])))
        return out


def _lines(stream, into, echo):
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        into.append(line)
        if echo is not None:
            echo.write(line + "\n")
            echo.flush()

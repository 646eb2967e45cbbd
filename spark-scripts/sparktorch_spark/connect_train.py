"""Spark Connect training: the job inside one barrier stage, as nothing on the executors can be
assumed to reach the client.

The client maps a DataFrame with `mapInArrow(TrainTask(...), barrier=True)`: a plain read of
Parquet files becomes `partitions` empty tasks whose binaries read their share of the files
(connect_plan.parquet_files); any other DataFrame keeps its partitions (coalesced to at most
the slots; repartitioned to exactly `partitions` when given) and each task's Arrow batches
become its rank's rows (arrow_rows' `float32` records on stdin). In the stage, task 0 starts
`sparktorch serve` (the tracker of a synchronous job, the parameter server of a hogwild one) on
its executor and makes the job's secret; both reach every task through
`BarrierTaskContext.allGather`, and each task runs `sparktorch train --rank R --world-size N`
(N: the stage's tasks). The summary records the ranks write and the model serve wrote (the one
rank 0 sent it in sync mode, `train --send-model`; the parameter server's in hogwild mode) come
back as the stage's rows, which the client collects and checks as job.py does. A task that
fails raises one line (`sparktorch rank R failed (WHY): LAST ERROR LINE`), which the client
finds in Spark's error and raises as JobFailed.
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

from . import connect_plan
from . import exit_codes
from . import options as opts
from .job import JobFailed, TrainResult, model_files, new_job_id, verified_model
from .options import OptionError
from .records import read_records
from .serve import Serve, ServeError, last_error
from .tasks import BinaryMissing, find_binary, process_env

_FAILED = re.compile(r"sparktorch (?:rank \d+ failed|serve failed|task failed)[^\n]*")
_OUTPUT = "rank int, line string, model binary"
WORLD = "@world@"  # serve's --world-size: the stage's tasks, known in task 0
_STATUS = re.compile(r"\((?:exit status (\d+)|killed by signal (\d+))")


def train(df, options, mode, columns, label, log):
    """Trains on `df`, a Connect DataFrame: `columns` and `label` as spark.train finds them
    ([(name, kind)]; (name, kind) or None). Returns a job.TrainResult; raises OptionError,
    JobFailed.

    When `df` is a plain read of Parquet files (readParquet), the tasks read their rows from
    the files themselves, as on the classic path; if that job fails on a file its reader
    refuses (a codec or encoding), it runs again with the rows through Spark, saying why."""
    from . import connect  # pylint: disable=import-outside-toplevel
    session = df.sparkSession
    connect.ship_package(session)
    binary = connect.ship_bundle(session, options.binary, log)
    conf = session.conf.get
    master = conf("spark.master", "")
    slots = connect_plan.barrier_slots(conf, master)
    n = options.partitions or slots or int(conf("spark.default.parallelism", "2") or 2)
    if slots and n > slots:
        raise OptionError("partitions=%d, but a barrier stage can get %d slots on %s: every "
                          "task of a barrier stage must run at once; use partitions=%d or fewer"
                          % (n, slots, master, slots))
    if slots is None:
        log.write("sparktorch: the server's configuration does not say how many slots %s has "
                  "(spark.executor.instances and spark.executor.cores, or spark.cores.max); "
                  "the %d tasks start when %d are free\n" % (master, n, n))
    threads = options.threads or int(conf("spark.task.cpus", "1") or 1)
    model_path, config_path = model_files(options)
    base = dict(
        mode=mode, binary=binary, global_flags=opts.verbosity_flags(options.verbose),
        serve_args=opts.serve_flags(options, mode, WORLD),
        train_args=opts.train_flags(options, mode, threads), on_bad_row=options.onBadRow,
        model_args=opts.model_flags(options, "@model@", "@config@" if config_path else None),
        model=_read(model_path), config=_read(config_path) if config_path else None,
        names=(os.path.basename(model_path), os.path.basename(config_path or "model.json")),
        env=process_env(threads), label=[label] if label else [], columns=list(columns),
        row_args=None)
    names = [name for name, _ in base["label"] + base["columns"]]
    files, why_not = connect_plan.parquet_files(df.select(*names), names) \
        if options.readParquet else (None, None)
    if files is not None:
        log.write("sparktorch: the %d tasks read their rows from the %d Parquet file%s "
                  "themselves (readParquet)\n" % (n, len(files), "" if len(files) == 1 else "s"))
        feature_names = [name for name, _ in base["columns"]]
        parquet = dict(base, row_args=opts.parquet_row_flags(
            files, feature_names, label[0] if label else None, options.onBadRow))
        try:
            return _run(session.range(0, n, 1, n), parquet, options, n, master, log)
        except JobFailed as e:
            # A codec or encoding the binary's reader refuses (its message says "sparktorch
            # does not read"); a bad row would fail through Spark too.
            if getattr(e, "exit_status", None) != exit_codes.BAD_INPUT or \
                    "sparktorch does not read" not in e.why:
                raise
            log.write("sparktorch: the tasks could not read these Parquet files themselves "
                      "(%s); the rows go through Spark instead (readParquet=False goes there "
                      "at once)\n" % e.why)
    elif why_not and options.verbose > 0:
        log.write("sparktorch: the rows go through Spark: %s\n" % why_not)
    # Without partitions= the input's partitions are kept (coalesced to the slots, no
    # shuffle) and the job has as many ranks as the stage has tasks; with it, exactly n.
    data = df.select(*names)
    data = data.repartition(n) if options.partitions else data.coalesce(n)
    return _run(data, base, options, n, master, log)


def _run(data, base, options, n, master, log):
    """The barrier stage of `data` (its partitions the ranks), run again after a lost task up
    to options.retries times."""
    mode = base["mode"]
    for attempt in range(1, options.retries + 2):
        job_id = new_job_id()
        spec = dict(base, job_id=job_id)
        log.write("sparktorch: job %d (attempt %d of %d) on Spark Connect: %s%d %s tasks, "
                  "serve in task 0\n" % (job_id, attempt, options.retries + 1,
                                          "" if options.partitions or base["row_args"] else
                                          "at most ", n, mode))
        log.flush()
        try:
            rows = data.mapInArrow(TrainTask(spec), _OUTPUT, barrier=True).collect()
        except Exception as e:  # pylint: disable=broad-except  # Spark's, with a task's message
            text = str(e)
            slots = connect_plan.too_few_slots(text, n, master)
            if slots:
                raise JobFailed("sparktorch job %d failed: %s" % (job_id, slots)) from None
            found = _FAILED.search(text)
            why = found.group(0) if found else (text.strip().splitlines() or [repr(e)])[0]
            if "no sparktorch binary" in why:
                raise BinaryMissing(why) from None
            status = _STATUS.search(why)
            code = None if status is None else int(status.group(1) or -int(status.group(2)))
            if (code in exit_codes.RETRYABLE or (code is not None and code < 0)) and \
                    attempt <= options.retries:
                log.write("sparktorch: job %d failed and runs again with a new job id: %s\n"
                          % (job_id, why))
                continue
            failed = JobFailed("sparktorch job %d failed (attempt %d of %d): %s (rank R is the "
                               "stage's partition R; each task's log has its rank's messages)"
                               % (job_id, attempt, options.retries + 1, why))
            failed.exit_status, failed.why = code, why
            raise failed from None
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
    summaries = read_records([r["line"] for r in rows if r["line"] is not None]).summaries
    served = [r["model"] for r in rows if r["model"] is not None]
    model = verified_model(mode, served[0] if served else None, summaries, job_id)
    return TrainResult(model, summaries, job_id, attempt)


def _find_binary(configured):
    """tasks.find_binary in a Connect task: a relative path (the bundle that
    connect.ship_bundle added as an archive artifact) is looked for in the session's files
    directory too."""
    from pyspark import SparkFiles  # pylint: disable=import-outside-toplevel
    return find_binary(configured, SparkFiles.getRootDirectory())


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class TrainTask:
    """One task of the stage: its rank of the job (and task 0's serve)."""

    def __init__(self, spec):
        self.spec = spec

    def __call__(self, batches):
        import pyarrow as pa  # pylint: disable=import-outside-toplevel
        from pyspark import BarrierTaskContext  # pylint: disable=import-outside-toplevel
        context = BarrierTaskContext.get()
        rank = context.partitionId()
        world = len(context.getTaskInfos())  # the stage's tasks: the job's ranks
        work = tempfile.mkdtemp(prefix="sparktorch-task-")
        serve = None
        try:
            # The job's secret is made here, in task 0, and reaches the others through the
            # barrier's allGather (the driver's memory): never in the plan the client sends,
            # which the Connect server logs and the Spark UI shows.
            secret = os.urandom(16).hex() if rank == 0 else ""
            serve, shared = self._serve(context, rank, world, work, secret)
            gathered = context.allGather(shared)[0]
            if gathered.startswith("!"):  # every task says why task 0's serve did not start
                raise RuntimeError(gathered[1:])
            address, secret = gathered.split(" ", 1)
            lines = self._rank(rank, world, address, secret, batches, work, task_gpus(context))
            out = [(rank, line, None) for line in lines]
            if serve is not None:
                try:
                    out += [(world, line, None) for line in serve.finish(60)]
                except ServeError as e:
                    raise RuntimeError("sparktorch serve failed: %s" % e) from None
                model = serve.model()
                if model is not None:
                    out.append((world, None, model))
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

    def _env(self, secret):
        spec = self.spec
        return dict(os.environ, **spec["env"], SPARKTORCH_SECRET=secret,
                    SPARKTORCH_JOB_ID=str(spec["job_id"]))

    def _serve(self, context, rank, world, work, secret):
        """(serve or None, what task 0 shares: serve's address and the job's `secret`, or '!'
        and why serve did not start)."""
        if rank != 0:
            return None, ""
        spec = self.spec
        hogwild = spec["mode"] == "hogwild"
        args = [str(world) if a == WORLD else a for a in spec["serve_args"]]
        args += self._files(work) if hogwild else ["--job-id", str(spec["job_id"])]
        host = context.getTaskInfos()[0].address.rsplit(":", 1)[0]
        try:
            binary = _find_binary(spec["binary"])
            serve = Serve(binary, spec["global_flags"], args, env=self._env(secret),
                          listen=("0.0.0.0", 0), host=host, wait=hogwild,
                          log=sys.stderr)
        except (BinaryMissing, ServeError) as e:
            return None, "!sparktorch serve failed: %s" % e
        return serve, "%s %s" % (serve.address, secret)

    def _rank(self, rank, world, address, secret, batches, work, gpus=()):
        """Runs this task's `sparktorch train` on its rows; returns its stdout lines. `gpus`:
        the addresses of the GPUs Spark gave the task (`--task-gpus`, which `--device cuda` or
        `auto` trains on)."""
        from . import arrow_rows  # pylint: disable=import-outside-toplevel  # numpy: executors
        spec = self.spec
        batches = iter(batches)
        first = next(batches, None)
        if spec["row_args"]:  # the binary reads its share of the Parquet files
            rows, first, batches = spec["row_args"], None, iter(())
        else:
            label_width = 0
            if first is not None and spec["label"]:
                label_width = arrow_rows.batch_matrix(first, spec["label"]).shape[1]
            rows = ["--format", "float32", "--on-bad-row", spec["on_bad_row"]] + (
                ["--label-col", "0" if label_width <= 1 else "0:%d" % (label_width - 1)]
                if spec["label"] else ["--no-label"])
        where = ["--tracker" if spec["mode"] == "sync" else "--server", address]
        try:
            binary = _find_binary(spec["binary"])
        except BinaryMissing as e:
            raise RuntimeError("sparktorch task failed: %s" % e) from None
        command = ([binary] + spec["global_flags"] +
                   ["train", "--mode", spec["mode"]] + where +
                   ["--rank", str(rank), "--world-size", str(world)] +
                   (["--task-gpus", ",".join(gpus)] if gpus else []) + rows +
                   spec["train_args"] + (self._files(work) if spec["mode"] == "sync" else []))
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=self._env(secret))
        tail, out, failed = [], [], []
        readers = [threading.Thread(target=_lines, args=(process.stdout, out, None)),
                   threading.Thread(target=_lines, args=(process.stderr, tail, sys.stderr))]
        for t in readers:
            t.daemon = True
            t.start()
        try:
            for batch in itertools.chain([first] if first is not None else [], batches):
                matrix = arrow_rows.batch_matrix(batch, spec["label"] + spec["columns"])
                process.stdin.write(arrow_rows.float32_records(matrix))
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

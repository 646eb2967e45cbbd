"""One training job, driver side: its attempts, each with its own serve, secret and job id.

`run_training` starts `sparktorch serve` (the tracker, or the parameter server with the model),
hands `run_stage` the TrainTask every partition runs, and assembles the outcome: the verified
model (from rank 0's records, or from the parameter server), the summaries, the job id. It knows
no Spark: `run_stage(task)` is the Spark layer's barrier stage, or in the tests, threads.

Spark cannot retry a barrier result stage, and a job whose rank was lost cannot take a new rank
in: a lost task (serve exits 75), tasks that never all started (69) or a stage that Spark failed
while serve still waited make a new attempt, with a new secret, a new job id and a new serve,
up to `options.retries` times. A task that failed on
its own (a bad row: serve exits 76) fails the job at once: running it again would fail again.
"""
import os
import secrets
import sys

from . import options as opts
from .records import read_records
from .serve import Serve, last_error
from .tasks import TrainTask

RETRYABLE = (69, 75)  # serve's status when ranks never arrived, or one was lost


class JobFailed(RuntimeError):
    """A training job failed; the message says why, from the driver's serve when it knows."""


class TrainResult:
    """The outcome of a job: `model` (bytes of the .pt), `summaries` (the tasks' summary
    records, then the parameter server's in hogwild mode), `job_id` and `attempts`."""

    def __init__(self, model, summaries, job_id, attempts):
        self.model = model
        self.summaries = summaries
        self.job_id = job_id
        self.attempts = attempts


def new_job_id():
    """A random job id, 1..2147483647, as `serve --job-id` takes it (serve maps it onto Open
    MPI's form itself)."""
    return 1 + secrets.randbelow(2**31 - 1)


def model_files(options):
    """The model (and its train config) for the tasks: ({name: bytes}, the model's name, the
    config's name or None, the config's path on the driver or None)."""
    with open(options.torchObj, "rb") as f:
        files = {"model" + os.path.splitext(options.torchObj)[1]: f.read()}
    names = list(files)
    config = options.trainConfig
    if config is None and options.torchObj.endswith(".pt"):
        beside = options.torchObj[:-3] + ".json"
        config = beside if os.path.exists(beside) else None
    if config:
        with open(config, "rb") as f:
            files["train_config.json"] = f.read()
        names.append("train_config.json")
    return files, names[0], names[1] if len(names) > 1 else None, config


def _assemble(mode, lines, serve):
    """The model and summaries of a finished attempt, verified."""
    records = read_records(line for _, line in lines)
    summaries = records.summaries
    if mode == "hogwild":
        summaries = summaries + read_records(serve.stdout).summaries
        return serve.model(), summaries
    if records.model is None:
        raise JobFailed("rank 0 wrote no model")
    checksums = {s.get("weights_crc32") for s in summaries}
    if len(checksums) != 1:
        raise JobFailed("the ranks ended with different weights (weights_crc32 %s)"
                        % ", ".join(sorted(str(c) for c in checksums)))
    return records.model, summaries


def run_training(options, mode, world_size, run_stage, driver_binary, host=None, label_width=1,
                 feature_names=(), log=None):
    """Runs the job's attempts; returns a TrainResult. `run_stage(task)` runs `task(rank, rows,
    attempt)` for every partition at once and returns the (rank, line) pairs they yielded, in
    rank order; it raises when a task fails. Raises ServeError when serve cannot start (a port
    taken, a bad model) and JobFailed when the job fails."""
    log = sys.stderr if log is None else log
    files, model_name, config_name, config_path = model_files(options)
    verbosity = opts.verbosity_flags(options.verbose)
    threads = options.threads or 1
    for attempt in range(1, options.retries + 2):
        secret = secrets.token_hex(16)
        job_id = new_job_id()
        serve_args = opts.serve_flags(options, mode, world_size)
        task_env = {"SPARKTORCH_SECRET": secret}
        task_args = opts.train_flags(options, mode, threads)
        if mode == "sync":
            serve_args += ["--job-id", str(job_id)]
            task_env["SPARKTORCH_JOB_ID"] = str(job_id)
            task_args += opts.model_flags(options, model_name, config_name)
        else:
            serve_args += opts.model_flags(options, options.torchObj, config_path)
        serve = Serve(driver_binary, verbosity, serve_args,
                      dict(os.environ, SPARKTORCH_SECRET=secret), host,
                      model_output=(mode == "hogwild"), log=log)
        try:
            log.write("sparktorch: job %d (attempt %d of %d): %d %s tasks, serve at %s\n"
                      % (job_id, attempt, options.retries + 1, world_size, mode, serve.address))
            task = TrainTask(options.binary, verbosity, mode, serve.address, world_size,
                             task_args, files if mode == "sync" else {}, task_env, label_width,
                             feature_names, opts.row_flags(label_width, options.onBadRow))
            try:
                lines = run_stage(task)
            except Exception as e:  # pylint: disable=broad-except  # Spark's, or a task's
                # serve knows best what went wrong; still running, it waits for ranks that
                # Spark lost (or killed) before they arrived.
                code = serve.wait(10)
                why = (last_error(serve.tail) if code not in (None, 0) else
                       str(e).strip().splitlines()[-1] if str(e).strip() else repr(e))
                if code in RETRYABLE + (None,) and attempt <= options.retries:
                    log.write("sparktorch: job %d failed and runs again with a new job id: %s\n"
                              % (job_id, why))
                    continue
                raise JobFailed("sparktorch job %d failed (attempt %d of %d): %s (rank R is the "
                                "stage's partition R, stdin:N its Nth row; each task's log "
                                "has its rank's messages)"
                                % (job_id, attempt, options.retries + 1, why)) from e
            serve.finish(60)
            model, summaries = _assemble(mode, lines, serve)
            return TrainResult(model, summaries, job_id, attempt)
        finally:
            serve.close()
    raise AssertionError("unreachable")


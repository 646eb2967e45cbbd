"""One training job, driver side: its attempts, each with its own serve, secret and job id.

`run_training` starts `sparktorch serve` (the tracker, or the parameter server with the model),
hands `run_stage` the command every task runs and its environment, and assembles the outcome:
the verified model (the file serve wrote: the one rank 0 sent it over its tracker link, or the
parameter server's), the summaries, the job id. It knows no Spark: `run_stage(command, env,
tasks)` is the Spark layer's barrier stage, or in the tests, processes in threads.

Spark cannot retry a barrier result stage, and a job whose rank was lost cannot take a new rank
in: a lost task (serve exits PEER_LOST), tasks that never all started (RENDEZVOUS) or a stage
that Spark failed while serve still waited make a new attempt, with a new secret, a new job id
and a new serve, up to `options.retries` times. A task that failed on its own (a bad row: serve
exits PEER_FAILED; a task that exited with bad flags, a bad row or no binary before it reached
serve) fails the job at once: running it again would fail again.

A sync job's rank 0 sends a checkpoint (the model with its optimizer's state, schedule and epoch
count) to serve every `checkpointEvery` epochs; serve keeps the last in a file on the driver
(Checkpoints), and the next attempt resumes from it (`train --resume`), so a lost task costs the
epochs since that checkpoint, not the whole job.
"""
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import types

from . import exit_codes
from . import options as opts
from .records import read_records
from .serve import Serve, last_error
from .tasks import ARCHIVE_HINT, BinaryMissing, process_env, train_command


class JobFailed(RuntimeError):
    """A training job failed; the message says why, from the driver's serve when it knows."""


class TrainResult:
    """The outcome of a job: `model` (bytes of the .pt), `summaries` (the tasks' summary
    records, then the parameter server's in hogwild mode), `job_id`, `attempts`, and `starts`:
    the epoch each attempt started from (1, or the one after the checkpoint it resumed)."""

    def __init__(self, model, summaries, job_id, attempts, starts=None):
        self.model = model
        self.summaries = summaries
        self.job_id = job_id
        self.attempts = attempts
        self.starts = list(starts) if starts else [1] * attempts

    def attempts_text(self):
        """"1 attempt", "2 attempts (from epochs 1 and 6)", "1 attempt (from epoch 6)" (a fit
        that resumed a checkpoint that checkpointDir kept)."""
        if self.attempts == 1:
            return "1 attempt" if self.starts[0] == 1 else "1 attempt (from epoch %d)" % (
                self.starts[0])
        starts = [str(s) for s in self.starts]
        return "%d attempts (from epochs %s and %s)" % (self.attempts, ", ".join(starts[:-1]),
                                                      starts[-1])

    @property
    def rows(self):
        """The rows the job trained on: every task's partition together."""
        return sum(s.get("partition_rows", 0) for s in self.summaries)

    @property
    def final(self):
        """The summary whose metrics are the job's: the parameter server's in hogwild mode
        (the last), rank 0's in sync mode."""
        served = [s for s in self.summaries if "workers_finished" in s]
        return served[-1] if served else (self.summaries[0] if self.summaries else {})


def new_job_id():
    """A random job id, 1..2147483647, as `serve --job-id` takes it (serve maps it onto Open
    MPI's form itself)."""
    return 1 + secrets.randbelow(2**31 - 1)


def model_files(options):
    """The model and its train config on the driver: (path, path or None). The config is
    trainConfig, else MODEL.json beside a MODEL.pt."""
    config = options.trainConfig
    if config is None and options.torchObj.endswith(".pt"):
        beside = options.torchObj[:-3] + ".json"
        config = beside if os.path.exists(beside) else None
    return options.torchObj, config


_STATUS = re.compile(r"(?:Subprocess exited|exited) with status (\d+)")
_HOST = re.compile(r"TID \d+\)?,? \(?([^,\s()]+),? executor")


def task_status(error):
    """The exit status of the task process whose failure `error` reports (a SparktorchError
    carries it; Spark's message says `Subprocess exited with status N`), or None."""
    code = getattr(error, "code", None)
    if isinstance(code, int):
        return code
    found = _STATUS.search(str(error))
    return int(found.group(1)) if found else None


def _where(error, hosts):
    """The host of the failed task: Spark names it for a task that is not a barrier's; else the
    one host of `hosts` (all executors on one machine), else "an executor"."""
    found = _HOST.search(str(error))
    if found:
        return found.group(1)
    return hosts[0] if len(hosts) == 1 else "an executor"


class Checkpoints:
    """Where a sync job keeps its last checkpoint on the driver: `path`, which serve replaces
    with every checkpoint rank 0 sends (`serve --checkpoint`). In `options.checkpointDir` when
    given (kept after a failed fit, for a fit of the same job to resume from; removed once the
    job finishes), else in a temporary directory removed with the job. None of it without
    checkpoints (checkpointEvery=0) or in hogwild mode, whose parameter server keeps the model
    across a lost worker."""

    def __init__(self, options):
        self.every = options.checkpointEvery
        self.kept = options.checkpointDir
        if self.kept:
            os.makedirs(self.kept, exist_ok=True)
            self.folder = self.kept
        else:
            self.folder = tempfile.mkdtemp(prefix="sparktorch-checkpoint-")
        self.path = os.path.join(self.folder, "checkpoint.pt")

    def close(self, finished):
        if not self.kept:
            shutil.rmtree(self.folder, ignore_errors=True)
        elif finished and os.path.exists(self.path):
            os.remove(self.path)


def resume_epoch(driver_binary, checkpoint, args):
    """The epoch after which the checkpoint file `checkpoint` lets the job whose model and
    training flags are `args` resume, as the binary here finds (`train --check-resume`): 0 when
    there is none yet. Raises JobFailed with the binary's one line for a checkpoint of another
    job or a corrupt one."""
    command = [driver_binary, "-q", "train", "--check-resume", "--resume", checkpoint] + list(args)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JobFailed("could not check the checkpoint %s: %s" % (checkpoint, e)) from None
    if done.returncode == 0:
        return int(done.stdout.decode().strip() or 0)
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    why = lines[-1].replace("sparktorch: error: ", "", 1) if lines else exit_codes.describe(
        done.returncode)
    raise JobFailed("the job cannot resume from its checkpoint: %s" % why)


def verified_model(mode, model, summaries, job_id):
    """`model`, the bytes of the model serve wrote (the parameter server's in hogwild mode, the
    one rank 0 sent in sync mode), once the summaries show that every rank ended with the same
    weights; JobFailed when there is none or they do not agree."""
    if model is None:
        missing = ("the parameter server wrote no model" if mode == "hogwild" else
                   "rank 0 sent the driver's serve no trained model (rank 0's task log says why)")
        raise JobFailed("sparktorch job %d: %s" % (job_id, missing))
    if mode == "sync":
        checksums = {s.get("weights_crc32") for s in summaries}
        if len(checksums) != 1:
            raise JobFailed("the ranks ended with different weights (weights_crc32 %s)"
                            % ", ".join(sorted(str(c) for c in checksums)))
    return model


def _assemble(mode, lines, serve, job_id):
    """The model and summaries of a finished attempt, verified."""
    summaries = read_records(lines).summaries
    if mode == "hogwild":
        summaries += read_records(serve.stdout).summaries
    return verified_model(mode, serve.model(), summaries, job_id), summaries


def _finished_without(mode, options, code, serve):
    """The parameter server's summaries when it finished a hogwild job without a barrier
    (exit 0, some worker finished) although Spark failed the stage: a task retried after the
    server ended finds no server and fails, and the job it would have joined is complete.
    Else None."""
    if mode != "hogwild" or options.useBarrier or code != 0:
        return None
    summaries = read_records(serve.stdout).summaries
    if not any(s.get("workers_finished") for s in summaries):
        return None
    return summaries


def run_training(options, mode, world_size, run_stage, driver_binary, candidates, task_model,
                 task_config=None, has_label=True, host=None, listen="0.0.0.0", executor_hosts=None,
                 log=None, row_args=None, ship=None, slots=None):
    """Runs the job's attempts; returns a TrainResult.

    `run_stage(command, env, world_size)` runs `command` (a list) with `env` added to its
    environment in `world_size` tasks at once, each fed its partition's rows in the `vector` format with its partition
    id before the first row (rows.with_partition_prefix), or only the id when `row_args` (the
    tasks' row flags, options.parquet_row_flags) name files they read themselves, and returns
    every line the tasks
    wrote, in partition order; it raises when a task fails. `candidates` are where the tasks
    look for the binary (tasks.binary_candidates); `task_model` and `task_config` the model
    and its config as the tasks see them (sync mode: every task loads the model), while serve
    on the driver uses `options.torchObj`. `executor_hosts()`, when given, lists the hosts the
    tasks may run on (to say where a failed barrier task ran). serve listens on `listen` (an
    address of this machine, or 0.0.0.0) and tasks reach it at `host`. `ship(path)` makes a file
    on the driver (a checkpoint to resume from) reach the tasks and returns its path there
    (default: the same path). `slots()`, when given, is the number of tasks a barrier stage can
    run now (after a while for lost executors to come back): a retry that finds fewer than the
    job's tasks goes on with that many when `options.minPartitions` allows, the rows re-split
    among them, and fails in one line otherwise. Raises ServeError when
    serve cannot start (a port taken, a hogwild model it cannot load), BinaryMissing when a task
    finds no binary, and JobFailed when the job fails."""
    log = sys.stderr if log is None else log
    ship = ship or (lambda path: path)
    checkpoints = Checkpoints(options) if mode == "sync" and options.checkpointEvery > 0 else None
    job = types.SimpleNamespace(
        options=options, mode=mode, world_size=world_size, run_stage=run_stage,
        driver_binary=driver_binary, candidates=candidates, task_model=task_model,
        task_config=task_config, has_label=has_label, host=host, listen=listen,
        executor_hosts=executor_hosts, log=log, row_args=row_args, ship=ship, slots=slots,
        checkpoints=checkpoints)
    try:
        return _attempts(job)
    finally:
        if checkpoints is not None:
            checkpoints.close(finished=sys.exc_info()[0] is None)


def retry_tasks(world_size, options, slots, log, job_id):
    """The tasks of a retry of a job that ran `world_size`: as many, or when `slots()` finds
    fewer free now, that many if options.minPartitions allows it (logged); else JobFailed."""
    if slots is None:
        return world_size
    free = slots()
    if free >= world_size:
        return world_size
    least = options.minPartitions
    now = "%d slot%s" % (free, "" if free == 1 else "s")
    if least is not None and free >= least:
        log.write("sparktorch: job %d: a barrier stage can get %s now, the job had %d tasks: "
                  "it runs again with %d (minPartitions=%d), the rows re-split among them\n"
                  % (job_id, now, world_size, free, least))
        return free
    raise JobFailed("sparktorch job %d cannot run again: it had %d tasks and a barrier stage "
                    "can get %s now (an executor lost for good?); %s"
                    % (job_id, world_size, now,
                       "set minPartitions=%d to let it go on with fewer tasks" % max(free, 1)
                       if least is None else "minPartitions=%d allows no fewer" % least))


def _attempts(job):
    """run_training's attempts (`job`: its arguments), each resuming from the checkpoint the
    one before it left (job.checkpoints, a Checkpoints or None), each with the tasks it can get
    (retry_tasks)."""
    options, mode, world_size = job.options, job.mode, job.world_size
    candidates, checkpoints, log = job.candidates, job.checkpoints, job.log
    host, listen, executor_hosts = job.host, job.listen, job.executor_hosts
    verbosity = opts.verbosity_flags(options.verbose)
    threads = options.threads or 1
    model_path, config_path = model_files(options)
    starts = []
    for attempt in range(1, options.retries + 2):
        secret = secrets.token_hex(16)
        job_id = new_job_id()
        serve_args = opts.serve_flags(options, mode, world_size)
        task_env = dict(process_env(threads, candidates), SPARKTORCH_SECRET=secret)
        task_args = ((job.row_args or opts.row_flags(job.has_label, options.onBadRow)) +
                     opts.train_flags(options, mode, threads))
        start = 1
        if mode == "sync":
            serve_args += ["--job-id", str(job_id)]
            task_env["SPARKTORCH_JOB_ID"] = str(job_id)
            task_args += opts.model_flags(options, job.task_model, job.task_config)
            if checkpoints is not None:
                serve_args += ["--checkpoint", checkpoints.path]
                task_args += ["--checkpoint-every", str(checkpoints.every)]
                if os.path.exists(checkpoints.path):
                    done = resume_epoch(job.driver_binary, checkpoints.path,
                                        opts.model_flags(options, model_path, config_path) +
                                        opts.train_flags(options, mode, threads))
                    if done:
                        task_args += ["--resume", job.ship(checkpoints.path)]
                        start = done + 1
        else:
            serve_args += opts.model_flags(options, model_path, config_path)
        # serve takes OMP_NUM_THREADS's threads, else one; OpenBLAS starts with one unless the
        # driver's environment says otherwise.
        serve_env = dict(process_env(1))
        serve_env.update(os.environ)
        serve_env["SPARKTORCH_SECRET"] = secret
        # A tracker's tasks may start before it accepts (they wait for it); a parameter server
        # must first show that it could load the model.
        serve = Serve(job.driver_binary, verbosity, serve_args, env=serve_env,
                      listen=(listen, options.port), host=host,
                      wait=(mode == "hogwild"), log=log)
        try:
            starts.append(start)
            log.write("sparktorch: job %d (attempt %d of %d): %d %s tasks, serve at %s%s\n"
                      % (job_id, attempt, options.retries + 1, world_size, mode, serve.address,
                         "" if start == 1 else ", resuming at epoch %d from the checkpoint"
                         % start))
            log.flush()
            command = train_command(candidates, verbosity, mode=mode, address=serve.address,
                                    world_size=world_size, args=task_args)
            try:
                lines = job.run_stage(command, task_env, world_size)
            except Exception as e:  # pylint: disable=broad-except  # Spark's, or a task's
                status = task_status(e)
                if status == exit_codes.NOT_FOUND:
                    raise BinaryMissing("no sparktorch binary on %s: tried %s (%s)"
                                        % (_where(e, executor_hosts() if executor_hosts else []),
                                           ", ".join(candidates), ARCHIVE_HINT)) from None
                # serve knows best what went wrong; still running, it waits for ranks that
                # Spark lost (or killed) before they arrived.
                code = serve.wait(10)
                finished = _finished_without(mode, options, code, serve)
                if finished is not None:
                    failure = (exit_codes.describe(status) if status is not None else
                               (str(e).strip().splitlines() or [repr(e)])[-1])
                    log.write("sparktorch: job %d: the parameter server finished the job; a "
                              "task that came after it failed (%s), and its rows were not "
                              "trained, as a lost worker's\n" % (job_id, failure))
                    return TrainResult(serve.model(), finished, job_id, attempt, starts)
                if code not in (None, 0):
                    why = last_error(serve.tail)
                elif status is not None:
                    why = ("a task's sparktorch train ended with %s before it reached the "
                           "driver's serve; its message is in the task's log (the executor's "
                           "stderr)" % exit_codes.describe(status))
                else:
                    text = str(e).strip()
                    why = text.splitlines()[-1] if text else repr(e)
                retry = (code in exit_codes.RETRYABLE or code is None) and \
                    status not in exit_codes.DETERMINISTIC
                if retry and attempt <= options.retries:
                    kept = checkpoints is not None and os.path.exists(checkpoints.path)
                    log.write("sparktorch: job %d failed and runs again with a new job id%s: %s\n"
                              % (job_id, ", from its last checkpoint" if kept else "", why))
                    world_size = retry_tasks(world_size, options, job.slots, log, job_id)
                    continue
                where = ("stdin:N its Nth row" if job.row_args is None else
                         "it read its share of the Parquet files itself")
                raise JobFailed("sparktorch job %d failed (attempt %d of %d): %s (rank R is the "
                                "stage's partition R, %s; each task's log has its rank's "
                                "messages)" % (job_id, attempt, options.retries + 1, why,
                                               where)) from e
            serve.finish(60)
            model, summaries = _assemble(mode, lines, serve, job_id)
            return TrainResult(model, summaries, job_id, attempt, starts)
        finally:
            serve.close()
    raise AssertionError("unreachable")

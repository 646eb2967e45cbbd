"""A training job as the driver runs it (sparktorch_spark.job), without Spark: serve on the
driver, the tasks' command run by tests/spark/stage.py in threads on their rows, the real
binary; then predictions with the trained model through PredictTask. Environment: SPARKTORCH,
REPO, DATA."""
import io
import os
import re
import socket
import tempfile
import unittest
from unittest import mock

from stage import REPO, KillAfterCheckpoint, Stage, csv_rows, manifest, split, vector_row

from sparktorch_spark import exit_codes  # noqa: E402
from sparktorch_spark import job  # noqa: E402
from sparktorch_spark.job import JobFailed, run_training  # noqa: E402
from sparktorch_spark.options import TrainOptions  # noqa: E402
from sparktorch_spark.serve import ServeError  # noqa: E402
from sparktorch_spark.tasks import BinaryMissing, PredictTask, predict_command  # noqa: E402

SPARKTORCH = os.environ["SPARKTORCH"]
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")


def options(**given):
    base = dict(torchObj=SPEC, iters=1, binary=SPARKTORCH, timeout=60.0)
    base.update(given)
    return TrainOptions(**base)


def train(stage, world_size, log=None, candidates=(SPARKTORCH,), executor_hosts=None, slots=None,
          **given):
    o = options(**given)
    return run_training(o, o.check(), world_size, stage, SPARKTORCH, candidates=candidates,
                        task_model=SPEC, host="127.0.0.1", executor_hosts=executor_hosts,
                        log=log or io.StringIO(), slots=slots)


def accuracy(model, rows):
    with tempfile.NamedTemporaryFile(suffix=".pt") as f:
        f.write(model)
        f.flush()
        task = PredictTask(predict_command([SPARKTORCH], [], model_path=f.name,
                                           vector_out=False), vector_out=False)
        out = list(task((row + (vector_row(row[1:], label=False),) for row in rows),
                        log=io.StringIO()))
    return sum(1 for r in out if r[-1] == r[0]) / len(rows), out


class TrainJobTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.train_rows = csv_rows("train12k.csv", 6000)
        cls.test_rows = csv_rows("test2k.csv", 2000)

    def test_sync_job_returns_a_verified_model_that_predicts(self):
        log = io.StringIO()
        result = train(Stage(split(self.train_rows, 2)), 2, log=log)
        self.assertEqual(result.model[:2], b"PK")
        self.assertEqual(result.attempts, 1)
        self.assertEqual([s["rank"] for s in result.summaries], [0, 1])
        self.assertEqual(result.summaries[0]["rows"], 6000)
        self.assertEqual(len({s["weights_crc32"] for s in result.summaries}), 1)
        self.assertIn("sparktorch: job %d (attempt 1 of 2): 2 sync tasks, serve at 127.0.0.1:"
                      % result.job_id, log.getvalue())
        acc, out = accuracy(result.model, self.test_rows)
        self.assertGreater(acc, 0.72)  # one epoch of 6,000 rows: 0.77-0.79 measured
        self.assertEqual([r[:-1] for r in out], self.test_rows)  # rows in order, each answered

    def test_hogwild_job_takes_the_model_from_the_parameter_server(self):
        result = train(Stage(split(self.train_rows, 2)), 2, mode="hogwild", acquireLock=True)
        server = result.summaries[-1]
        self.assertEqual(sorted(server["workers_finished"]), [0, 1])
        self.assertEqual([s["mode"] for s in result.summaries[:2]], ["hogwild", "hogwild"])
        acc, _ = accuracy(result.model, self.test_rows)
        self.assertGreater(acc, 0.68)

    def test_a_task_failing_after_the_parameter_server_finished_leaves_the_model(self):
        # Without a barrier, a worker that Spark retries after the server ended finds no server
        # (exit 69) and Spark fails the stage; the job itself had finished.
        stage = Stage(split(self.train_rows, 2))

        def late_failure(command, env, tasks):
            stage(command, env, tasks)
            raise RuntimeError("org.apache.spark.SparkException: Job aborted due to stage "
                               "failure: Task 0 in stage 4.0 failed 1 times: java.lang."
                               "IllegalStateException: Subprocess exited with status 69.")

        log = io.StringIO()
        result = train(late_failure, 2, log=log, mode="hogwild", useBarrier=False)
        self.assertEqual(stage.attempts, 1)
        self.assertEqual(sorted(result.final["workers_finished"]), [0, 1])
        # The model trained (chance is 0.1). Hogwild without a lock depends on how the two
        # workers interleave: 0.75-0.78 measured alone, 0.67-0.68 while ctest -j2 runs another
        # test beside it, when one worker gets far more of the CPU than the other.
        self.assertGreater(accuracy(result.model, self.test_rows)[0], 0.6)
        self.assertIn("sparktorch: job %d: the parameter server finished the job; a task that "
                      "came after it failed (exit status 69 (%s)), and its rows were not "
                      "trained, as a lost worker's\n"
                      % (result.job_id, exit_codes.MEANING[69]), log.getvalue())
        # With a barrier the stage's failure is the job's: it runs again.
        stage = Stage(split(self.train_rows, 2))
        with self.assertRaises(JobFailed):
            train(late_failure, 2, mode="hogwild", retries=0)

    def test_a_lost_task_runs_the_job_again_with_a_new_job_id(self):
        def kill_rank_1_once(rank, attempt):
            return RuntimeError("executor lost") if (rank, attempt) == (1, 0) else None

        log = io.StringIO()
        stage = Stage(split(self.train_rows[:2000], 2), fail=kill_rank_1_once)
        result = train(stage, 2, log=log, timeout=10.0)
        self.assertEqual((result.attempts, stage.attempts), (2, 2))
        ids = re.findall(r"sparktorch: job (\d+) \(attempt", log.getvalue())
        self.assertEqual(len(ids), 2)
        self.assertNotEqual(ids[0], ids[1])
        self.assertEqual(ids[1], str(result.job_id))
        # rank 1 died before it reached the tracker: rank 0 and the tracker gave up on it
        self.assertRegex(log.getvalue(), r"job %s failed and runs again with a new job id: "
                         r"sparktorch: error: rank 1 never arrived within 10 s \(1 of 2 did\)"
                         % ids[0])

    def test_a_lost_task_resumes_the_job_from_rank_0s_last_checkpoint(self):
        rows = split(self.train_rows, 2)
        whole = train(Stage(rows), 2, iters=8, seed=11)
        folder = tempfile.mkdtemp()
        killer = KillAfterCheckpoint(SPARKTORCH, os.path.join(folder, "checkpoint.pt"), epoch=3)
        log = io.StringIO()
        try:
            result = train(Stage(rows), 2, log=log, iters=8, seed=11, checkpointDir=folder,
                           timeout=20.0)
        finally:
            killer.stop()
        after = killer.killed_after
        self.assertIsNotNone(after, "no rank was killed: %s" % log.getvalue())
        self.assertEqual((result.attempts, result.starts), (2, [1, after + 1]), log.getvalue())
        self.assertRegex(log.getvalue(), r"failed and runs again with a new job id, from its last "
                         r"checkpoint: .*rank \d+ on \S+ was lost")
        self.assertIn("(attempt 2 of 2): 2 sync tasks, serve at 127.0.0.1:", log.getvalue())
        self.assertIn(", resuming at epoch %d from the checkpoint" % (after + 1), log.getvalue())
        self.assertEqual(result.attempts_text(), "2 attempts (from epochs 1 and %d)" % (after + 1))
        self.assertEqual([s["resumed_after_epoch"] for s in result.summaries], [after, after])
        trained = manifest(result.model)
        self.assertEqual(trained["training"]["epochs_run"], 8)
        self.assertEqual([e["epoch"] for e in trained["history"]], list(range(1, 9)))
        self.assertFalse(os.path.exists(os.path.join(folder, "checkpoint.pt")),
                         "a finished job removes its checkpoint")
        resumed, _ = accuracy(result.model, self.test_rows)
        uninterrupted, _ = accuracy(whole.model, self.test_rows)
        self.assertLess(abs(resumed - uninterrupted), 0.01, (resumed, uninterrupted))

    def test_a_checkpoint_of_another_job_or_a_corrupt_one_is_refused_in_one_line(self):
        rows = split(self.train_rows[:2000], 2)
        folder = tempfile.mkdtemp()
        killer = KillAfterCheckpoint(SPARKTORCH, os.path.join(folder, "checkpoint.pt"), epoch=1)
        try:
            with self.assertRaises(JobFailed):
                train(Stage(rows), 2, iters=20, seed=11, checkpointDir=folder, timeout=20.0,
                      retries=0)
        finally:
            killer.stop()
        self.assertIsNotNone(killer.killed_after)
        self.assertTrue(os.path.exists(os.path.join(folder, "checkpoint.pt")),
                        "a failed job leaves its checkpoint in checkpointDir")
        stage = Stage(rows)
        with self.assertRaises(JobFailed) as caught:
            train(stage, 2, iters=20, seed=12, checkpointDir=folder)
        self.assertRegex(str(caught.exception),
                         r"^the job cannot resume from its checkpoint: --resume \S+checkpoint.pt: "
                         r"a checkpoint of another job \(job key [0-9a-f]{12}, this job's "
                         r"[0-9a-f]{12}\): another model, training config or training settings; "
                         r"remove it or resume into another file$")
        self.assertEqual(stage.attempts, 0, "refused before any task ran")
        with open(os.path.join(folder, "checkpoint.pt"), "rb") as f:
            good = f.read()
        with open(os.path.join(folder, "checkpoint.pt"), "r+b") as f:
            f.truncate(3000)
        with self.assertRaises(JobFailed) as caught:
            train(stage, 2, iters=20, seed=11, checkpointDir=folder)
        self.assertRegex(str(caught.exception),
                         r"^the job cannot resume from its checkpoint: --resume \S+checkpoint.pt: "
                         r"not a checkpoint sparktorch can read \(a corrupt or partial file\?\): "
                         r"[^\n]+$")
        # The same job, started again (the driver died): it resumes in its first attempt.
        with open(os.path.join(folder, "checkpoint.pt"), "wb") as f:
            f.write(good)
        log = io.StringIO()
        result = train(Stage(rows), 2, log=log, iters=20, seed=11, checkpointDir=folder)
        after = manifest(good)["training"]["epochs_run"]
        self.assertEqual((result.attempts, result.starts), (1, [after + 1]), log.getvalue())
        self.assertEqual(result.attempts_text(), "1 attempt (from epoch %d)" % (after + 1))
        self.assertEqual(manifest(result.model)["training"]["epochs_run"], 20)
        self.assertFalse(os.path.exists(os.path.join(folder, "checkpoint.pt")))

    def test_a_retry_with_fewer_slots_goes_on_with_fewer_tasks_when_minpartitions_allows(self):
        def kill_rank_1_once(rank, attempt):
            return RuntimeError("executor lost") if (rank, attempt) == (1, 0) else None

        log = io.StringIO()
        stage = Stage(split(self.train_rows[:2000], 2), fail=kill_rank_1_once)
        result = train(stage, 2, log=log, timeout=10.0, slots=lambda: 1, minPartitions=1)
        self.assertEqual(result.attempts, 2)
        self.assertRegex(log.getvalue(), r"sparktorch: job \d+: a barrier stage can get 1 slot "
                         r"now, the job had 2 tasks: it runs again with 1 \(minPartitions=1\), "
                         r"the rows re-split among them\n")
        self.assertIn("(attempt 2 of 2): 1 sync tasks", log.getvalue())
        self.assertEqual([(s["rank"], s["world_size"], s["rows"]) for s in result.summaries],
                         [(0, 1, 2000)])

        stage = Stage(split(self.train_rows[:2000], 2), fail=kill_rank_1_once)
        with self.assertRaises(JobFailed) as caught:
            train(stage, 2, timeout=10.0, slots=lambda: 1)
        self.assertRegex(str(caught.exception), r"^sparktorch job \d+ cannot run again: it had 2 "
                         r"tasks and a barrier stage can get 1 slot now \(an executor lost for "
                         r"good\?\); set minPartitions=1 to let it go on with fewer tasks$")
        self.assertEqual(stage.attempts, 1)
        stage = Stage(split(self.train_rows[:2000], 2), fail=kill_rank_1_once)
        with self.assertRaises(JobFailed) as caught:
            train(stage, 2, timeout=10.0, slots=lambda: 1, minPartitions=2)
        self.assertRegex(str(caught.exception), r"can get 1 slot now \(an executor lost for "
                         r"good\?\); minPartitions=2 allows no fewer$")

    def test_a_task_that_fails_on_its_rows_fails_the_job_without_a_retry(self):
        part = split(self.train_rows[:2000], 2)
        part[1][5] = (42.0,) + part[1][5][1:]  # class 42 of a 10-class model
        stage = Stage(part)
        with self.assertRaises(JobFailed) as caught:
            train(stage, 2)
        self.assertEqual(stage.attempts, 1)
        self.assertRegex(str(caught.exception), r"^sparktorch job \d+ failed \(attempt 1 of 2\): "
                         r"sparktorch: error: rank 1 failed: stdin:6: label 42 is not a class index 0..9")
        self.assertIn("(rank R is the stage's partition R, stdin:N its Nth row; each task's log "
                      "has its rank's messages)", str(caught.exception))

    def test_the_tasks_take_the_secret_from_their_environment_not_their_command(self):
        stage = Stage(split(self.train_rows[:600], 2))
        train(stage, 2)
        command = stage.commands[0]
        self.assertEqual(command[:2], ["/bin/sh", "-c"])  # the launcher finds the binary
        binary_args = command[command.index("--") + 1:]
        self.assertEqual(binary_args[:8], ["train", "--mode", "sync", "--tracker", binary_args[4],
                                           "--rank-from-stdin", "--world-size", "2"])
        self.assertFalse([arg for arg in command if re.fullmatch("[0-9a-f]{32}", arg)])

    def test_openblas_starts_with_the_threads_each_process_computes_with(self):
        serve_envs = []

        class RecordingServe(job.Serve):
            def __init__(self, *args, **kwargs):
                serve_envs.append(kwargs["env"])
                super().__init__(*args, **kwargs)

        with mock.patch.object(job, "Serve", RecordingServe), \
                mock.patch.dict(os.environ, clear=False) as environ:
            environ.pop("OPENBLAS_NUM_THREADS", None)
            stage = Stage(split(self.train_rows[:600], 2))
            train(stage, 2, threads=2)
            environ["OPENBLAS_NUM_THREADS"] = "4"  # the driver's own says what serve takes
            train(Stage(split(self.train_rows[:600], 2)), 2, mode="hogwild")
        self.assertEqual(stage.envs[0]["OPENBLAS_NUM_THREADS"], "2")
        self.assertIn("--threads 2 ", " ".join(stage.commands[0]) + " ")
        self.assertEqual([e["OPENBLAS_NUM_THREADS"] for e in serve_envs], ["1", "4"])
        self.assertTrue(all(re.fullmatch("[0-9a-f]{32}", e["SPARKTORCH_SECRET"])
                            for e in serve_envs))

    def test_a_missing_binary_names_the_host_when_every_executor_is_on_one(self):
        # A barrier stage's failure does not name the task's host; one host for all executors
        # (a local-cluster master, a one-machine cluster) is where it ran.
        for hosts, where in ((["node7"], "node7"), (["node7", "node8"], "an executor")):
            stage = Stage(split(self.train_rows[:100], 2))
            with self.assertRaises(BinaryMissing) as caught:
                train(stage, 2, candidates=("/nonexistent/sparktorch",),
                      executor_hosts=lambda hosts=hosts: hosts)
            self.assertTrue(str(caught.exception).startswith(
                "no sparktorch binary on %s: tried /nonexistent/sparktorch (" % where),
                str(caught.exception))

    def test_a_task_without_a_binary_fails_the_job_at_once_naming_where_it_looked(self):
        stage = Stage(split(self.train_rows[:100], 2))
        with self.assertRaises(BinaryMissing) as caught:
            train(stage, 2, candidates=("/nonexistent/sparktorch", "./sparktorch/sparktorch"))
        self.assertEqual(stage.attempts, 1)
        self.assertEqual(str(caught.exception),
                         "no sparktorch binary on an executor: tried /nonexistent/sparktorch, "
                         "./sparktorch/sparktorch (ship the bundle with spark-submit --archives "
                         "sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch, or give its path with "
                         "binary=)")
        self.assertIn("sparktorch: error: no sparktorch binary on %s: tried /nonexistent/"
                      "sparktorch, ./sparktorch/sparktorch" % socket.gethostname(),
                      stage.logs[0].getvalue())

    def test_a_port_in_use_is_reported_before_any_task_starts(self):
        taken = socket.socket()
        taken.bind(("0.0.0.0", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        stage = Stage(split(self.train_rows[:100], 2))
        with self.assertRaises(ServeError) as caught:
            train(stage, 2, port=port)
        taken.close()
        self.assertEqual(stage.attempts, 0)
        self.assertEqual(str(caught.exception), "sparktorch serve cannot listen on 0.0.0.0:%d: "
                         "Address already in use" % port)


if __name__ == "__main__":
    unittest.main(verbosity=2)

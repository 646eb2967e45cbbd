"""sparktorch_spark.options and the command lines of train.py and predict.py (cli), and the
property that matters most: every flag the builders make is one the real binary takes.
Environment: SPARKTORCH, REPO, DATA (see stage.py)."""
import contextlib
import io
import os
import re
import subprocess
import tempfile
import time
import unittest

from stage import REPO, csv_rows, vector_row

from sparktorch_spark import cli  # noqa: E402
from sparktorch_spark import options as opts  # noqa: E402
from sparktorch_spark.options import OptionError, TrainOptions  # noqa: E402
from sparktorch_spark import exit_codes  # noqa: E402
from sparktorch_spark import spark  # noqa: E402
from sparktorch_spark.runner import SparktorchError, pipe_partition  # noqa: E402
from sparktorch_spark.tasks import train_command  # noqa: E402

SPARKTORCH = os.environ["SPARKTORCH"]
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")


class TrainOptionsTest(unittest.TestCase):
    def refusal(self, **given):
        """The message of check()'s OptionError for the options `given` (with a model)."""
        with self.assertRaises(OptionError) as caught:
            TrainOptions(**dict(dict(torchObj=SPEC), **given)).check()
        return str(caught.exception)

    def test_the_native_defaults(self):
        o = TrainOptions()
        self.assertEqual(o.as_dict(), {name: default for name, (default, _, _)
                                       in opts.TRAIN_OPTIONS.items()})
        self.assertEqual((o.mode, o.iters, o.miniBatch, o.validationPct, o.useBarrier,
                          o.acquireLock, o.inputCol, o.labelCol, o.predictionCol, o.timeout,
                          o.retries, o.onBadRow, o.torchObj),
                         ("sync", 10, 64, 0.0, True, False, "features", "label", "predictions",
                          opts.TRAIN_OPTIONS["timeout"][0], 1, "fail", None))
        self.assertIsInstance(o.timeout, float)

    def test_partitions_minus_one_is_the_default_and_steps_per_epoch_a_flag(self):
        self.assertIsNone(TrainOptions(torchObj=SPEC, partitions=-1).partitions)
        flags = opts.train_flags(TrainOptions(torchObj=SPEC, stepsPerEpoch=7), "sync", 1)
        self.assertEqual(flags[flags.index("--steps-per-epoch") + 1], "7")
        self.assertNotIn("--steps-per-epoch", opts.train_flags(TrainOptions(torchObj=SPEC),
                                                               "sync", 1))
        self.assertEqual(self.refusal(stepsPerEpoch=0), "stepsPerEpoch must be at least 1 "
                         "(unset: one pass over the rows), not 0")

    def test_an_unknown_option_is_refused_by_name(self):
        with self.assertRaises(OptionError) as caught:
            TrainOptions(torchObj=SPEC, batchSize=32)
        self.assertEqual(str(caught.exception), "unknown option: batchSize")
        with self.assertRaises(OptionError) as caught:
            TrainOptions(zeta=1, alpha=2)
        self.assertEqual(str(caught.exception), "unknown options: alpha, zeta")

    def test_a_value_of_the_wrong_type_is_refused(self):
        with self.assertRaises(OptionError) as caught:
            TrainOptions(iters="5")
        self.assertEqual(str(caught.exception), "iters must be int, not '5'")
        with self.assertRaises(OptionError) as caught:
            TrainOptions(useBarrier="false")
        self.assertEqual(str(caught.exception), "useBarrier must be bool, not 'false'")
        with self.assertRaises(OptionError) as caught:  # a bool is an int in Python
            TrainOptions(iters=True)
        self.assertEqual(str(caught.exception), "iters must be int, not True")

    def test_an_int_is_taken_for_a_float_option(self):
        o = TrainOptions(validationPct=0, timeout=60, lr=1)
        self.assertEqual((o.validationPct, o.timeout, o.lr), (0.0, 60.0, 1.0))
        self.assertTrue(all(isinstance(v, float) for v in (o.validationPct, o.timeout, o.lr)))
        self.assertEqual(opts.model_flags(o, "m.json", None)[-2:], ["--lr", "1.0"])

    def test_mode_aliases(self):
        for mode, meant in (("sync", "sync"), ("synchronous", "sync"), ("hogwild", "hogwild"),
                            ("async", "hogwild"), ("asynchronous", "hogwild")):
            self.assertEqual(TrainOptions(torchObj=SPEC, mode=mode).check(), meant, mode)

    def test_check_refuses_what_no_job_can_run(self):
        self.assertEqual(self.refusal(mode="parallel"),
                         "mode must be sync (or synchronous) or hogwild, not 'parallel'")
        self.assertEqual(self.refusal(torchObj=None),
                         "torchObj (the model: a JSON spec or a TorchScript .pt) is required")
        self.assertEqual(self.refusal(iters=0), "iters must be at least 1, not 0")
        self.assertEqual(self.refusal(miniBatch=0),
                         "miniBatch must be positive, or -1 for the whole partition")
        self.assertEqual(self.refusal(miniBatch=-2),
                         "miniBatch must be positive, or -1 for the whole partition")
        self.assertEqual(self.refusal(validationPct=1.0),
                         "validationPct must be in [0, 1), not 1")
        self.assertEqual(self.refusal(useBarrier=False),
                         "useBarrier=False: synchronous training needs every task running at "
                         "once, which only a barrier stage guarantees; use mode=hogwild")
        self.assertEqual(self.refusal(acquireLock=True),
                         "acquireLock and pullEvery are hogwild options (mode=hogwild)")
        self.assertEqual(self.refusal(pullEvery=2),
                         "acquireLock and pullEvery are hogwild options (mode=hogwild)")
        self.assertEqual(self.refusal(loss="hinge"),
                         "loss must be one of cross_entropy, nll, mse, l1, smooth_l1, bce, "
                         "bce_with_logits, not 'hinge'")
        self.assertEqual(self.refusal(optimizer="lbfgs"),
                         "optimizer must be one of sgd, adam, adamw, rmsprop, adagrad, "
                         "not 'lbfgs'")
        self.assertEqual(self.refusal(onBadRow="ignore"),
                         "onBadRow must be fail or skip, not 'ignore'")
        self.assertEqual(self.refusal(port=70000), "port must be in 0..65535, not 70000")
        self.assertEqual(self.refusal(lrScaling="square"),
                         "lrScaling must be none, linear or sqrt, not 'square'")
        self.assertEqual(self.refusal(mode="hogwild", lrScaling="linear"),
                         "lrScaling is for synchronous training (mode=sync)")
        self.assertEqual(self.refusal(allreduceDtype="fp8"),
                         "allreduceDtype must be fp32, bf16 or fp16, not 'fp8'")
        self.assertEqual(self.refusal(mode="hogwild", allreduceDtype="bf16"),
                         "allreduceDtype is for synchronous training (mode=sync)")
        self.assertEqual(self.refusal(mode="hogwild", allreduceOverlap=True),
                         "allreduceOverlap is for synchronous training (mode=sync)")
        self.assertEqual(self.refusal(clipGradValue=-1.0),
                         "clipGradValue must be 0 (off) or more, not -1")

    def test_what_sync_refuses_hogwild_takes(self):
        o = TrainOptions(torchObj=SPEC, mode="async", useBarrier=False, acquireLock=True,
                         pullEvery=3, miniBatch=-1, earlyStopPatience=-1)
        self.assertEqual(o.check(), "hogwild")


def help_defaults(command):
    """{flag: its default as `sparktorch COMMAND --help` says it ("default 10")}."""
    text = subprocess.run([SPARKTORCH, command, "--help"], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout
    described, flags = {}, []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("  -") and words:
            flags = [f for f in words[0].split(",") if f.startswith("--")]
            line = " ".join(words[2:])
        for flag in flags:
            described[flag] = described.get(flag, "") + " " + line
    found = {}
    for flag, description in described.items():
        match = re.search(r"default ([^ ),;]+)", description)
        if match and not match.group(1).endswith(":"):
            found[flag] = match.group(1)
    return found


class DefaultsAgreeTest(unittest.TestCase):
    """Each default is written once: the table (options.TRAIN_OPTIONS) for the Spark layer, the
    options structs for the binary (whose help reads them). What repeats them must agree: the
    ML stage's keyword signatures (PySpark's keyword_only needs them spelled out) and the
    binary's flags that the options become."""

    def test_the_ml_stage_signatures_are_the_tables_defaults(self):
        import ast  # pylint: disable=import-outside-toplevel
        with open(os.path.join(REPO, "spark-scripts", "sparktorch_spark", "ml.py")) as f:
            tree = ast.parse(f.read())
        stage = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SparkTorch")
        table = {name: default for name, (default, _, _) in opts.TRAIN_OPTIONS.items()}
        for method in ("__init__", "setParams"):
            fn = next(n for n in stage.body if isinstance(n, ast.FunctionDef) and n.name == method)
            signature = {a.arg: ast.literal_eval(d)
                         for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults)}
            self.assertEqual(signature, table, "SparkTorch.%s's keyword defaults" % method)

    def test_the_binarys_defaults_are_the_tables(self):
        train, serve, predict = (help_defaults(c) for c in ("train", "serve", "predict"))
        table = {name: default for name, (default, _, _) in opts.TRAIN_OPTIONS.items()}
        for option, (helps, flag) in {"iters": (train, "--epochs"),
                                      "miniBatch": (train, "--batch-size"),
                                      "seed": (train, "--seed"),
                                      "validationPct": (train, "--validation-pct"),
                                      "partitionShuffles": (train, "--partition-shuffles"),
                                      "lrScaling": (train, "--lr-scaling"),
                                      "allreduceDtype": (train, "--allreduce-dtype"),
                                      "onBadRow": (train, "--on-bad-row"),
                                      "pullEvery": (serve, "--pull-every")}.items():
            self.assertIn(flag, helps, "%s says no default" % flag)
            binary = helps[flag]
            ours = table[option]
            self.assertEqual(type(ours)(binary) if not isinstance(ours, str) else binary, ours,
                             "%s (default %s) against %s's %s" % (option, ours, flag, binary))
        import inspect  # pylint: disable=import-outside-toplevel
        self.assertEqual(int(predict["--batch-size"]),
                         inspect.signature(spark.predict).parameters["batch_size"].default,
                         "spark.predict's batch_size against predict --batch-size")
        self.assertEqual(train["--epochs"], "10")  # the parse itself, on a known value


class FlagsTest(unittest.TestCase):
    SYNC = dict(torchObj=SPEC, iters=3, miniBatch=-1, validationPct=0.25, earlyStopPatience=2,
                loss="nll", optimizer="sgd", lr=0.05, seed=7, inputShape="784", timeout=1.0,
                verbose=1, lrSchedule="cosine", clipGradNorm=1.0, lrScaling="sqrt",
                stepsPerEpoch=4, allreduceDtype="bf16", allreduceOverlap=True)
    HOGWILD = dict(torchObj=SPEC, mode="hogwild", iters=2, acquireLock=True, pullEvery=2,
                   earlyStopPatience=1, partitionShuffles=2, timeout=1.0, port=0, verbose=-1)

    def test_sync_flags(self):
        o = TrainOptions(**self.SYNC)
        self.assertEqual(opts.train_flags(o, "sync", 2),
                         ["--epochs", "3", "--batch-size", "-1", "--partition-shuffles", "1",
                          "--threads", "2", "--device", "cpu", "--timeout", "1.0",
                          "--steps-per-epoch", "4", "--validation-pct", "0.25",
                          "--clip-grad-norm", "1.0", "--early-stop-patience", "2",
                          "--lr-scaling", "sqrt", "--allreduce-dtype", "bf16",
                          "--allreduce-overlap", "--send-model"])
        self.assertEqual(opts.model_flags(o, "model.json", "train_config.json"),
                         ["--model", "model.json", "--seed", "7", "--train-config",
                          "train_config.json", "--loss", "nll", "--optimizer", "sgd", "--lr",
                          "0.05", "--lr-schedule", "cosine", "--input-shape", "784"])
        self.assertEqual(opts.serve_flags(o, "sync", 3),
                         ["serve", "--mode", "sync", "--world-size", "3", "--timeout", "1.0"])
        self.assertEqual(opts.verbosity_flags(o.verbose), ["-v"])

    def test_hogwild_flags(self):
        o = TrainOptions(**self.HOGWILD)
        # early stopping is the parameter server's; seed is the worker's shuffling and dropout
        self.assertEqual(opts.train_flags(o, "hogwild", 1),
                         ["--epochs", "2", "--batch-size", "64", "--partition-shuffles", "2",
                          "--threads", "1", "--device", "cpu", "--timeout", "1.0",
                          "--seed", "0"])
        self.assertEqual(opts.serve_flags(o, "hogwild", 2),
                         ["serve", "--mode", "hogwild", "--world-size", "2", "--timeout", "1.0",
                          "--lock", "--pull-every", "2",
                          "--early-stop-patience", "1"])
        self.assertEqual(opts.model_flags(o, SPEC, None), ["--model", SPEC, "--seed", "0"])
        self.assertEqual(opts.verbosity_flags(o.verbose), ["-q"])
        self.assertEqual(opts.verbosity_flags(0), [])

    def test_row_memory_and_spill_dir_reach_the_tasks(self):
        o = TrainOptions(**dict(self.HOGWILD, rowMemory="512M", spillDir="/data/spill"))
        self.assertEqual(o.check(), "hogwild")
        self.assertEqual(opts.train_flags(o, "hogwild", 1)[-6:],
                         ["--row-memory", "512M", "--spill-dir", "/data/spill", "--seed", "0"])
        for size in ("0", "1.5G", "2GiB", "4096", "64kB"):
            TrainOptions(**dict(self.SYNC, rowMemory=size)).check()
        with self.assertRaises(OptionError) as e:
            TrainOptions(**dict(self.SYNC, rowMemory="12X")).check()
        self.assertEqual(str(e.exception), "rowMemory must be a size such as 512M or 2G (bytes, "
                         "or a number with K, M, G or T), not '12X'")

    def test_checkpoints_and_fewer_tasks_on_retry_are_checked(self):
        for given, message in (
                (dict(self.SYNC, minPartitions=0), "minPartitions must be at least 1, not 0"),
                (dict(self.SYNC, checkpointEvery=-1),
                 "checkpointEvery must be 0 (none) or more, not -1"),
                (dict(self.HOGWILD, checkpointDir="/tmp/ck"),
                 "checkpointDir is for synchronous training (mode=sync): the parameter server "
                 "keeps the hogwild model across a lost worker")):
            with self.assertRaises(OptionError) as e:
                TrainOptions(**given).check()
            self.assertEqual(str(e.exception), message)
        o = TrainOptions(**dict(self.SYNC, minPartitions=1, checkpointEvery=0))
        self.assertEqual(o.check(), "sync")
        self.assertEqual((o.minPartitions, o.checkpointEvery, o.checkpointDir), (1, 0, None))

    def test_row_flags(self):
        self.assertEqual(opts.row_flags(True), ["--format", "vector", "--on-bad-row", "fail"])
        self.assertEqual(opts.row_flags(True, "skip"),
                         ["--format", "vector", "--on-bad-row", "skip"])
        self.assertEqual(opts.row_flags(False), ["--format", "vector", "--on-bad-row", "fail",
                                                 "--no-label"])

    def test_parquet_row_flags_name_the_columns_and_every_file(self):
        self.assertEqual(opts.parquet_row_flags(["/d/a.parquet", "/d/b c.parquet"], ["x", "y"], "y2",
                                                "skip"),
                         ["--format", "parquet", "--features-field", "x,y", "--label-field", "y2",
                          "--input", "/d/a.parquet", "--input", "/d/b c.parquet",
                          "--on-bad-row", "skip"])
        self.assertEqual(opts.parquet_row_flags(["/a.parquet"], ["features"], None),
                         ["--format", "parquet", "--features-field", "features", "--no-label",
                          "--input", "/a.parquet", "--on-bad-row", "fail"])
        self.assertEqual(opts.parquet_input_flags(["/a.parquet"], ["features"], "label"),
                         ["--format", "parquet", "--features-field", "features", "--label-field",
                          "label", "--input", "/a.parquet"])


class BinaryTakesTheFlagsTest(unittest.TestCase):
    """Each command line as job.run_training builds it, run by the real binary: serve must
    listen, and a task must get as far as reaching its (closed) tracker or server, which
    fails with the rendezvous status and not the usage one."""

    @classmethod
    def setUpClass(cls):
        cls.rows = csv_rows("train2k.csv", 20)

    def serve(self, args):
        """Starts serve with `args` and SPARKTORCH_SECRET; returns (address, None) once it
        listens, or (None, (status, stderr)) when it exits first. Kills it either way."""
        with tempfile.TemporaryDirectory() as tmp:
            port_file = os.path.join(tmp, "address")
            env = dict(os.environ, SPARKTORCH_SECRET="options-test-secret")
            with open(os.path.join(tmp, "stderr"), "w+") as err:
                process = subprocess.Popen([SPARKTORCH] + args + ["--port-file", port_file],
                                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=err, env=env)
                try:
                    deadline = time.monotonic() + 30
                    while time.monotonic() < deadline:
                        if os.path.exists(port_file):
                            with open(port_file) as f:
                                address = f.read()
                            if address.endswith("\n"):
                                self.assertIsNone(process.poll())
                                return address.strip(), None
                        if process.poll() is not None:
                            err.seek(0)
                            return None, (process.returncode, err.read())
                        time.sleep(0.05)
                    self.fail("serve neither listened nor exited within 30 s")
                finally:
                    if process.poll() is None:
                        process.kill()
                    process.wait()

    def test_serve_takes_the_hogwild_flags(self):
        o = TrainOptions(**FlagsTest.HOGWILD)
        args = (opts.verbosity_flags(o.verbose) + opts.serve_flags(o, "hogwild", 2)
                + opts.model_flags(o, o.torchObj, None))
        self.assertIn("--lock", args)
        address, failed = self.serve(args)
        self.assertIsNone(failed)
        self.assertRegex(address, r"^[^:\s]+:\d+$")
        # The check tells a usage error when there is one: hogwild serve takes no job id.
        address, failed = self.serve(args + ["--job-id", "65537"])
        self.assertIsNone(address)
        self.assertEqual(failed[0], exit_codes.USAGE, failed[1])

    def test_serve_takes_the_sync_flags(self):
        o = TrainOptions(**FlagsTest.SYNC)
        args = (opts.verbosity_flags(o.verbose) + opts.serve_flags(o, "sync", 2)
                + ["--job-id", "65537"])  # as run_training adds
        address, failed = self.serve(args)
        self.assertIsNone(failed)
        self.assertRegex(address, r"^[^:\s]+:\d+$")

    def run_task(self, mode, given, address, model_args):
        o = TrainOptions(**given)
        self.assertEqual(o.check(), mode)
        command = train_command([SPARKTORCH], opts.verbosity_flags(o.verbose), mode=mode,
                                address=address, world_size=2,
                                args=(opts.row_flags(True, "skip") +
                                      opts.train_flags(o, mode, 1) + model_args))
        lines = ["0\t" + vector_row(self.rows[0])] + [vector_row(r) for r in self.rows[1:]]
        with self.assertRaises(SparktorchError) as caught:
            list(pipe_partition(lines, command, log=io.StringIO(),
                                env=dict(os.environ, SPARKTORCH_SECRET="options-test-secret")))
        return caught.exception

    def test_a_sync_task_takes_the_sync_flags(self):
        o = TrainOptions(**FlagsTest.SYNC)
        failed = self.run_task("sync", FlagsTest.SYNC, "127.0.0.1:1",
                               opts.model_flags(o, SPEC, None))
        self.assertEqual(failed.code, exit_codes.RENDEZVOUS, failed.stderr_tail)
        self.assertEqual(failed.stderr_tail[-1], "sparktorch: error: cannot reach the tracker "
                         "at 127.0.0.1:1: Connection refused")

    def test_a_task_that_reads_parquet_files_takes_its_rank_alone_on_stdin(self):
        o = TrainOptions(**FlagsTest.SYNC)
        data = os.path.join(REPO, "tests", "formats", "data", "parquet", "numeric_gzip.parquet")
        command = train_command([SPARKTORCH], [], mode="sync", address="127.0.0.1:1",
                                world_size=2,
                                args=(opts.parquet_row_flags([data], ["a", "b"], "label") +
                                      opts.train_flags(o, "sync", 1) +
                                      opts.model_flags(o, SPEC, None)))
        with self.assertRaises(SparktorchError) as caught:
            list(pipe_partition(["1\t"], command, log=io.StringIO(),
                                env=dict(os.environ, SPARKTORCH_SECRET="options-test-secret")))
        self.assertEqual(caught.exception.stderr_tail[-1], "sparktorch: error: cannot reach the "
                         "tracker at 127.0.0.1:1: Connection refused")

    def test_inspect_takes_the_parquet_input_flags(self):
        data = os.path.join(REPO, "tests", "formats", "data", "parquet", "numeric_gzip.parquet")
        done = subprocess.run([SPARKTORCH, "inspect"] +
                              opts.parquet_input_flags([data], ["e", "a"], "label"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        self.assertEqual(done.returncode, exit_codes.OK, done.stderr)
        self.assertIn(b"features per row: 3\n", done.stdout)

    def test_the_driver_finds_files_the_tasks_cannot_read(self):
        parquet = os.path.join(REPO, "tests", "formats", "data", "parquet")
        log = io.StringIO()
        decimals = os.path.join(parquet, "decimals.parquet")
        self.assertEqual(spark.unreadable_parquet(SPARKTORCH, [decimals], ["price"], False, log),
                         decimals + ": features column price holds decimals, which sparktorch "
                         "does not read: cast the column to double before writing it "
                         "(--features-field)")
        # parquet-mr's v2 writer's DELTA_BINARY_PACKED integers are read (issue 26).
        delta = os.path.join(parquet, "delta_v2.parquet")
        self.assertIsNone(spark.unreadable_parquet(SPARKTORCH, [delta], ["features", "label"],
                                                   True, log))
        readable = os.path.join(parquet, "vectors_snappy.parquet")
        self.assertIsNone(spark.unreadable_parquet(SPARKTORCH, [readable],
                                                   ["features", "label"], True, log))
        # A bad row is not a file the tasks cannot read: the job's failure stands.
        nulls = os.path.join(parquet, "nulls.parquet")
        self.assertIsNone(spark.unreadable_parquet(SPARKTORCH, [nulls], ["x"], False, log))
        self.assertIsNone(spark.unreadable_parquet("/nonexistent/sparktorch", [readable],
                                                   ["features"], False, log))
        self.assertIn("could not check the Parquet files on the driver: ", log.getvalue())

    def test_a_hogwild_task_takes_the_hogwild_flags(self):
        failed = self.run_task("hogwild", FlagsTest.HOGWILD, "127.0.0.1:1", [])
        self.assertEqual(failed.code, exit_codes.RENDEZVOUS, failed.stderr_tail)
        self.assertEqual(failed.stderr_tail[-1], "sparktorch: error: cannot reach the "
                         "parameter server at 127.0.0.1:1: Connection refused")


class CliTest(unittest.TestCase):
    BASE = ["--source", "data.csv", "--output", "model.pt", "--torchObj", SPEC]

    def parse(self, *argv):
        return cli.train_parser().parse_args(self.BASE + list(argv))

    def test_flags_take_sparktorchs_names_and_values(self):
        o = cli.train_options(self.parse("--mode", "hogwild", "--useBarrier", "false",
                                         "--acquireLock", "--inputCols", "a, b,", "--labelCol",
                                         "", "--miniBatch", "-1", "--validationPct", "0.1"))
        self.assertEqual((o.mode, o.useBarrier, o.acquireLock, o.inputCols, o.labelCol,
                          o.miniBatch, o.validationPct),
                         ("hogwild", False, True, ["a", "b"], None, -1, 0.1))
        self.assertEqual((o.iters, o.inputCol, o.timeout),  # defaults
                         (10, "features", opts.TRAIN_OPTIONS["timeout"][0]))

    def test_a_predict_task_that_failed_is_one_line_from_its_exit_status(self):
        spark = ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in "
                 "stage 3.0 failed 1 times, most recent failure: Lost task 0.0 in stage 3.0 "
                 "(TID 5, localhost, executor driver): java.lang.IllegalStateException: "
                 "Subprocess exited with status %d. Command ran: /bin/sh -c ...")
        self.assertEqual(cli.predict_failure(RuntimeError(spark % 3)),
                         "a task's sparktorch predict ended with exit status 3 (a row that "
                         "cannot be read); its message, with the row and column it names, is "
                         "in the task's log (the executor's stderr; on a local master, this "
                         "driver's)")
        self.assertEqual(cli.predict_failure(RuntimeError(spark % 127)),
                         "a task found no sparktorch binary on its executor (exit status 127); "
                         "the task's log names its host and the paths it tried")
        self.assertIsNone(cli.predict_failure(RuntimeError("Table or view not found: t")))

    def test_a_predict_task_that_failed_through_the_jar_is_one_line_with_its_message(self):
        spark = ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in "
                 "stage 3.0 failed 1 times, most recent failure: Lost task 0.0 in stage 3.0 "
                 "(TID 5, localhost, executor driver): java.lang.IllegalStateException: "
                 "sparktorch predict (its stdin: this partition's rows, line or record N the "
                 "Nth) exited with status %d:\n2026-11-26 16:00:00.000 sparktorch info: loaded\n"
                 "sparktorch: error: %s\n\tat sparktorch.spark.PipeRows$Answers.finish("
                 "PipeRows.java:190)\n")
        self.assertEqual(
            cli.predict_failure(RuntimeError(spark % (3, 'stdin:2:5: expected a number, got '
                                                         '"null"'))),
            "a task's sparktorch predict ended with exit status 3 (a row that cannot be read): "
            'stdin:2:5: expected a number, got "null"')
        self.assertEqual(
            cli.predict_failure(RuntimeError(spark % (127, "no sparktorch binary on h1: tried "
                                                           "./sparktorch (a hint)"))),
            "a task found no sparktorch binary (exit status 127): no sparktorch binary on h1: "
            "tried ./sparktorch (a hint)")

    def test_a_bool_flag_takes_true_or_false(self):
        for text, value in (("true", True), ("ON", True), ("0", False), ("no", False)):
            self.assertIs(self.parse("--useVectorOut", text).useVectorOut, value)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as caught:
            self.parse("--useBarrier", "maybe")
        self.assertEqual(caught.exception.code, 2)
        self.assertIn("argument --useBarrier: expected true or false, not 'maybe'",
                      err.getvalue())

    def test_a_model_that_does_not_exist_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "model.json")
            args = cli.train_parser().parse_args(["--source", "d.csv", "--output", "m.pt",
                                                  "--torchObj", missing])
            with self.assertRaises(OptionError) as caught:
                cli.train_options(args)
        self.assertEqual(str(caught.exception),
                         "torchObj %s: no such file on the driver" % missing)

    def test_train_options_checks_the_combination(self):
        with self.assertRaises(OptionError) as caught:
            cli.train_options(self.parse("--useBarrier", "false"))
        self.assertTrue(str(caught.exception).startswith("useBarrier=False: synchronous"))

    def test_predict_parser(self):
        args = cli.predict_parser().parse_args(["--source", "t.parquet", "--model", "m.pt"])
        self.assertEqual((args.inputCol, args.inputCols, args.useVectorOut, args.probabilities,
                          args.miniBatch, args.onBadRow, args.device, args.predictionCol),
                         ("features", None, False, False, 1024, "fail", "cpu", "predictions"))
        args = cli.predict_parser().parse_args(["--source", "t", "--format", "table", "--model",
                                                "m.pt", "--useVectorOut", "--inputCols", "x,y",
                                                "--onBadRow", "skip", "--labelCol", "label"])
        self.assertEqual((args.format, args.useVectorOut, args.inputCols, args.onBadRow,
                          args.labelCol), ("table", True, ["x", "y"], "skip", "label"))


class MasterSlotsTest(unittest.TestCase):
    """The slots a master URL fixes, which plan_partitions need not wait for."""

    def test_local_masters_fix_their_slots_and_clusters_do_not(self):
        from sparktorch_spark.slots import master_slots  # pylint: disable=import-outside-toplevel
        for master, task_cpus, slots in (("local", 1, 1), ("local[2]", 1, 2), ("local[4, 3]", 1, 4),
                                         ("local[*]", 1, 16), ("local[*]", 4, 4),
                                         ("local-cluster[2,1,1024]", 1, 2),
                                         ("local-cluster[3, 4, 2048]", 2, 6),
                                         ("spark://host7:7077", 1, None), ("yarn", 1, None),
                                         ("k8s://https://host7:6443", 1, None)):
            self.assertEqual(master_slots(master, task_cpus, cpus=16), slots, master)


class ListenHostTest(unittest.TestCase):
    """Where the driver's serve listens: as Spark's driver RPC, on spark.driver.bindAddress or
    the address spark.driver.host names, else every interface."""

    def test_bind_address_wins_then_the_driver_host_address(self):
        from sparktorch_spark.serve import listen_host  # pylint: disable=import-outside-toplevel
        self.assertEqual(listen_host("198.18.0.9", "somewhere"), "198.18.0.9")
        # (an address of this machine that is not loopback: tests/multihost/spark_driver.sh)
        # loopback (it may mean another address on the executors), an address of another
        # machine (NAT) and a name that does not resolve: every interface
        self.assertEqual(listen_host(None, "127.0.0.1"), "0.0.0.0")
        self.assertEqual(listen_host(None, "198.18.255.254"), "0.0.0.0")
        self.assertEqual(listen_host(None, "no-such-host.invalid"), "0.0.0.0")


if __name__ == "__main__":
    unittest.main(verbosity=2)

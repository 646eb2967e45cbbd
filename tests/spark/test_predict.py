"""sparktorch_spark.tasks: PredictTask against the real binary with a model trained once, and
finding the binary on an executor (find_binary, check_binary). Environment: SPARKTORCH, REPO,
DATA (see stage.py)."""
import io
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

from stage import DATA, REPO, csv_rows

from sparktorch_spark import tasks  # noqa: E402
from sparktorch_spark.rows import RowError  # noqa: E402
from sparktorch_spark.runner import SparktorchError  # noqa: E402
from sparktorch_spark.tasks import BinaryMissing, PredictTask, check_binary, find_binary  # noqa

SPARKTORCH = os.environ["SPARKTORCH"]
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")
PIXELS = ["p%d" % i for i in range(784)]
HOST = socket.gethostname()
VECTOR = dict(positions=[1], names=["features"])  # rows (label, vector)
MISSING_HELP = ("(ship the bundle with spark-submit --archives "
                "sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch, or give its path with "
                "binary=)")


def binary_classes(model_path, csv_name):
    """The classes `sparktorch predict` gives for a fixture CSV file read directly."""
    done = subprocess.run([SPARKTORCH, "-q", "predict", "--model", model_path, "--input",
                           os.path.join(DATA, csv_name)], stdout=subprocess.PIPE, check=True)
    return [float(int(line)) for line in done.stdout.decode().splitlines()]


def remove_model_files():
    """Removes the model files PredictTask wrote in this process (they outlive the tasks, as
    they should in a Python worker that Spark reuses)."""
    for path in tasks._model_files.values():  # pylint: disable=protected-access
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def tearDownModule():  # pylint: disable=invalid-name  # unittest's name
    remove_model_files()


class DenseVector:
    """Mirrors the duck type of pyspark.ml.linalg.DenseVector that RowEncoder relies on:
    toArray() gives the values."""

    def __init__(self, values):
        self.values = values

    def toArray(self):  # pylint: disable=invalid-name  # PySpark's name
        return self.values


class Broadcast:
    """What PredictTask uses of a Spark broadcast variable: `.value`."""

    def __init__(self, value):
        self.value = value


class PredictTaskTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-predict-")
        cls.model_path = os.path.join(cls.tmp, "model.pt")
        subprocess.run([SPARKTORCH, "-q", "train", "--model", SPEC, "--epochs", "1", "--input",
                        os.path.join(DATA, "train2k.csv"), "--output", cls.model_path],
                       check=True, stdout=subprocess.DEVNULL)
        with open(cls.model_path, "rb") as f:
            cls.model = f.read()
        cls.rows = csv_rows("test2k.csv", 2000)  # (label, pixel, ...)
        cls.classes = binary_classes(cls.model_path, "test2k.csv")
        # (label, features vector), as a DataFrame with a Spark ML features column gives them
        cls.vectors = [(row[0], DenseVector(list(row[1:]))) for row in cls.rows]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def predict(self, rows, model=None, positions=range(1, 785), names=PIXELS, **given):
        task = PredictTask(SPARKTORCH, [], self.model if model is None else model, positions,
                           names, **given)
        return list(task(iter(rows), log=io.StringIO()))

    def test_each_row_comes_back_in_order_with_the_binarys_class(self):
        out = self.predict(self.rows)
        self.assertEqual(len(out), 2000)
        self.assertEqual([r[:-1] for r in out], self.rows)
        predictions = [r[-1] for r in out]
        self.assertTrue(all(isinstance(p, float) for p in predictions))
        self.assertEqual(set(predictions) - set(float(c) for c in range(10)), set())
        self.assertEqual(predictions, self.classes)
        accuracy = sum(1 for r in out if r[-1] == r[0]) / len(out)
        self.assertGreater(accuracy, 0.6)  # one epoch of 2,000 rows; a real model, not noise

    def test_vector_out_gives_the_outputs_whose_argmax_is_the_class(self):
        out = self.predict(self.vectors[:500], vector_out=True, **VECTOR)
        self.assertEqual(len(out), 500)
        for row, expected in zip(out, self.classes):
            outputs = row[-1]
            self.assertEqual(len(outputs), 10)
            self.assertTrue(all(isinstance(v, float) for v in outputs))
            self.assertEqual(float(outputs.index(max(outputs))), expected)

    def test_probabilities_sum_to_one(self):
        out = self.predict(self.vectors[:500], vector_out=True, probabilities=True,
                           **VECTOR)
        self.assertEqual(len(out), 500)
        for row, expected in zip(out, self.classes):
            p = row[-1]
            self.assertEqual(len(p), 10)
            self.assertAlmostEqual(sum(p), 1.0, delta=1e-4)
            self.assertTrue(all(0.0 <= v <= 1.0 for v in p))
            self.assertEqual(float(p.index(max(p))), expected)
        classes = self.predict(self.vectors[:200], probabilities=True, **VECTOR)  # no vector_out
        self.assertEqual([r[-1] for r in classes], self.classes[:200])

    def test_feature_positions_pick_the_features_out_of_wider_rows(self):
        wide = [("row-%d" % n, row[0]) + row[1:] for n, row in enumerate(self.rows[:300])]
        out = self.predict(wide, positions=range(2, 786))
        self.assertEqual([r[:-1] for r in out], wide)
        self.assertEqual([r[-1] for r in out], self.classes[:300])

    def test_a_bad_row_skipped_gets_none_and_the_others_their_class(self):
        rows = list(self.rows[:50])
        rows[7] = rows[7][:100] + (float("nan"),) + rows[7][101:]
        out = self.predict(rows, on_bad_row="skip")
        self.assertEqual([r[:-1] for r in out], rows)
        self.assertIsNone(out[7][-1])
        self.assertEqual([r[-1] for n, r in enumerate(out) if n != 7],
                         [c for n, c in enumerate(self.classes[:50]) if n != 7])

    def test_a_bad_row_fails_the_partition_by_default_naming_its_line(self):
        rows = list(self.rows[:50])
        rows[7] = rows[7][:100] + (float("nan"),) + rows[7][101:]
        with self.assertRaises(SparktorchError) as caught:
            self.predict(rows)
        self.assertEqual(caught.exception.code, 3)
        self.assertRegex(caught.exception.stderr_tail[-1], r"^sparktorch: error: stdin:8:\d+: "
                         r"expected a finite number, got nan in column 99$")
        # the message says what stdin was: the partition's rows, from which columns
        self.assertTrue(str(caught.exception).startswith(
            "sparktorch predict (its stdin: this partition's rows, line N the Nth; features "
            "from p0, p1, p2, ..., p782, p783 (784)) exited with status 3:\n"), caught.exception)

    def test_a_null_cell_fails_the_partition_naming_its_column(self):
        rows = list(self.rows[:20])
        rows[7] = rows[7][:5] + (None,) + rows[7][6:]
        with self.assertRaises(RowError) as caught:
            self.predict(rows)
        self.assertEqual(str(caught.exception), "column p4 is null")

    def test_the_model_may_be_a_broadcast(self):
        out = self.predict(self.vectors[:300], model=Broadcast(self.model), **VECTOR)
        self.assertEqual([r[-1] for r in out], self.classes[:300])

    def test_the_model_file_is_written_once_per_process(self):
        saved = dict(tasks._model_files)  # pylint: disable=protected-access
        real_write = tasks._write_files  # pylint: disable=protected-access
        written = []

        def counting_write(files):
            written.append(sorted(files))
            return real_write(files)

        tasks._model_files.clear()  # pylint: disable=protected-access
        tasks._write_files = counting_write  # pylint: disable=protected-access
        try:
            first = self.predict(self.vectors[:5], **VECTOR)
            second = self.predict(self.vectors[:5], model=Broadcast(self.model), **VECTOR)
            self.assertEqual(written, [["model.pt"]])
            self.assertEqual(len(tasks._model_files), 1)  # pylint: disable=protected-access
            path = next(iter(tasks._model_files.values()))  # pylint: disable=protected-access
            with open(path, "rb") as f:
                self.assertEqual(f.read(), self.model)
            self.assertEqual(first, second)
            shutil.rmtree(os.path.dirname(path))  # a worker's files may be cleaned under it
            self.predict(self.vectors[:5], **VECTOR)
            self.assertEqual(written, [["model.pt"], ["model.pt"]])
        finally:
            tasks._write_files = real_write  # pylint: disable=protected-access
            remove_model_files()
            tasks._model_files.clear()  # pylint: disable=protected-access
            tasks._model_files.update(saved)  # pylint: disable=protected-access

    def test_a_partition_larger_than_the_pipes_does_not_deadlock(self):
        # Some 50 MB of compact rows in and 12,000 answers out: far more than a pipe holds,
        # so this finishes only when rows are written while answers are read. The features
        # are one vector cell per row, as a Spark ML features column gives them (and quicker
        # to encode than 784 cells).
        with open(os.path.join(DATA, "train12k.csv")) as f:
            rows = [(float(line[:line.index(",")]),
                     DenseVector([float(v) for v in line.split(",")[1:]])) for line in f]
        self.assertEqual(len(rows), 12000)
        result = []
        task = PredictTask(SPARKTORCH, [], self.model, [1], ["features"])

        def run():
            try:
                result.append(list(task(iter(rows), log=io.StringIO())))
            except BaseException as e:  # pylint: disable=broad-except  # raised below
                result.append(e)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(300)
        self.assertFalse(worker.is_alive(), "PredictTask deadlocked on 12,000 rows")
        out = result[0]
        if isinstance(out, BaseException):
            raise out
        self.assertEqual(len(out), 12000)
        self.assertEqual([r[:-1] for r in out], rows)
        self.assertEqual([r[-1] for r in out], binary_classes(self.model_path, "train12k.csv"))


class FindBinaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = os.path.realpath(tempfile.mkdtemp(prefix="test-find-binary-"))
        self.cwd = os.getcwd()

    def tearDown(self):
        os.chdir(self.cwd)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_a_missing_configured_path_names_the_host_and_the_paths_tried(self):
        missing = os.path.join(self.tmp, "bin", "sparktorch")
        with self.assertRaises(BinaryMissing) as caught:
            find_binary(missing)
        self.assertEqual(str(caught.exception), "no sparktorch binary on %s: tried %s %s"
                         % (HOST, missing, MISSING_HELP))
        os.chdir(self.tmp)
        with self.assertRaises(BinaryMissing) as caught:
            find_binary(os.path.join("bin", "sparktorch"))  # relative to the working directory
        self.assertEqual(str(caught.exception), "no sparktorch binary on %s: tried %s %s"
                         % (HOST, missing, MISSING_HELP))
        with self.assertRaises(BinaryMissing) as caught:
            find_binary("sparktorch-not-installed")  # a bare name is also looked up on PATH
        self.assertEqual(str(caught.exception), "no sparktorch binary on %s: tried %s, "
                         "sparktorch-not-installed on PATH %s"
                         % (HOST, os.path.join(self.tmp, "sparktorch-not-installed"),
                            MISSING_HELP))

    def test_the_archives_bundle_in_the_working_directory_is_found(self):
        os.mkdir(os.path.join(self.tmp, "sparktorch"))  # --archives bundle.tar.gz#sparktorch
        bundled = os.path.join(self.tmp, "sparktorch", "sparktorch")
        os.symlink(os.path.abspath(SPARKTORCH), bundled)
        os.chdir(self.tmp)
        self.assertEqual(find_binary(), bundled)
        self.assertEqual(find_binary(None), bundled)
        self.assertEqual(check_binary(), (HOST, None))
        task = PredictTask(None, [], Broadcast(b"not a model"), range(1, 785), PIXELS)
        self.assertEqual(task.command()[0], bundled)

    def test_check_binary_runs_the_binary(self):
        self.assertEqual(check_binary(SPARKTORCH), (HOST, None))
        broken = os.path.join(self.tmp, "sparktorch-broken")
        with open(broken, "w") as f:
            f.write("#!/bin/sh\necho starting >&2\n"
                    "echo 'sparktorch: error: libtorch_cpu.so: cannot open shared object "
                    "file' >&2\nexit 3\n")
        os.chmod(broken, 0o755)
        self.assertEqual(check_binary(broken),
                         (HOST, "%s --version exited with status 3: sparktorch: error: "
                          "libtorch_cpu.so: cannot open shared object file" % broken))
        silent = os.path.join(self.tmp, "sparktorch-silent")
        with open(silent, "w") as f:
            f.write("#!/bin/sh\nexit 3\n")
        os.chmod(silent, 0o755)
        self.assertEqual(check_binary(silent),
                         (HOST, "%s --version exited with status 3: (nothing on stderr)"
                          % silent))
        missing = os.path.join(self.tmp, "nowhere", "sparktorch")
        self.assertEqual(check_binary(missing),
                         (HOST, "no sparktorch binary on %s: tried %s %s"
                          % (HOST, missing, MISSING_HELP)))


if __name__ == "__main__":
    unittest.main(verbosity=2)

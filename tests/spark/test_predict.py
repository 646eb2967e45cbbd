"""sparktorch_spark.tasks: PredictTask and the prediction command against the real binary with
a model trained once, the tasks' launcher, finding the binary (find_binary) and the row
encoder's jar beside it (shipping.find_jar). Environment:
SPARKTORCH, REPO, DATA (see stage.py)."""
import io
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest
from unittest import mock

from stage import DATA, REPO, csv_rows, vector_row

from sparktorch_spark.runner import SparktorchError  # noqa: E402
from sparktorch_spark.shipping import find_jar  # noqa: E402
from sparktorch_spark.tasks import (BinaryMissing, PredictTask, binary_candidates,  # noqa: E402
                                    find_binary, launcher, predict_command, prediction_value,
                                    process_env)

SPARKTORCH = os.environ["SPARKTORCH"]
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")
HOST = socket.gethostname()
MISSING_HELP = ("(ship the bundle with spark-submit --archives "
                "sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch, or give its path with "
                "binary=)")


def binary_classes(model_path, csv_name):
    """The classes `sparktorch predict` gives for a fixture CSV file read directly."""
    done = subprocess.run([SPARKTORCH, "-q", "predict", "--model", model_path, "--input",
                           os.path.join(DATA, csv_name)], stdout=subprocess.PIPE, check=True)
    return [float(int(line)) for line in done.stdout.decode().splitlines()]


def with_text(rows):
    """Rows (label, pixel, ...) with their features' text last, as spark.predict selects them."""
    return [row + (vector_row(row[1:], label=False),) for row in rows]


def with_second_value(row, text):
    """`row` (as with_text gives it) with its second feature's text replaced by `text` (Spark
    writes a NaN as NaN, a null cell as null)."""
    cells = ["%r" % v for v in row[1:-1]]
    return row[:-1] + ("[%s]" % ",".join(cells[:1] + [text] + cells[2:]),)


class PredictTaskTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test-predict-")
        cls.model_path = os.path.join(cls.tmp, "model.pt")
        subprocess.run([SPARKTORCH, "-q", "train", "--model", SPEC, "--epochs", "1", "--input",
                        os.path.join(DATA, "train2k.csv"), "--output", cls.model_path],
                       check=True, stdout=subprocess.DEVNULL)
        cls.rows = csv_rows("test2k.csv", 2000)  # (label, pixel, ...)
        cls.classes = binary_classes(cls.model_path, "test2k.csv")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def predict(self, rows, vector_out=False, probabilities=False, on_bad_row="fail"):
        """PredictTask over `rows`, each with its text last (with_text)."""
        command = predict_command([SPARKTORCH], [], model_path=self.model_path,
                                  vector_out=vector_out or probabilities,
                                  probabilities=probabilities, on_bad_row=on_bad_row)
        task = PredictTask(command, vector_out=vector_out)
        return list(task(iter(rows), log=io.StringIO()))

    def test_each_row_comes_back_in_order_with_the_binarys_class(self):
        out = self.predict(with_text(self.rows))
        self.assertEqual(len(out), 2000)
        self.assertEqual([r[:-1] for r in out], self.rows)
        predictions = [r[-1] for r in out]
        self.assertTrue(all(isinstance(p, float) for p in predictions))
        self.assertEqual(predictions, self.classes)
        accuracy = sum(1 for r in out if r[-1] == r[0]) / len(out)
        self.assertGreater(accuracy, 0.6)  # one epoch of 2,000 rows; a real model, not noise

    def test_vector_out_gives_the_outputs_whose_argmax_is_the_class(self):
        out = self.predict(with_text(self.rows[:500]), vector_out=True)
        self.assertEqual(len(out), 500)
        for row, expected in zip(out, self.classes):
            outputs = row[-1]
            self.assertEqual(len(outputs), 10)
            self.assertTrue(all(isinstance(v, float) for v in outputs))
            self.assertEqual(float(outputs.index(max(outputs))), expected)

    def test_probabilities_sum_to_one(self):
        out = self.predict(with_text(self.rows[:500]), vector_out=True, probabilities=True)
        self.assertEqual(len(out), 500)
        for row, expected in zip(out, self.classes):
            p = row[-1]
            self.assertEqual(len(p), 10)
            self.assertAlmostEqual(sum(p), 1.0, delta=1e-4)
            self.assertTrue(all(0.0 <= v <= 1.0 for v in p))
            self.assertEqual(float(p.index(max(p))), expected)
        classes = self.predict(with_text(self.rows[:200]), probabilities=True)  # no vector_out
        self.assertEqual([r[-1] for r in classes], self.classes[:200])

    def test_the_command_runs_with_openblas_told_its_thread_count(self):
        self.assertEqual(process_env(3), {"OPENBLAS_NUM_THREADS": "3"})
        # A command that answers every row with the count it was started with (0: none).
        echo = ["/bin/sh", "-c", 'while read -r row; do echo "${OPENBLAS_NUM_THREADS:-0}"; done']

        def answers(env):
            task = PredictTask(echo, vector_out=False, env=env)
            return [r[-1] for r in task(iter(with_text(self.rows[:3])), log=io.StringIO())]

        self.assertEqual(answers(process_env(3)), [3.0] * 3)
        with mock.patch.dict(os.environ) as environ:
            environ.pop("OPENBLAS_NUM_THREADS", None)
            self.assertEqual(answers(None), [0.0] * 3)  # nothing added without an env

    def test_a_bad_row_skipped_gets_none_and_the_others_their_class(self):
        rows = with_text(self.rows[:50])
        rows[7] = with_second_value(rows[7], "NaN")
        out = self.predict(rows, on_bad_row="skip")
        self.assertEqual([r[:-1] for r in out], [r[:-1] for r in rows])
        self.assertIsNone(out[7][-1])
        self.assertEqual([r[-1] for n, r in enumerate(out) if n != 7],
                         [c for n, c in enumerate(self.classes[:50]) if n != 7])

    def test_a_bad_row_fails_the_partition_by_default_naming_its_line(self):
        rows = with_text(self.rows[:50])
        rows[7] = with_second_value(rows[7], "NaN")
        with self.assertRaises(SparktorchError) as caught:
            self.predict(rows)
        self.assertEqual(caught.exception.code, 3)
        self.assertEqual(caught.exception.stderr_tail[-1], "sparktorch: error: stdin:8:6: "
                         "expected a finite number, got \"NaN\"")  # [0.0,NaN
        self.assertTrue(str(caught.exception).startswith(
            "sparktorch predict (its stdin: this partition's rows, line or record N the Nth) "
            "exited with status 3:\n"), caught.exception)

    def test_a_null_cell_fails_the_partition_naming_its_line_and_column(self):
        rows = with_text(self.rows[:20])
        rows[7] = with_second_value(rows[7], "null")
        with self.assertRaises(SparktorchError) as caught:
            self.predict(rows)
        self.assertEqual(caught.exception.stderr_tail[-1], "sparktorch: error: stdin:8:6: "
                         "expected a number, got \"null\"")

    def test_a_partition_larger_than_the_pipes_does_not_deadlock(self):
        # Some 40 MB of rows in and 12,000 answers out: far more than a pipe holds, so this
        # finishes only when rows are written while answers are read.
        rows = with_text(csv_rows("train12k.csv", 12000))
        result = []

        def run():
            try:
                result.append(self.predict(rows))
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
        self.assertEqual([r[:-1] for r in out], [r[:-1] for r in rows])
        self.assertEqual([r[-1] for r in out], binary_classes(self.model_path, "train12k.csv"))


class PredictionValueTest(unittest.TestCase):
    def test_one_output_is_the_value_several_the_index_of_the_largest(self):
        self.assertEqual(prediction_value("0.25", False), 0.25)
        self.assertEqual(prediction_value("0.1,0.7,0.2", False), 1.0)
        self.assertEqual(prediction_value("0.5,0.5", False), 0.0)  # the first of equals
        self.assertEqual(prediction_value("0.1,0.7,0.2", True), [0.1, 0.7, 0.2])
        self.assertIsNone(prediction_value("", False))  # a row skipped as bad
        self.assertIsNone(prediction_value("", True))


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
        with self.assertRaises(BinaryMissing) as caught:  # relative to the working directory,
            find_binary(os.path.join("bin", "sparktorch"), files_dir="/spark/files")  # or files
        self.assertEqual(str(caught.exception), "no sparktorch binary on %s: tried "
                         "./bin/sparktorch, /spark/files/bin/sparktorch %s" % (HOST, MISSING_HELP))
        with self.assertRaises(BinaryMissing) as caught:
            find_binary("sparktorch-not-installed")  # a bare name is looked up on PATH
        self.assertEqual(str(caught.exception), "no sparktorch binary on %s: tried "
                         "sparktorch-not-installed on PATH %s" % (HOST, MISSING_HELP))

    def test_the_archives_bundle_in_the_working_directory_is_found(self):
        os.mkdir(os.path.join(self.tmp, "sparktorch"))  # --archives bundle.tar.gz#sparktorch
        bundled = os.path.join(self.tmp, "sparktorch", "sparktorch")
        os.symlink(os.path.abspath(SPARKTORCH), bundled)
        os.chdir(self.tmp)
        self.assertEqual(find_binary(), bundled)
        self.assertEqual(binary_candidates(), ["./sparktorch/sparktorch", "sparktorch"])
        self.assertEqual(binary_candidates(None, "/spark/files"),
                         ["./sparktorch/sparktorch", "/spark/files/sparktorch/sparktorch",
                          "sparktorch"])

    def run_launcher(self, candidates, *args):
        return subprocess.run(launcher(candidates) + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=self.tmp, check=False,
                              env=dict(os.environ, **process_env(1, candidates)))

    def test_the_launcher_runs_the_first_binary_it_finds_with_the_arguments(self):
        done = self.run_launcher(["./sparktorch/sparktorch", SPARKTORCH, "/never/looked/at"],
                                 "--version")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.decode().startswith("sparktorch "))
        os.mkdir(os.path.join(self.tmp, "sparktorch"))
        os.symlink(os.path.abspath(SPARKTORCH), os.path.join(self.tmp, "sparktorch", "sparktorch"))
        done = self.run_launcher(["./sparktorch/sparktorch", "/nowhere"], "predict", "--help")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Usage: sparktorch predict", done.stdout.decode())

    def test_the_launcher_without_a_binary_says_where_it_looked_and_exits_127(self):
        done = self.run_launcher(["./sparktorch/sparktorch", "/nowhere/sparktorch",
                                  "sparktorch-not-installed"], "--version")
        self.assertEqual(done.returncode, 127)
        self.assertEqual(done.stdout, b"")
        self.assertEqual(done.stderr.decode(), "sparktorch: error: no sparktorch binary on %s: "
                         "tried ./sparktorch/sparktorch, /nowhere/sparktorch, "
                         "sparktorch-not-installed %s\n" % (os.uname().nodename, MISSING_HELP))

    def test_the_launcher_is_one_short_line_that_holds_no_error_text(self):
        # Spark quotes a failed task's command in its logs: the command must read well there.
        script = launcher(["./sparktorch/sparktorch", "sparktorch"])[2]
        self.assertNotIn("\n", script)
        self.assertLess(len(script), 300)
        self.assertNotIn("no sparktorch binary", script)
        self.assertNotIn("error", script)
        self.assertNotIn("no sparktorch binary", " ".join(
            predict_command(["./sparktorch/sparktorch"], [], model_path="m.pt", vector_out=False)))

    def test_a_file_that_is_not_executable_is_passed_over(self):
        os.mkdir(os.path.join(self.tmp, "sparktorch"))
        with open(os.path.join(self.tmp, "sparktorch", "sparktorch"), "w") as f:
            f.write("not a program")
        done = self.run_launcher(["./sparktorch/sparktorch", SPARKTORCH], "--version")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.decode().startswith("sparktorch "))



class FindJarTest(unittest.TestCase):
    def setUp(self):
        self.tmp = os.path.realpath(tempfile.mkdtemp(prefix="test-find-jar-"))
        self.saved = os.environ.pop("SPARKTORCH_JAR", None)

    def tearDown(self):
        os.environ.pop("SPARKTORCH_JAR", None)
        if self.saved is not None:
            os.environ["SPARKTORCH_JAR"] = self.saved
        shutil.rmtree(self.tmp, ignore_errors=True)

    def binary_in(self, folder):
        os.makedirs(os.path.join(self.tmp, folder), exist_ok=True)
        path = os.path.join(self.tmp, folder, "sparktorch")
        os.symlink(os.path.abspath(SPARKTORCH), path)
        return path

    def jar_in(self, folder):
        os.makedirs(os.path.join(self.tmp, folder), exist_ok=True)
        path = os.path.join(self.tmp, folder, "sparktorch-spark.jar")
        with open(path, "wb"):
            pass
        return path

    def test_the_jar_beside_the_first_binary_found_or_in_its_lib(self):
        beside = self.binary_in("build")
        self.assertEqual(find_jar([None, beside]),
                         (None, "no sparktorch-spark.jar beside %s/build (built with a JDK; or "
                                "set SPARKTORCH_JAR)" % self.tmp))
        jar = self.jar_in("build")
        self.assertEqual(find_jar([os.path.join(self.tmp, "missing"), beside]), (jar, None))
        installed = self.binary_in("bin")
        jar = self.jar_in(os.path.join("lib", "sparktorch"))
        self.assertEqual(find_jar([installed]), (jar, None))

    def test_sparktorch_jar_wins_and_empty_means_none(self):
        jar = self.jar_in("elsewhere")
        self.jar_in("build")
        os.environ["SPARKTORCH_JAR"] = jar
        self.assertEqual(find_jar([self.binary_in("build")]), (jar, None))
        os.environ["SPARKTORCH_JAR"] = ""
        self.assertEqual(find_jar([]), (None, "SPARKTORCH_JAR is empty"))
        os.environ["SPARKTORCH_JAR"] = "/nowhere/x.jar"
        self.assertEqual(find_jar([]), (None, "no file /nowhere/x.jar (SPARKTORCH_JAR)"))



if __name__ == "__main__":
    unittest.main(verbosity=2)

"""spark-scripts' partition runner and record reader against the real binary, without Spark.

Each test drives sparktorch_spark.runner.pipe_partition with plain iterators, as Spark's tasks
will: one partition, N partitions at once through the tracker (sync) and through the parameter
server (hogwild), a partition with a bad row, a partition larger than the pipes' buffers, and a
model whose records are damaged. Environment: SPARKTORCH (the binary), REPO, DATA (the
integration fixture's Fashion-MNIST CSV files).
"""
import io
import os
import subprocess
import sys
import tempfile
import unittest
import zlib

REPO = os.environ["REPO"]
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))

from stage import run_at_once  # noqa: E402
from sparktorch_spark.records import read_records, write_model  # noqa: E402
from sparktorch_spark.runner import SparktorchError, pipe_partition  # noqa: E402
from sparktorch_spark.serve import Serve  # noqa: E402

SPARKTORCH = os.environ["SPARKTORCH"]
DATA = os.environ["DATA"]
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")


def rows(name, count):
    with open(os.path.join(DATA, name)) as f:
        return [next(f).rstrip("\n") for _ in range(count)]


def run_partitions(commands, partitions, env=None):
    """Runs pipe_partition for every (command, rows) pair at once, each in a thread as Spark's
    tasks run; returns each one's output lines, or raises the first error."""
    return run_at_once([lambda c=c, p=p: list(pipe_partition(p, c, env=env, log=io.StringIO()))
                        for c, p in zip(commands, partitions)])


def serve(args, env=None, listen=None):
    """`sparktorch serve ARGS` in the background (sparktorch_spark.serve.Serve), on the socket
    it binds at `listen`."""
    return Serve(SPARKTORCH, ["-q"], ["serve"] + args, env=env, listen=listen, log=io.StringIO())


class PipePartitionTest(unittest.TestCase):
    def test_one_partition_trains_predicts_and_returns_a_verified_model(self):
        part = rows("train12k.csv", 2000)
        out = list(pipe_partition(part, [SPARKTORCH, "train", "--model", SPEC, "--epochs", "1",
                                         "--predict"], log=io.StringIO()))
        records = read_records(out)
        self.assertEqual(len(records.predictions), 2000)
        self.assertTrue(all(v.isdigit() and 0 <= int(v) <= 9 for _, v in records.predictions))
        self.assertGreater(len(records.model), 1000000)  # 269,322 float32 weights and more
        self.assertEqual(records.model[:2], b"PK")  # a TorchScript file is a zip
        self.assertEqual(len(records.summaries), 1)
        self.assertEqual(records.summaries[0]["rows"], 2000)

    def test_a_partition_larger_than_the_pipes_never_deadlocks(self):
        # predict answers each row as it reads: 12,000 rows in and out (some 2 MB each way)
        # block unless the rows are written while the answers are read.
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "model.pt")
            subprocess.run([SPARKTORCH, "-q", "train", "--model", SPEC, "--epochs", "1",
                            "--output", model, "--input", os.path.join(DATA, "train2k.csv")],
                           check=True, stdout=subprocess.DEVNULL)
            part = rows("train12k.csv", 12000)
            out = list(pipe_partition(part, [SPARKTORCH, "predict", "--model", model],
                                      log=io.StringIO()))
        self.assertEqual(len(out), 12000)

    def test_a_failure_raises_with_the_exit_status_and_the_last_error_lines(self):
        part = rows("train12k.csv", 100)
        part[41] = "oops," + part[41].split(",", 1)[1]
        log = io.StringIO()
        with self.assertRaises(SparktorchError) as caught:
            list(pipe_partition(part, [SPARKTORCH, "train", "--model", SPEC], log=log))
        self.assertEqual(caught.exception.code, 3)
        self.assertEqual(caught.exception.stderr_tail[-1],
                         'sparktorch: error: stdin:42:1: expected a number, got "oops"')
        self.assertIn('stdin:42:1: expected a number, got "oops"', str(caught.exception))
        self.assertIn("expected a number", log.getvalue())  # stderr reached the task log

    def test_an_error_of_the_rows_iterator_is_raised_and_ends_the_process(self):
        def broken():
            yield rows("train12k.csv", 1)[0]
            raise KeyError("the partition's source failed")

        with self.assertRaises(KeyError):
            list(pipe_partition(broken(), [SPARKTORCH, "train", "--model", SPEC],
                                log=io.StringIO()))

    @staticmethod
    def sync_stage(n, count, flag):
        """`count` rows split among `n` sync ranks that train one epoch at once through a
        tracker (Serve), each with `flag`; (the rows of each, the records of each, the model
        serve wrote or None)."""
        env = dict(os.environ, SPARKTORCH_SECRET="runner-test-secret")
        server = serve(["--world-size", str(n)], env=env, listen=("127.0.0.1", 0))
        parts = [rows("train12k.csv", count)[i::n] for i in range(n)]
        commands = [[SPARKTORCH, "train", "--model", SPEC, "--epochs", "1", "--tracker",
                     server.address, "--rank", str(i), "--world-size", str(n), flag]
                    for i in range(n)]
        outputs = run_partitions(commands, parts, env=env)
        server.finish(300)
        model = server.model()
        server.close()
        return parts, [read_records(out) for out in outputs], model

    def test_sync_partitions_at_once_through_the_tracker_agree(self):
        parts, results, served = self.sync_stage(3, 3000, "--predict")
        self.assertIsNotNone(results[0].model)  # rank 0's partition carries the model
        self.assertTrue(all(r.model is None for r in results[1:]))
        self.assertIsNone(served)
        crcs = {r.summaries[0]["weights_crc32"] for r in results}
        self.assertEqual(len(crcs), 1, crcs)
        for part, r in zip(parts, results):
            self.assertEqual(len(r.predictions), len(part))

    def test_sync_ranks_send_the_model_to_serve_which_writes_it(self):
        _, results, model = self.sync_stage(2, 1000, "--send-model")
        self.assertTrue(all(r.model is None for r in results))  # none through stdout
        self.assertGreater(len(model), 1000000)
        self.assertEqual(model[:2], b"PK")
        self.assertEqual(results[0].summaries[0]["weights_crc32"],
                         results[1].summaries[0]["weights_crc32"])

    def test_hogwild_partitions_at_once_through_the_parameter_server(self):
        n = 2
        server = serve(["--mode", "hogwild", "-n", str(n), "--model", SPEC])
        parts = [rows("train12k.csv", 4000)[i::n] for i in range(n)]
        commands = [[SPARKTORCH, "train", "--mode", "hogwild", "--server", server.address,
                     "--rank", str(i), "--world-size", str(n), "--epochs", "1", "--predict"]
                    for i in range(n)]
        outputs = run_partitions(commands, parts)
        served = read_records(server.finish(300))  # the summary, from the server's stdout
        model = server.model()  # the file Serve names (-o)
        server.close()
        self.assertIsNone(served.model)
        self.assertEqual(model[:2], b"PK")
        self.assertEqual(sorted(served.summaries[0]["workers_finished"]), [0, 1])
        for part, out in zip(parts, outputs):
            r = read_records(out)
            self.assertIsNone(r.model)
            self.assertEqual(len(r.predictions), len(part))
            self.assertEqual(r.summaries[0]["mode"], "hogwild")


class ReadRecordsTest(unittest.TestCase):
    MODEL = bytes(range(256)) * 7000  # 1,792,000 bytes: 3 chunks

    def model_lines(self):
        out = io.StringIO()
        write_model(self.MODEL, out)
        return out.getvalue().splitlines()

    def test_a_model_round_trips_and_predictions_and_summaries_keep_their_order(self):
        lines = ["P\t3", "P\trow-7\t1"] + self.model_lines() + ['S\t{"rank": 0}', "P\t0"]
        r = read_records(lines)
        self.assertEqual(r.model, self.MODEL)
        self.assertEqual(r.predictions, [(None, "3"), ("row-7", "1"), (None, "0")])
        self.assertEqual(r.summaries, [{"rank": 0}])

    def test_a_damaged_chunk_is_refused(self):
        lines = self.model_lines()
        seq, count, crc, data = lines[1].split("\t")[1:]
        lines[1] = "\t".join(["M", seq, count, "%08x" % (int(crc, 16) ^ 1), data])
        with self.assertRaisesRegex(ValueError, "line 2: model chunk 1 is corrupt"):
            read_records(lines)

    def test_a_missing_chunk_or_end_or_a_wrong_total_is_refused(self):
        lines = self.model_lines()
        with self.assertRaisesRegex(ValueError, "line 2: model chunk 2 out of sequence"):
            read_records([lines[0], lines[2], lines[3]])
        with self.assertRaisesRegex(ValueError, "model has 3 of 3 chunks and no end record"):
            read_records(lines[:3])
        end = lines[3].split("\t")
        end[3] = "%08x" % (zlib.crc32(self.MODEL) ^ 1)
        with self.assertRaisesRegex(ValueError, "line 4: model incomplete or corrupt"):
            read_records(lines[:3] + ["\t".join(end)])

    def test_a_line_that_is_not_a_record_is_refused(self):
        with self.assertRaisesRegex(ValueError, "line 2: not a sparktorch record: '127.0.0.1:4"):
            read_records(["P\t1", "127.0.0.1:40117"])


if __name__ == "__main__":
    unittest.main(verbosity=2)

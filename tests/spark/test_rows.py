"""sparktorch_spark.rows: Spark rows as compact rows, checked value by value and then read by
the real binary. Environment: SPARKTORCH, REPO, DATA (see stage.py)."""
import base64
import os
import struct
import subprocess
import unittest

from stage import REPO, csv_rows

from sparktorch_spark.options import row_flags  # noqa: E402
from sparktorch_spark.records import read_records  # noqa: E402
from sparktorch_spark.rows import RowEncoder, RowError, pack, parse_prediction  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

SPARKTORCH = os.environ["SPARKTORCH"]
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")
PIXELS = ["p%d" % i for i in range(784)]


def decode(line):
    """(id or None, values) of a compact line: base64 of little-endian float32."""
    row_id, tab, text = line.rpartition("\t")
    raw = base64.b64decode(text, validate=True)
    return (row_id if tab else None), list(struct.unpack("<%df" % (len(raw) // 4), raw))


def dense(values):
    """What PySpark's toArray() returns: a numpy float64 array (a list without numpy)."""
    return numpy.array(values, dtype=numpy.float64) if numpy is not None else list(values)


class DenseVector:
    """Mirrors the duck type of pyspark.ml.linalg.DenseVector that RowEncoder relies on:
    toArray() gives the values."""

    def __init__(self, values):
        self.values = list(values)

    def toArray(self):  # pylint: disable=invalid-name  # PySpark's name
        return dense(self.values)


class SparseVector:
    """Mirrors the duck type of pyspark.ml.linalg.SparseVector: `size`, ascending `indices`
    and their `values`; toArray() gives the dense values, zeros elsewhere."""

    def __init__(self, size, indices, values):
        self.size, self.indices, self.values = size, list(indices), list(values)

    def toArray(self):  # pylint: disable=invalid-name  # PySpark's name
        out = [0.0] * self.size
        for i, v in zip(self.indices, self.values):
            out[i] = v
        return dense(out)


def train(lines, *flags):
    """Runs `sparktorch train` on `lines` (stdin) and returns its summary record."""
    done = subprocess.run([SPARKTORCH, "-q", "train", "--model", SPEC, "--epochs", "1",
                           "--seed", "0", "--no-shuffle"] + list(flags),
                          input="".join(line + "\n" for line in lines).encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise AssertionError("sparktorch train exited %d: %s"
                             % (done.returncode, done.stderr.decode()))
    summaries = read_records(done.stdout.decode().splitlines()).summaries
    assert len(summaries) == 1, summaries
    return summaries[0]


class PackTest(unittest.TestCase):
    def test_pack_is_base64_of_little_endian_float32(self):
        self.assertEqual(pack([1.0, -2.0]), "AACAPwAAAMA=")  # 0000803f 000000c0
        self.assertEqual(pack([]), "")

    def test_a_prediction_is_a_list_of_floats(self):
        # PredictTask asks for --prediction vector and makes the class or value of it itself
        # (test_predict.py); the float-or-list form had no other user and went.
        self.assertEqual(parse_prediction("3"), [3.0])
        self.assertEqual(parse_prediction("0.25,-1.5,2e-3"), [0.25, -1.5, 0.002])
        with self.assertRaises(ValueError):
            parse_prediction("0.25,oops")


class RowEncoderTest(unittest.TestCase):
    def test_a_row_is_the_label_then_the_features(self):
        line = RowEncoder(1, ["a", "b", "c"]).encode((3, 0.5, -1.25, 2))
        self.assertEqual(decode(line), (None, [3.0, 0.5, -1.25, 2.0]))

    def test_values_are_rounded_to_float32(self):
        _, values = decode(RowEncoder(0, ["x"]).encode((0.1,)))
        self.assertEqual(values, [struct.unpack("<f", struct.pack("<f", 0.1))[0]])
        self.assertNotEqual(values, [0.1])

    def test_lists_and_vectors_are_spread_in_column_order(self):
        encoder = RowEncoder(1, ["n", "list", "tuple", "dense", "sparse"])
        line = encoder.encode((7.0, 0.25, [1.0, 2.0], (3.0,), DenseVector([4.0, 5.0]),
                               SparseVector(5, [1, 4], [6.0, 8.0])))
        self.assertEqual(decode(line)[1],
                         [7.0, 0.25, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 6.0, 0.0, 0.0, 8.0])
        self.assertEqual(encoder.num_features, 11)

    def test_a_vector_label_of_width_3_comes_first(self):
        encoder = RowEncoder(3, ["features"])
        line = encoder.encode((DenseVector([0.0, 1.0, 0.5]), SparseVector(4, [2], [9.0])))
        self.assertEqual(decode(line)[1], [0.0, 1.0, 0.5, 0.0, 0.0, 9.0, 0.0])
        line = encoder.encode(([1.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]))  # an array label
        self.assertEqual(decode(line)[1], [1.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0])

    def test_without_a_label_every_cell_is_a_feature(self):
        line = RowEncoder(0, ["a", "b"]).encode((1.5, DenseVector([2.5])))
        self.assertEqual(decode(line)[1], [1.5, 2.5])

    def test_a_row_id_comes_before_a_tab(self):
        encoder = RowEncoder(1, ["a"])
        self.assertEqual(decode(encoder.encode((1, 2), row_id=17)), ("17", [1.0, 2.0]))
        line = encoder.encode((0, 4), row_id="row-7")
        self.assertEqual(line, "row-7\t" + pack([0.0, 4.0]))

    def test_a_null_is_refused_naming_its_column(self):
        encoder = RowEncoder(1, ["p1", "p2", "p3"])
        with self.assertRaises(RowError) as caught:
            encoder.encode((1, 0.0, 0.5, None))
        self.assertEqual(str(caught.exception), "column p3 is null")
        with self.assertRaises(RowError) as caught:
            encoder.encode((None, 0.0, 0.5, 1.0))
        self.assertEqual(str(caught.exception), "the label is null")

    def test_a_string_or_a_bool_is_not_a_number(self):
        encoder = RowEncoder(1, ["p1", "p2"])
        with self.assertRaises(RowError) as caught:
            encoder.encode((1, 0.0, "abc"))
        self.assertEqual(str(caught.exception), "column p2 is 'abc', not a number or a vector")
        with self.assertRaises(RowError) as caught:
            encoder.encode((1, True, 0.0))
        self.assertEqual(str(caught.exception), "column p1 is True, not a number or a vector")
        with self.assertRaises(RowError) as caught:
            encoder.encode(("cat", 0.0, 0.0))
        self.assertEqual(str(caught.exception),
                         "the label is 'cat', not a number or a vector")

    def test_a_label_of_the_wrong_width_is_refused(self):
        encoder = RowEncoder(3, ["f"])
        with self.assertRaises(RowError) as caught:
            encoder.encode((1.0, 0.5))
        self.assertEqual(str(caught.exception), "the label has 1 values, not 3")
        with self.assertRaises(RowError) as caught:
            encoder.encode((DenseVector([1.0, 0.0]), 0.5))
        self.assertEqual(str(caught.exception), "the label has 2 values, not 3")

    def test_every_row_has_as_many_features_as_the_first(self):
        encoder = RowEncoder(1, ["features"])
        encoder.encode((1, [0.0, 1.0]))
        with self.assertRaises(RowError) as caught:
            encoder.encode((1, DenseVector([0.0, 1.0, 2.0])))
        self.assertEqual(str(caught.exception), "the row has 3 features; the first row had 2")
        self.assertEqual(decode(encoder.encode((2, SparseVector(2, [0], [5.0]))))[1],
                         [2.0, 5.0, 0.0])  # a row of the first row's size still encodes


class BinaryReadsEncodedRowsTest(unittest.TestCase):
    """The encoder's rows through `sparktorch train --format compact` with options.row_flags."""

    @classmethod
    def setUpClass(cls):
        cls.rows = csv_rows("train2k.csv", 2000)

    def test_encoded_rows_train_exactly_as_the_csv_rows(self):
        encoder = RowEncoder(1, PIXELS)
        lines = [encoder.encode(row) for row in self.rows]
        compact = train(lines, *row_flags(1))
        self.assertEqual((compact["rows"], compact["rows_skipped"]), (2000, 0))
        with open(os.path.join(os.environ["DATA"], "train2k.csv")) as f:
            csv = train([line.rstrip("\n") for line in f])
        self.assertEqual(csv["rows"], 2000)
        # Same float32 values, same order: the same weights bit for bit.
        self.assertEqual(compact["weights_crc32"], csv["weights_crc32"])

    def test_a_vector_label_is_read_as_the_label_columns(self):
        encoder = RowEncoder(10, ["features"])
        lines = []
        for row in self.rows[:300]:
            one_hot = [0.0] * 10
            one_hot[int(row[0])] = 1.0
            lines.append(encoder.encode((DenseVector(one_hot), list(row[1:]))))
        summary = train(lines, "--loss", "mse", *row_flags(10))
        self.assertEqual((summary["rows"], summary["rows_skipped"]), (300, 0))
        with self.assertRaisesRegex(AssertionError, r"exited 3: sparktorch: error: stdin:1: "
                                    r"expected 785 values \(784 features \+ 1 label\), got 794"):
            train(lines, "--loss", "mse", *row_flags(1))  # without --label-col 0:9

    def test_a_nan_row_is_skipped_under_on_bad_row_skip(self):
        encoder = RowEncoder(1, PIXELS)
        rows = list(self.rows[:100])
        rows[41] = rows[41][:300] + (float("nan"),) + rows[41][301:]
        summary = train([encoder.encode(row) for row in rows], *row_flags(1, "skip"))
        self.assertEqual((summary["rows"], summary["rows_skipped"]), (99, 1))


if __name__ == "__main__":
    unittest.main(verbosity=2)

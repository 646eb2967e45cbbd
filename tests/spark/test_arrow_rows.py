"""sparktorch_spark.arrow_rows without Spark (numpy and pyarrow: the base venv of
examples/install_python.sh): Arrow columns as Spark Connect's mapInArrow gives them (a Spark ML
vector is VectorUDT's struct) turned into the binary's `float32` records, and its answers back
into Arrow arrays. The records are checked against the standard library's struct packing of
each row, and read by the binary itself: `sparktorch predict --format float32` of an identity
model gives the rows back."""
import os
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.environ["REPO"], "spark-scripts"))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from sparktorch_spark import arrow_rows  # noqa: E402

VECTOR = pa.struct([("type", pa.int8()), ("size", pa.int32()),
                    ("indices", pa.list_(pa.int32())), ("values", pa.list_(pa.float64()))])


def dense(values):
    return {"type": 1, "size": None, "indices": None, "values": values}


def sparse(size, indices, values):
    return {"type": 0, "size": size, "indices": indices, "values": values}


class Float32RecordsTest(unittest.TestCase):
    def test_each_row_is_its_count_and_its_float32_values_whatever_its_width(self):
        for width in (0, 1, 2, 3, 784, 785):
            values = np.random.RandomState(width).randn(7, width).astype(np.float32)
            want = b"".join(struct.pack("<I%df" % width, width, *row) for row in values)
            self.assertEqual(bytes(arrow_rows.float32_records(values)), want, width)

    def test_doubles_become_float32_and_no_rows_no_bytes(self):
        self.assertEqual(bytes(arrow_rows.float32_records(np.array([[0.1, 2.0]]))),
                         struct.pack("<I2f", 2, 0.1, 2.0))
        self.assertEqual(bytes(arrow_rows.float32_records(np.zeros((0, 3)))), b"")

    def test_the_binary_reads_the_records_back(self):
        import torch  # pylint: disable=import-outside-toplevel
        values = np.random.RandomState(0).rand(50, 5).astype(np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "identity.pt")
            torch.jit.script(torch.nn.Identity()).save(model)
            got = subprocess.run([os.environ["SPARKTORCH"], "-q", "predict", "--model", model,
                                  "--format", "float32", "--prediction", "vector"],
                                 input=bytes(arrow_rows.float32_records(values)),
                                 stdout=subprocess.PIPE, check=True).stdout
        np.testing.assert_allclose(np.loadtxt(got.decode().splitlines(), delimiter=","),
                                   values, rtol=1e-6)


class ColumnMatrixTest(unittest.TestCase):
    def test_dense_and_sparse_vectors_side_by_side(self):
        column = pa.array([dense([1.0, 2.0, 3.0]), sparse(3, [2], [5.0]), sparse(3, [], []),
                           dense([0.5, 0.0, -1.0])], type=VECTOR)
        np.testing.assert_array_equal(
            arrow_rows.column_matrix(column, "v", "vector"),
            [[1, 2, 3], [0, 0, 5], [0, 0, 0], [0.5, 0, -1]])
        # A slice (a batch's rows start inside the arrays' buffers).
        np.testing.assert_array_equal(arrow_rows.column_matrix(column[1:3], "v", "vector"),
                                      [[0, 0, 5], [0, 0, 0]])

    def test_numbers_and_arrays_in_order(self):
        batch = pa.RecordBatch.from_arrays(
            [pa.array([1, 2], pa.int64()), pa.array([[0.5, 1.5], [2.5, 3.5]]),
             pa.array([7.0, 8.0])], names=["i", "xs", "d"])
        np.testing.assert_array_equal(
            arrow_rows.batch_matrix(batch, [("d", "number"), ("xs", "array"), ("i", "number")]),
            [[7, 0.5, 1.5, 1], [8, 2.5, 3.5, 2]])

    def test_a_null_and_rows_of_different_widths_are_refused_naming_the_row(self):
        column = pa.array([dense([1.0]), None], type=VECTOR)
        with self.assertRaisesRegex(arrow_rows.BadRows,
                                    r"^column v is null in row 2 of this batch$"):
            arrow_rows.column_matrix(column, "v", "vector")
        column = pa.array([dense([1.0, 2.0]), dense([1.0])], type=VECTOR)
        with self.assertRaisesRegex(arrow_rows.BadRows,
                                    r"^column v: row 2 of this batch has 1 values, row 1 has 2$"):
            arrow_rows.column_matrix(column, "v", "vector")
        column = pa.array([dense([1.0, 2.0]), sparse(3, [0], [1.0])], type=VECTOR)
        with self.assertRaisesRegex(arrow_rows.BadRows, r"row 2 of this batch is a vector of "
                                    r"size 3, row 1 of size 2$"):
            arrow_rows.column_matrix(column, "v", "vector")


class AnswersTest(unittest.TestCase):
    def test_one_output_is_the_value_several_the_index_of_the_largest(self):
        self.assertEqual(arrow_rows.answers_array(b"1.5\n-2\n", 2, False).to_pylist(),
                         [1.5, -2.0])
        self.assertEqual(arrow_rows.answers_array(b"0.1,0.9,0.3\n0.7,0.2,0.7\n", 2,
                                                  False).to_pylist(), [1.0, 0.0])

    def test_an_empty_line_a_skipped_row_is_null(self):
        self.assertEqual(arrow_rows.answers_array(b"1\n\n3\n", 3, False).to_pylist(),
                         [1.0, None, 3.0])
        vectors = arrow_rows.answers_array(b"1,2\n\n3,4\n", 3, True)
        self.assertEqual(vectors.type, VECTOR)
        self.assertEqual([v and v["values"] for v in vectors.to_pylist()],
                         [[1.0, 2.0], None, [3.0, 4.0]])

    def test_too_few_answers_or_uneven_outputs_are_refused(self):
        with self.assertRaisesRegex(arrow_rows.BadRows, r"answered 1 rows of 2"):
            arrow_rows.answers_array(b"1\n", 2, False)
        with self.assertRaisesRegex(arrow_rows.BadRows, r"different numbers of outputs"):
            arrow_rows.answers_array(b"1,2\n3\n", 2, True)


if __name__ == "__main__":
    unittest.main(verbosity=2)

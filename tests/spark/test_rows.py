"""sparktorch_spark.rows without Spark: the SQL it writes for each kind of column, and what it
refuses. What Spark makes of that SQL, and that the binary reads it, is checked against a real
Spark in tests/spark_real/ (rows_text)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.environ["REPO"], "spark-scripts"))

from sparktorch_spark.options import OptionError  # noqa: E402
from sparktorch_spark.rows import (features_text, quote, row_text,  # noqa: E402
                                   with_partition_prefix)


class RowsTest(unittest.TestCase):
    def test_a_name_is_quoted_as_a_sql_identifier(self):
        self.assertEqual(quote("features"), "`features`")
        self.assertEqual(quote("a`b c"), "`a``b c`")

    def test_one_vector_column_is_cast_as_spark_prints_it(self):
        self.assertEqual(features_text([("features", "vector")]),
                         "coalesce(CAST(`features` AS STRING), 'null')")

    def test_numbers_and_arrays_are_joined_into_one_dense_vector(self):
        self.assertEqual(
            features_text([("x", "number"), ("xs", "array")]),
            "concat('[', concat_ws(',', coalesce(CAST(`x` AS STRING), 'null'), "
            "coalesce(array_join(CAST(`xs` AS ARRAY<STRING>), ',', 'null'), 'null')), ']')")

    def test_the_label_comes_first_unless_there_is_none(self):
        self.assertEqual(row_text(("label", "number"), [("features", "vector")]),
                         "concat(coalesce(CAST(`label` AS STRING), 'null'), ',', "
                         "coalesce(CAST(`features` AS STRING), 'null'))")
        self.assertEqual(row_text(None, [("features", "vector")]),
                         "coalesce(CAST(`features` AS STRING), 'null')")

    def test_with_the_encoder_its_float32_form_comes_first_and_the_text_where_it_gives_none(self):
        self.assertEqual(
            row_text(("label", "number"), [("features", "vector")], "enc"),
            "concat(coalesce(CAST(`label` AS STRING), 'null'), ',', "
            "coalesce(enc(struct(`features`)), coalesce(CAST(`features` AS STRING), 'null')))")
        self.assertEqual(
            features_text([("x", "number"), ("a`b", "array")], "enc"),
            "coalesce(enc(struct(`x`, `a``b`)), concat('[', concat_ws(',', "
            "coalesce(CAST(`x` AS STRING), 'null'), "
            "coalesce(array_join(CAST(`a``b` AS ARRAY<STRING>), ',', 'null'), 'null')), ']'))")

    def test_a_vector_among_other_columns_is_refused_with_what_to_do(self):
        with self.assertRaises(OptionError) as caught:
            features_text([("v", "vector"), ("x", "number")])
        self.assertEqual(str(caught.exception),
                         "the features mix the vector column v with other columns (v, x); "
                         "assemble them into one vector column first "
                         "(pyspark.ml.feature.VectorAssembler) and give it as inputCol")
        with self.assertRaises(OptionError) as caught:
            features_text([("v", "vector"), ("w", "vector")])
        self.assertIn("the vector columns v, w with other columns (v, w)", str(caught.exception))

    def test_the_partition_id_goes_before_the_first_row_of_each_partition_only(self):
        self.assertEqual(with_partition_prefix("t"),
                         "CASE WHEN (monotonically_increasing_id() & 8589934591) = 0 "
                         "THEN concat(CAST(spark_partition_id() AS STRING), '\\t', `t`) "
                         "ELSE `t` END AS `t`")


if __name__ == "__main__":
    unittest.main(verbosity=2)

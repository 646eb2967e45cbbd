"""Spark rows as text rows of sparktorch's `vector` format, built by Spark SQL in the JVM.

A row is `LABEL,VECTOR` (or `VECTOR` without a label), as sparktorch-formats(7) (ROWS) and
Spark's own `cast(vector AS STRING)` write them: a dense vector `[0.0,0.5,...]` or a sparse one
`(784,[3,10],[0.5,0.25])`, a label a number or a vector. The text is made by SQL expressions, so
the rows go from the DataFrame to the binary without entering a Python worker (the JVM's
`RDD.pipe`, see jvm.py), and the binary parses them at hundreds of MB/s.

Features come from one Spark ML vector column, or from numeric and numeric-array columns
assembled in order into one dense vector. Where the JVM has sparktorch's SQL function
(`encoder`, jvm.features_text_function: sparktorch-spark.jar), it writes the features as the
vector format's float32 form `<BASE64>`, without the decimal digits that cost Spark most of
its time; for the rows it leaves to text (a null cell, a sparse vector with few nonzeros) the
SQL below writes the text. A null cell becomes the word `null`, which the
binary reports as a bad row naming its line and column (Spark's concat_ws would drop it and
shift the columns). Nothing here imports PySpark: it writes SQL text from column names and
kinds ('vector', 'number', 'array'), and is tested without Spark.
"""

from .options import OptionError

# Every bit of monotonically_increasing_id() below the partition index (its upper 31 bits).
_ROW_IN_PARTITION = (1 << 33) - 1


def quote(name):
    """A column name as a SQL identifier."""
    return "`%s`" % name.replace("`", "``")


def _text(column, kind):
    """SQL for one column's cell as the text of its numbers, `null` for a null."""
    if kind == "array":
        return "coalesce(array_join(CAST(%s AS ARRAY<STRING>), ',', 'null'), 'null')" % quote(column)
    return "coalesce(CAST(%s AS STRING), 'null')" % quote(column)


def features_text(columns, encoder=None):
    """SQL for the features as a vector: `columns` is [(name, kind)]. One vector column is cast
    as it is (dense or sparse); numeric and array columns are joined into a dense vector. With
    `encoder` (the name of sparktorch's SQL function), the function's float32 form where it
    gives one, the text where it gives null. Raises OptionError for a vector among other
    columns, which no single vector can hold."""
    vectors = [name for name, kind in columns if kind == "vector"]
    if vectors and len(columns) > 1:
        raise OptionError(
            "the features mix %s with other columns (%s); assemble them into one vector column "
            "first (pyspark.ml.feature.VectorAssembler) and give it as inputCol"
            % ("the vector column " + vectors[0] if len(vectors) == 1 else
               "the vector columns " + ", ".join(vectors),
               ", ".join(name for name, _ in columns)))
    if vectors:
        text = _text(*columns[0])
    else:
        text = "concat('[', concat_ws(',', %s), ']')" % ", ".join(_text(n, k) for n, k in columns)
    if encoder is None:
        return text
    return "coalesce(%s(struct(%s)), %s)" % (encoder, ", ".join(quote(n) for n, _ in columns),
                                             text)


def row_text(label, features, encoder=None):
    """SQL for a whole row: `label` is (name, kind) or None (no label), `features` and
    `encoder` as for features_text."""
    text = features_text(features, encoder)
    if label is None:
        return text
    return "concat(%s, ',', %s)" % (_text(*label), text)


def with_partition_prefix(column):
    """A SQL select expression, named `column` too, that puts the Spark partition's id and a tab
    before the first row of each partition in the string column `column`
    (monotonically_increasing_id() counts a partition's rows from 0 in its low 33 bits), as
    `sparktorch train --rank-from-stdin` reads its rank. Must be evaluated in the stage that
    pipes the rows, after any repartitioning."""
    name = quote(column)
    return ("CASE WHEN (monotonically_increasing_id() & %d) = 0 "
            "THEN concat(CAST(spark_partition_id() AS STRING), '\\t', %s) ELSE %s END AS %s"
            % (_ROW_IN_PARTITION, name, name, name))

"""Which columns of a DataFrame reach the binary, and what they hold: a source read into a
DataFrame, the feature columns (a vector, arrays or numbers), the label column, each column's
kind ('vector', 'number', 'array')."""
import os

from .options import OptionError

SOURCE_FORMATS = ("csv", "parquet", "libsvm", "json", "orc", "table")


def session_of(df):
    """The DataFrame's SparkSession: `df.sparkSession` from Spark 3.3, `df.sql_ctx`'s before."""
    session = getattr(df, "sparkSession", None)
    return session if session is not None else df.sql_ctx.sparkSession


def read_source(spark, source, fmt=None, header=True, num_features=None):
    """A DataFrame of `source`: a path in `fmt` (default: from its extension; csv with a header
    line read with inferSchema), or a table name when `fmt` is "table"."""
    if fmt is None:
        ext = os.path.splitext(source.rstrip("/"))[1].lstrip(".").lower()
        fmt = {"txt": "libsvm", "svm": "libsvm", "jsonl": "json"}.get(ext, ext)
    if fmt not in SOURCE_FORMATS:
        raise OptionError("cannot tell the format of %s: give one of %s"
                          % (source, ", ".join(SOURCE_FORMATS)))
    if fmt == "table":
        return spark.table(source)
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", str(bool(header)).lower()).option("inferSchema", "true")
    if fmt == "libsvm" and num_features:
        reader = reader.option("numFeatures", str(num_features))
    return reader.load(source)


def column_kind(data_type):
    """'vector', 'number', 'array' or None for a column's Spark type."""
    from pyspark.ml.linalg import VectorUDT  # pylint: disable=import-outside-toplevel
    from pyspark.sql import types  # pylint: disable=import-outside-toplevel
    if isinstance(data_type, VectorUDT) or type(data_type).__name__ == "VectorUDT":
        return "vector"
    if isinstance(data_type, types.NumericType):
        return "number"
    if isinstance(data_type, types.ArrayType) and isinstance(data_type.elementType,
                                                              types.NumericType):
        return "array"
    return None


def feature_columns(df, input_col="features", input_cols=None, exclude=()):
    """The feature columns to use: `input_cols`, else `input_col` when the DataFrame has it,
    else every numeric column but those in `exclude` (a CSV read with inferSchema). Raises
    OptionError naming a column that is missing or not numbers."""
    types = dict((f.name, f.dataType) for f in df.schema.fields)
    if input_cols:
        names = list(input_cols)
    elif input_col in types:
        names = [input_col]
    else:
        names = [n for n in df.columns if n not in exclude and column_kind(types[n]) == "number"]
        if not names:
            raise OptionError("no column %s and no numeric columns to assemble; the columns are "
                              "%s" % (input_col, ", ".join(df.columns)))
    for name in names:
        if name not in types:
            raise OptionError("no column %s; the columns are %s" % (name, ", ".join(df.columns)))
        if column_kind(types[name]) is None:
            raise OptionError("column %s is %s, not a vector or numbers"
                              % (name, types[name].simpleString()))
    return names


def label_column(df, label_col):
    """(name, kind) of the label column, or None without one (an autoencoder). Raises
    OptionError for a missing column or one that is not a number or a vector."""
    if not label_col:
        return None
    if label_col not in df.columns:
        raise OptionError("no label column %s; the columns are %s (labelCol=None trains an "
                          "autoencoder)" % (label_col, ", ".join(df.columns)))
    kind = column_kind(df.schema[label_col].dataType)
    if kind is None:
        raise OptionError("label column %s is %s, not a number or a vector"
                          % (label_col, df.schema[label_col].dataType.simpleString()))
    return label_col, kind


def column_kinds(df, names):
    """[(name, kind)] of the columns `names` of `df`."""
    types = dict((f.name, f.dataType) for f in df.schema.fields)
    return [(name, column_kind(types[name])) for name in names]

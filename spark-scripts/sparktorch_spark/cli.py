"""The command lines of spark-scripts/train.py and predict.py (spark-submit entry points).

Options take SparkTorch's names as flags (`--inputCol features --iters 5 --mode hogwild`);
`train_parser` and `predict_parser` need no Spark, so the tests check them without it.
"""
import argparse
import json
import os
import re
import sys

from .options import TRAIN_OPTIONS, OptionError, TrainOptions


def _bool(text):
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError("expected true or false, not %r" % text)


def _columns(text):
    return [c.strip() for c in text.split(",") if c.strip()]


def _source_flags(parser):
    parser.add_argument("--source", required=True,
                        help="input: a path (CSV with a header line, Parquet, LibSVM, JSON, ORC) "
                             "or, with --format table, a table name")
    parser.add_argument("--format", choices=("csv", "parquet", "libsvm", "json", "orc", "table"),
                        help="the source's format (default: from its extension)")
    parser.add_argument("--numFeatures", type=int, help="LibSVM: the number of features")
    parser.add_argument("--remote", metavar="sc://HOST:PORT",
                        help="run through this Spark Connect server instead of spark-submit's "
                             "session (python train.py --remote ...: no spark-submit needed)")


def train_parser():
    p = argparse.ArgumentParser(
        prog="train.py", description="Train a PyTorch model with sparktorch on a Spark "
        "DataFrame: spark-submit --archives sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch "
        "train.py --source DATA --torchObj MODEL --output MODEL.pt")
    _source_flags(p)
    p.add_argument("--output", required=True,
                   help="where to write the trained model (.pt): a local path or hdfs://...")
    p.add_argument("--predictions", help="also write the training rows with their predictions "
                   "(Parquet, or CSV when the path ends in .csv)")
    p.add_argument("--summary", help="write the tasks' summary records here (JSON lines)")
    for name, (default, kind, what) in TRAIN_OPTIONS.items():
        help_text = "%s (default: %s)" % (what, default)
        if kind is bool:
            p.add_argument("--" + name, type=_bool, nargs="?", const=True, help=help_text)
        elif kind is list:
            p.add_argument("--" + name, type=_columns, help=help_text + "; comma-separated")
        else:
            p.add_argument("--" + name, type=kind, help=help_text)
    return p


def train_options(args):
    """TrainOptions from parsed train.py arguments; `--labelCol ""` means no label."""
    given = {name: getattr(args, name) for name in TRAIN_OPTIONS
             if getattr(args, name) is not None}
    if given.get("labelCol") == "":
        given["labelCol"] = None
    options = TrainOptions(**given)
    options.check()
    if not os.path.exists(options.torchObj):
        raise OptionError("torchObj %s: no such file on the driver" % options.torchObj)
    return options


def predict_parser():
    p = argparse.ArgumentParser(
        prog="predict.py", description="Predict a Spark DataFrame with a model sparktorch "
        "trained (or any TorchScript model), in batches on the executors")
    _source_flags(p)
    p.add_argument("--model", required=True, help="the model (.pt): a path on the driver or "
                   "hdfs://...")
    p.add_argument("--output", help="write the rows with their predictions (Parquet, or CSV "
                   "when the path ends in .csv; vectors as text)")
    p.add_argument("--inputCol", default="features", help="features: a vector or numeric column")
    p.add_argument("--inputCols", type=_columns, help="numeric feature columns, comma-separated")
    p.add_argument("--labelCol", help="a label column: print the accuracy of the predictions")
    p.add_argument("--predictionCol", default="predictions")
    p.add_argument("--useVectorOut", type=_bool, nargs="?", const=True, default=False,
                   help="predictions as vectors of the model's outputs")
    p.add_argument("--probabilities", action="store_true",
                   help="predictions as vectors of class probabilities")
    p.add_argument("--miniBatch", type=int, default=1024, help="rows per forward pass")
    p.add_argument("--partitions", type=int, help="repartition the input to this many tasks")
    p.add_argument("--threads", type=int, help="CPU threads per task (default: spark.task.cpus)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--binary", help="the sparktorch binary on the executors")
    p.add_argument("--verbose", type=int, default=0)
    p.add_argument("--onBadRow", choices=("fail", "skip"), default="fail")
    return p


def write_frame(df, path):
    """Writes `df` as Parquet, or CSV with a header when `path` ends in .csv (vectors as text,
    which CSV cannot hold otherwise)."""
    if path.endswith(".csv"):
        from pyspark.sql import functions  # pylint: disable=import-outside-toplevel
        from pyspark.sql.types import StringType  # pylint: disable=import-outside-toplevel
        text = functions.udf(lambda v: None if v is None else str(v), StringType())
        for field in df.schema.fields:
            if type(field.dataType).__name__ == "VectorUDT":
                df = df.withColumn(field.name, text(df[field.name]))
        df.write.mode("overwrite").option("header", "true").csv(path)
    else:
        df.write.mode("overwrite").parquet(path)


def accuracy(df, label_col, prediction_col):
    """(correct, rows) of predictions equal to the label. A vector of predictions (useVectorOut,
    probabilities) predicts the index of its largest entry, the class (one entry: itself), as a
    prediction without them would."""
    from pyspark.sql import functions  # pylint: disable=import-outside-toplevel
    predicted = df[prediction_col]
    if type(df.schema[prediction_col].dataType).__name__ == "VectorUDT":
        from pyspark.ml.functions import vector_to_array  # pylint: disable=import-outside-toplevel
        df = df.withColumn("__sparktorch_outputs", vector_to_array(predicted))
        predicted = functions.expr(
            "CASE WHEN size(__sparktorch_outputs) = 1 THEN __sparktorch_outputs[0] ELSE "
            "CAST(array_position(__sparktorch_outputs, array_max(__sparktorch_outputs)) - 1 "
            "AS DOUBLE) END")
    row = df.select(functions.sum((df[label_col] == predicted).cast("int")),
                    functions.count(functions.lit(1))).first()
    return int(row[0] or 0), int(row[1])


def _session(app, remote=None):
    from pyspark.sql import SparkSession  # pylint: disable=import-outside-toplevel
    if remote:
        return SparkSession.builder.remote(remote).getOrCreate()
    return SparkSession.builder.appName(app).getOrCreate()


def _context(session):
    """The session's SparkContext; None for a Spark Connect session, which has none."""
    from .model_io import is_connect  # pylint: disable=import-outside-toplevel
    return None if is_connect(session) else session.sparkContext


def predict_failure(error):
    """One line for a failure of a task's binary, from Spark's report of it, or None for any
    other error. With sparktorch-spark.jar the report quotes the binary's last stderr lines,
    and the line says its message; the JVM's pipe (no jar) reports only the exit status, and
    the line says where the message is (the task's log)."""
    from . import exit_codes  # pylint: disable=import-outside-toplevel
    from .job import task_status  # pylint: disable=import-outside-toplevel
    status = task_status(error)
    if status is None:
        missing = _NO_BINARY.search(str(error))  # Spark Connect: a task's Python said so
        return None if missing is None else \
            "a task found no sparktorch binary: %s" % missing.group(1)
    said = _BINARY_ERROR.findall(str(error))
    if status == exit_codes.NOT_FOUND:
        if said:
            return "a task found no sparktorch binary (exit status %d): %s" % (status, said[-1])
        return ("a task found no sparktorch binary on its executor (exit status %d); the "
                "task's log names its host and the paths it tried" % status)
    if said:
        return "a task's sparktorch predict ended with %s: %s" % (exit_codes.describe(status),
                                                                   said[-1])
    return ("a task's sparktorch predict ended with %s; its message, with the row and column "
            "it names, is in the task's log (the executor's stderr; on a local master, this "
            "driver's)" % exit_codes.describe(status))


# A Spark Connect task's Python error when it found no binary (tasks.BinaryMissing).
_NO_BINARY = re.compile(r"BinaryMissing: (no sparktorch binary on [^\n]*)")
# The line the binary (and the launcher that looks for it) ends with when it fails.
_BINARY_ERROR = re.compile(r"^sparktorch: error: (.*)$", re.MULTILINE)


def _fail(session, message):
    """Ends the entry point with `message` on stderr and exit status 1, its session stopped."""
    session.stop()
    sys.exit(message)


def train_main(argv=None):
    args = train_parser().parse_args(argv)
    try:
        options = train_options(args)
    except OptionError as e:
        sys.exit("train.py: error: %s" % e)
    from . import model_io  # pylint: disable=import-outside-toplevel
    from . import columns, spark as layer  # pylint: disable=import-outside-toplevel
    from .job import JobFailed  # pylint: disable=import-outside-toplevel
    from .serve import ServeError  # pylint: disable=import-outside-toplevel
    from .tasks import BinaryMissing  # pylint: disable=import-outside-toplevel
    session = _session("sparktorch train", args.remote)
    df = columns.read_source(session, args.source, args.format, num_features=args.numFeatures)
    try:
        result = layer.train(df, options)
    except (OptionError, BinaryMissing, ServeError, JobFailed) as e:
        _fail(session, "train.py: error: %s" % e)
    model_io.copy_out(result.model, args.output, _context(session))
    if args.summary:
        with open(args.summary, "w") as f:
            for s in result.summaries:
                f.write(json.dumps(s, sort_keys=True) + "\n")
    final = result.final
    print("sparktorch: job %d trained %d rows in %s: train loss %s, accuracy %s; "
          "model written to %s" % (result.job_id, result.rows, result.attempts_text(),
                                   final.get("train_loss"), final.get("train_accuracy"),
                                   args.output))
    sys.stdout.flush()
    if args.predictions:
        predicted = layer.predict(df, result.model, input_col=options.inputCol,
                                  input_cols=result.features,
                                  prediction_col=options.predictionCol,
                                  vector_out=options.useVectorOut, binary=options.binary,
                                  threads=options.threads, device=options.device,
                                  verbose=options.verbose, exclude=(options.labelCol,))
        write_frame(predicted, args.predictions)
    session.stop()


def predict_main(argv=None):
    args = predict_parser().parse_args(argv)
    from . import model_io  # pylint: disable=import-outside-toplevel
    from . import columns, spark as layer  # pylint: disable=import-outside-toplevel
    session = _session("sparktorch predict", args.remote)
    if os.path.exists(args.model):
        with open(args.model, "rb") as f:
            model = f.read()
    elif _context(session) is None:  # Connect: the server's file systems
        model = model_io.read_through(session, args.model)
    else:
        model = model_io.read_bytes(_context(session), args.model)
    df = columns.read_source(session, args.source, args.format, num_features=args.numFeatures)
    if args.partitions:
        df = df.repartition(args.partitions)
    from .tasks import BinaryMissing  # pylint: disable=import-outside-toplevel
    try:
        predicted = layer.predict(df, model, input_col=args.inputCol, input_cols=args.inputCols,
                                  prediction_col=args.predictionCol,
                                  vector_out=args.useVectorOut, probabilities=args.probabilities,
                                  binary=args.binary, threads=args.threads, device=args.device,
                                  batch_size=args.miniBatch, verbose=args.verbose,
                                  on_bad_row=args.onBadRow, exclude=(args.labelCol,))
    except (OptionError, BinaryMissing) as e:
        _fail(session, "predict.py: error: %s" % e)
    if args.output and args.labelCol:
        predicted = predicted.cache()  # written and counted: predicted once
    try:
        if args.output:
            write_frame(predicted, args.output)
        if args.labelCol:
            correct, rows = accuracy(predicted, args.labelCol, args.predictionCol)
            print("sparktorch: accuracy %.4f (%d of %d rows)"
                  % (correct / max(rows, 1), correct, rows))
    except Exception as e:  # pylint: disable=broad-except  # Spark's, for a task's binary
        why = predict_failure(e)
        if why is None:
            raise
        _fail(session, "predict.py: error: %s" % why)
    session.stop()

"""The thin Spark layer: DataFrames in, the stage that pipes them through the binary,
DataFrames out.

Everything here calls PySpark's public API of Spark 3.5 and 4.x, and, through jvm.py, the
JVM's public API where PySpark has none. The logic that needs no Spark lives in `job`,
`tasks`, `rows` and `options` and is tested without it.

Around them: `columns` (which columns reach the binary; `read_source`), `slots` (a barrier
stage's tasks against the master's slots), `shipping` (the binary, the jar and the files the
executors need), `serve` (the driver's serve and where it listens).

- `train(df, options)`: checks (the columns, slots for a barrier stage, the binary on a local
  master), then `job.run_training` with a barrier stage in which the JVM's RDD.pipe feeds each
  partition's rows, made text by Spark SQL (rows.py), to `sparktorch train`: no row enters a
  Python worker. The features go as float32 (`<BASE64>`) where sparktorch-spark.jar is found
  (shipping.features_encoder), as Spark's decimal text otherwise.
- `predict(df, model, ...)`: the rows with a prediction column, through `sparktorch predict`,
  piped by the JVM and paired with their rows in the JVM when `df` reads back in the same
  order (jvm.recomputes_in_order), else passed through a Python worker.
"""
import os
import subprocess
import sys
import tempfile

from . import columns
from . import connect
from . import connect_train
from . import exit_codes
from . import jvm
from . import options as opts
from . import rows as text_rows
from . import shipping
from .job import JobFailed, model_files, run_training
from .options import OptionError
from .serve import driver_host, listen_host
from .slots import free_slots, plan_partitions
from .tasks import (GROUP_END, PREDICT_KEEP_SECONDS, PREDICT_WHAT, PredictTask,
                    binary_candidates, predict_command, process_env)



def _parquet_files(df, features, label):
    """(column names: the features' then the label's, paths) when the tasks can read `df`'s
    rows from its Parquet files themselves (jvm.parquet_scan), else None."""
    needed = list(features) + ([label[0]] if label else [])
    names, paths = jvm.parquet_scan(df.select(*needed))
    return None if names is None else (names, paths)


def unreadable_parquet(binary, paths, names, has_label, log):
    """Why the sparktorch binary here cannot read the Parquet files `paths` (`names`: the
    feature columns' then the label's), as `sparktorch inspect` finds from their footers and
    first row; None when it can, or when it cannot tell."""
    command = [binary, "inspect"] + opts.parquet_input_flags(
        paths, names[:-1] if has_label else names, names[-1] if has_label else None)
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=120, check=False, env=dict(os.environ, **process_env(1)))
    except (OSError, subprocess.TimeoutExpired) as e:
        log.write("sparktorch: could not check the Parquet files on the driver: %s\n" % e)
        return None
    if done.returncode != exit_codes.BAD_INPUT:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].replace("sparktorch: error: ", "", 1) if lines else "no message"


def train(df, options, log=None):
    """Trains `options.torchObj` on `df` (TrainOptions); returns a job.TrainResult, whose
    `features` are the feature columns it used. Raises OptionError, BinaryMissing or
    serve.ServeError before any training starts, and job.JobFailed when the job fails.

    When `df` is a plain read of Parquet files (readParquet), the tasks read their rows from
    the files themselves. If that job fails and the binary here finds that it cannot read the
    files (a codec or encoding it does not read), the job runs again with the rows through
    Spark, saying why."""
    log = sys.stderr if log is None else log
    mode = options.check()
    features = columns.feature_columns(df, options.inputCol, options.inputCols, (options.labelCol,))
    label = columns.label_column(df, options.labelCol)
    if connect.is_connect(df):
        kinds = columns.column_kinds(df, features)
        text_rows.features_text(kinds)  # raises OptionError for a vector among other columns
        result = connect_train.train(df, options, mode, kinds, label, log)
        result.features = features
        return result
    files = _parquet_files(df, features, label) if options.readParquet else None
    if files is not None:
        try:
            return _train(df, options, mode, features, label, files, log)
        except JobFailed:
            names, paths = files
            why = unreadable_parquet(shipping.driver_binary(options), paths, names, label is not None,
                                      log)
            if why is None:
                raise
            log.write("sparktorch: the tasks cannot read these Parquet files themselves (%s); "
                      "the rows go through Spark instead (readParquet=False goes there at "
                      "once)\n" % why)
    return _train(df, options, mode, features, label, None, log)


def _train(df, options, mode, features, label, files, log):
    """train(), with the rows read by the tasks from `files` ((names, paths)), else piped
    through Spark."""
    sc = columns.session_of(df).sparkContext
    barrier = options.useBarrier
    row_args = None
    if files is not None:
        # The tasks read the files themselves: each gets only its rank (a partition of one row).
        names, paths = files
        n = plan_partitions(sc, df._jdf.rdd().getNumPartitions(), options.partitions, barrier,  # noqa pylint: disable=protected-access
                            log=log)
        row_args = opts.parquet_row_flags(paths, names[:len(features)],
                                          names[-1] if label else None, options.onBadRow)

        def staged(tasks):
            # Partition r holds its rank's line, "r\t": a JVM collection, which starts its
            # tasks without a SQL plan to optimise and compile as a Dataset's would.
            return sc._jsc.parallelize(["%d\t" % r for r in range(tasks)], tasks).rdd()  # pylint: disable=protected-access
        log.write("sparktorch: the %d tasks read their rows from the %d Parquet file%s "
                  "themselves (readParquet)\n" % (n, len(paths), "" if len(paths) == 1 else "s"))
    else:
        encoder = shipping.features_encoder(columns.session_of(df), [options.driverBinary, options.binary], log=log)
        data = df.selectExpr(text_rows.row_text(label, columns.column_kinds(df, features), encoder) + " AS t")
        current = data._jdf.rdd().getNumPartitions()  # pylint: disable=protected-access
        n = plan_partitions(sc, current, options.partitions, barrier, log=log)

        def staged(tasks):
            return jvm.lines((data if tasks == current else data.repartition(tasks)).selectExpr(
                text_rows.with_partition_prefix("t")))
    if options.threads is None:
        options = opts.TrainOptions(**dict(options.as_dict(),
                                           threads=int(sc.getConf().get("spark.task.cpus", "1"))))
    shipping.check_binary_here(sc, options.binary)
    here = shipping.driver_binary(options)
    task_model = task_config = None
    if mode == "sync":  # every rank loads the model; in hogwild, serve sends it to the workers
        model_path, config_path = model_files(options)
        task_model = shipping.ship_file(sc, model_path)
        task_config = shipping.ship_file(sc, config_path) if config_path else None

    gpus = _task_gpus(columns.session_of(df), options, log)

    def run_stage(command, env, tasks):
        return jvm.collect_lines(jvm.pipe(sc, staged(tasks), command, env,
                                          barrier=barrier, task_gpus=gpus), sc)

    if barrier:
        jvm.end_barrier_timers_at_exit(sc)
    result = run_training(options, mode, n, run_stage, here,
                          candidates=binary_candidates(options.binary, shipping.files_dir(sc)),
                          task_model=task_model, task_config=task_config,
                          has_label=label is not None, host=driver_host(sc),
                          listen=listen_host(sc.getConf().get("spark.driver.bindAddress", None),
                                             driver_host(sc)),
                          executor_hosts=lambda: jvm.executor_hosts(sc), log=log,
                          row_args=row_args, ship=lambda path: shipping.ship_file(sc, path),
                          slots=(lambda: free_slots(sc, n)) if barrier else None)
    result.features = features  # what transform must give the model, in this order
    return result


def _task_gpus(session, options, log):
    """Whether each training task is told the GPUs Spark gave it (device cuda or auto, and
    spark.task.resource.gpu.amount set): through sparktorch-spark.jar's TaskGpus, which must be
    loaded; without it every task on a host would use its first GPU, which the log says."""
    amount = session.sparkContext.getConf().get("spark.task.resource.gpu.amount", None)
    if options.device not in ("cuda", "auto") or not amount:
        return False
    if shipping.features_encoder(session, [options.driverBinary, options.binary], log=log):
        return True
    log.write("sparktorch: spark.task.resource.gpu.amount is set, but without sparktorch-spark."
              "jar the tasks cannot learn which GPUs Spark gave them: each uses its host's "
              "first GPU (device=%s)\n" % options.device)
    return False


def _prediction(line, vector_out):
    """The Column of the prediction in the string column `line` (the model's outputs, comma-
    separated; empty for a skipped row): a vector with `vector_out`, else a double, the output
    itself when the model has one, the index of the largest (the class) when it has several
    (as tasks.prediction_value)."""
    from pyspark.ml.linalg import VectorUDT  # pylint: disable=import-outside-toplevel
    from pyspark.sql import functions  # pylint: disable=import-outside-toplevel
    from pyspark.sql.types import StructField, StructType  # pylint: disable=import-outside-toplevel
    text = functions.col(line)
    skipped = text == ""
    if vector_out:
        # Spark's JSON form of a dense vector, which from_json makes a VectorUDT value.
        as_json = functions.concat(functions.lit('{"v":{"type":1,"values":['), text,
                                   functions.lit("]}}"))
        vector = functions.from_json(as_json, StructType([StructField("v", VectorUDT())]))["v"]
        return functions.when(skipped, None).otherwise(vector)
    # One output (a class, a binary classifier's 0 or 1, a regression's value): the line is the
    # number, cast without splitting it (CASE WHEN evaluates only the branch it takes).
    as_doubles = "CAST(split(%s, ',') AS ARRAY<DOUBLE>)" % text_rows.quote(line)
    largest = functions.expr("array_position(%s, array_max(%s)) - 1" % (as_doubles, as_doubles))
    return (functions.when(skipped, None)
            .when(functions.instr(text, ",") == 0, text.cast("double"))
            .otherwise(largest.cast("double")))


def predict(df, model, input_col="features", input_cols=None, prediction_col="predictions",
            vector_out=False, probabilities=False, binary=None, threads=None, device="cpu",
            batch_size=1024, verbose=0, on_bad_row="fail", exclude=()):
    """`df` with a `prediction_col` column: `model` (the .pt's bytes) applied by
    `sparktorch predict` to every partition, in batches of `batch_size` rows. The column is a
    double (the class, or the single output), or a vector of the outputs with `vector_out`
    (of the class probabilities with `probabilities`)."""
    if prediction_col in df.columns:
        raise OptionError("the input already has a column %s (predictionCol)" % prediction_col)
    features = columns.feature_columns(df, input_col, input_cols, exclude)
    if connect.is_connect(df):
        kinds = columns.column_kinds(df, features)
        text_rows.features_text(kinds)  # raises OptionError for a vector among other columns
        return connect.predict(df, model, kinds, prediction_col, vector_out, probabilities,
                               binary, threads, device, batch_size, verbose, on_bad_row)
    spark = columns.session_of(df)
    sc = spark.sparkContext
    encoder = shipping.features_encoder(spark, [binary])
    kinds = columns.column_kinds(df, features)
    text = text_rows.row_text(None, kinds, encoder)
    shipping.check_binary_here(sc, binary)
    with tempfile.TemporaryDirectory(prefix="sparktorch-model-") as tmp:
        path = os.path.join(tmp, "model.pt")
        with open(path, "wb") as f:
            f.write(model)
        model_path = shipping.ship_file(sc, path)
    vector = vector_out or probabilities
    threads = threads or int(sc.getConf().get("spark.task.cpus", "1"))
    candidates = binary_candidates(binary, shipping.files_dir(sc))
    env = process_env(threads, candidates)
    # The paths, fastest first (sparktorch-spark(7), HOW THE ROWS REACH THE BINARY): with the jar, each
    # row and its prediction in one pass in the JVM, through a predict process kept between
    # the executor's tasks (answering partition by partition: groups); without it, the JVM's
    # pipe zipped with a second read of the rows where that read gives them in the same order;
    # else a Python worker.
    records = encoder is not None and [kind for _, kind in kinds] == ["vector"]
    command = predict_command(candidates, opts.verbosity_flags(verbose), model_path=model_path,
                              vector_out=vector, probabilities=probabilities,
                              batch_size=batch_size, threads=threads, device=device,
                              on_bad_row=on_bad_row, groups=encoder is not None,
                              row_format="float32" if records else "vector")
    line = "__sparktorch_prediction"
    if records:
        # A vector column: the jar writes its float32 record from the cell itself (VectorRecords).
        paired = jvm.pipe_rows(df, command, env, what=PREDICT_WHAT, group_end=GROUP_END,
                               keep_seconds=PREDICT_KEEP_SECONDS, answer=line,
                               vector_col=features[0])
    elif encoder is not None:
        paired = jvm.pipe_rows(df.selectExpr("*", "%s AS __sparktorch_line" % text), command,
                               env, what=PREDICT_WHAT, group_end=GROUP_END,
                               keep_seconds=PREDICT_KEEP_SECONDS, answer=line)
    elif jvm.recomputes_in_order(df):
        predicted = jvm.pipe(sc, jvm.lines(df.selectExpr(text)), command, env,
                             barrier=False)
        paired = jvm.zip_lines(df, predicted, line)
    else:
        return _predict_through_python(df, text, command, vector, prediction_col,
                                       env=env)
    return paired.select(*[paired[c] for c in df.columns] +
                         [_prediction(line, vector).alias(prediction_col)])


def _predict_through_python(df, text, command, vector, prediction_col, env):
    """predict for a DataFrame that may give its rows in another order when read again: each
    row passes through a Python worker with its text, and comes back with its prediction."""
    from pyspark.ml.linalg import DenseVector, VectorUDT  # pylint: disable=import-outside-toplevel
    from pyspark.sql.types import DoubleType, StructField, StructType  # noqa: E501 pylint: disable=import-outside-toplevel
    spark = columns.session_of(df)
    shipping.ship_package(spark.sparkContext)
    task = PredictTask(command, vector_out=vector, env=env)
    rows = df.selectExpr("*", text + " AS __sparktorch_text").rdd.mapPartitions(task)
    if vector:
        rows = rows.map(lambda r: r[:-1] + (None if r[-1] is None else DenseVector(r[-1]),))
    field = StructField(prediction_col, VectorUDT() if vector else DoubleType(), True)
    return spark.createDataFrame(rows, StructType(df.schema.fields + [field]))

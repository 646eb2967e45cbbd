"""The thin Spark layer: DataFrames in, the stage that pipes them through the binary,
DataFrames out.

Everything here calls PySpark's public API of Spark 3.5 and 4.x, and, through jvm.py, the
JVM's public API where PySpark has none. The logic that needs no Spark lives in `job`,
`tasks`, `rows` and `options` and is tested without it.

- `read_source`: a CSV, Parquet, LibSVM, JSON or ORC path, or a table.
- `train(df, options)`: checks (the columns, slots for a barrier stage, the binary on a local
  master), then `job.run_training` with a barrier stage in which the JVM's RDD.pipe feeds each
  partition's rows, made text by Spark SQL (rows.py), to `sparktorch train`: no row enters a
  Python worker. The features go as float32 (`<BASE64>`) where sparktorch-spark.jar is found
  (features_encoder), as Spark's decimal text otherwise.
- `predict(df, model, ...)`: the rows with a prediction column, through `sparktorch predict`,
  piped by the JVM and paired with their rows in the JVM when `df` reads back in the same
  order (jvm.recomputes_in_order), else passed through a Python worker.
"""
import atexit
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zlib

from . import connect
from . import connect_train
from . import exit_codes
from . import jvm
from . import options as opts
from . import rows as text_rows
from .job import JobFailed, model_files, run_training
from .options import OptionError
from .tasks import (GROUP_END, PREDICT_KEEP_SECONDS, PREDICT_WHAT, BinaryMissing, PredictTask,
                    binary_candidates, find_binary, predict_command, process_env)

SOURCE_FORMATS = ("csv", "parquet", "libsvm", "json", "orc", "table")


def _session(df):
    """The DataFrame's SparkSession: `df.sparkSession` from Spark 3.3, `df.sql_ctx`'s before."""
    session = getattr(df, "sparkSession", None)
    return session if session is not None else df.sql_ctx.sparkSession


def ship_package(sc):
    """Makes the executors' Python workers able to import sparktorch_spark, whose classes the
    tasks are: adds connect.package_zip() with `addPyFile`, once per SparkContext. Nothing to
    do when it already came as a zip (`--py-files`)."""
    if getattr(sc, "_sparktorch_shipped", False):
        return
    path = connect.package_zip()
    if path is not None:
        sc.addPyFile(path)
    sc._sparktorch_shipped = True  # pylint: disable=protected-access


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


def _kind(data_type):
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
        names = [n for n in df.columns if n not in exclude and _kind(types[n]) == "number"]
        if not names:
            raise OptionError("no column %s and no numeric columns to assemble; the columns are "
                              "%s" % (input_col, ", ".join(df.columns)))
    for name in names:
        if name not in types:
            raise OptionError("no column %s; the columns are %s" % (name, ", ".join(df.columns)))
        if _kind(types[name]) is None:
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
    kind = _kind(df.schema[label_col].dataType)
    if kind is None:
        raise OptionError("label column %s is %s, not a number or a vector"
                          % (label_col, df.schema[label_col].dataType.simpleString()))
    return label_col, kind


def barrier_slots(sc):
    """The tasks a barrier stage can run at once now: Spark's own count where this Spark has
    it (2.4 and 3.0 take no argument, 3.1 and later the default resource profile), else the
    default parallelism."""
    jsc = sc._jsc.sc()  # pylint: disable=protected-access
    try:
        return int(jsc.maxNumConcurrentTasks())
    except Exception:  # pylint: disable=broad-except  # Spark 3.1+: one argument
        pass
    try:
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        return int(jsc.maxNumConcurrentTasks(profile))
    except Exception:  # pylint: disable=broad-except
        return sc.defaultParallelism


_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,")
_LOCAL = re.compile(r"local\[\s*(\d+|\*)\s*(?:,\s*\d+\s*)?\]")


def master_slots(master, task_cpus=1, cpus=None):
    """The slots a master can ever give a barrier stage when its master URL fixes them:
    `local` 1, `local[N]` (and `local[N,F]`) N, `local[*]` the machine's cores,
    `local-cluster[W,C,M]` W*C, each divided by spark.task.cpus; None for real clusters, whose
    executors come and go."""
    found = _LOCAL_CLUSTER.match(master)
    if found:
        cores = int(found.group(1)) * int(found.group(2))
    elif master == "local":
        cores = 1
    else:
        found = _LOCAL.match(master)
        if not found:
            return None
        cores = (cpus or os.cpu_count() or 1) if found.group(1) == "*" else int(found.group(1))
    return cores // max(task_cpus, 1)


def _too_many(wanted, slots, now):
    return OptionError(
        "partitions=%d, but a barrier stage can get %d slots%s (executor cores / "
        "spark.task.cpus): every task of a barrier stage must run at once, so Spark would "
        "wait for slots that do not come; use partitions=%d or fewer, or give the job more "
        "executors or cores (barrier stages do not work with dynamic allocation)"
        % (wanted, slots, now, slots))


def plan_partitions(sc, current, wanted, barrier, wait_seconds=30.0, log=None):
    """The number of tasks: `wanted` when given, else the input's `current` partitions, at most
    the slots a barrier stage can get. Waits up to `wait_seconds` for executors to register
    (on a local master only until all of its fixed slots are there). Raises OptionError when
    `wanted` exceeds the slots: a barrier stage would wait for them."""
    if not barrier:
        return wanted or current
    fixed = master_slots(sc.master, int(sc.getConf().get("spark.task.cpus", "1")))
    if fixed is not None and wanted and wanted > fixed:
        raise _too_many(wanted, fixed, " on %s" % sc.master)
    need = min(wanted or 1, fixed) if fixed else (wanted or 1)
    slots = barrier_slots(sc)
    deadline = time.monotonic() + wait_seconds
    while slots < need and time.monotonic() < deadline:
        time.sleep(0.5)
        slots = barrier_slots(sc)
    if wanted and wanted > slots:
        raise _too_many(wanted, slots, " now")
    if slots < 1:
        raise OptionError("no executor registered within %g s: no slots for a barrier stage"
                          % wait_seconds)
    n = wanted or min(current, slots)
    if not wanted and current > slots and log:
        log.write("sparktorch: %d input partitions, %d slots: training with %d tasks\n"
                  % (current, slots, n))
    return n


def driver_files():
    """Spark's files directory on the driver, where `spark-submit --archives
    bundle.tar.gz#sparktorch` unpacks the bundle for the driver too; None before a SparkContext."""
    try:
        from pyspark import SparkFiles  # pylint: disable=import-outside-toplevel
        return SparkFiles.getRootDirectory()
    except Exception:  # pylint: disable=broad-except  # no SparkContext yet
        return None


def driver_binary(options):
    """The binary that runs serve on the driver: driverBinary, else the executors' binary when
    it is here too, else SPARKTORCH from the environment, else the bundle unpacked here (in the
    working directory, or where --archives unpacked it for the driver) or sparktorch on PATH.
    Raises BinaryMissing."""
    if options.driverBinary:
        return find_binary(options.driverBinary)
    if options.binary:
        try:
            return find_binary(options.binary)
        except BinaryMissing:
            pass
    from_env = os.environ.get("SPARKTORCH")
    if from_env and os.access(from_env, os.X_OK):
        return os.path.abspath(from_env)
    try:
        return find_binary(None, driver_files())
    except BinaryMissing as e:
        raise BinaryMissing("no sparktorch binary on the driver: give driverBinary=, or set "
                            "SPARKTORCH (%s)" % e) from None


JAR = "sparktorch-spark.jar"
_TEXT_SAID = []  # the reason rows go as text, once said


def find_jar(binaries):
    """sparktorch-spark.jar: $SPARKTORCH_JAR (empty: none), else beside the first binary found
    on the driver, or in ../lib/sparktorch from it (an install), of `binaries` (the configured
    paths or names, None where not configured), $SPARKTORCH, and find_binary's defaults.
    Returns (path, None) or (None, why)."""
    if "SPARKTORCH_JAR" in os.environ:
        path = os.environ["SPARKTORCH_JAR"]
        if not path:
            return None, "SPARKTORCH_JAR is empty"
        return (os.path.abspath(path), None) if os.path.isfile(path) else (
            None, "no file %s (SPARKTORCH_JAR)" % path)
    tried = [b for b in binaries if b] + [b for b in (os.environ.get("SPARKTORCH"),) if b]
    for binary in tried + [None]:  # None: find_binary's defaults
        try:
            here = os.path.dirname(find_binary(binary, None if binary else driver_files()))
        except BinaryMissing:
            continue
        for path in (os.path.join(here, JAR), os.path.join(here, "..", "lib", "sparktorch", JAR)):
            if os.path.isfile(path):
                return os.path.abspath(path), None
        return None, "no %s beside %s (built with a JDK; or set SPARKTORCH_JAR)" % (JAR, here)
    return None, "no sparktorch binary on the driver to find %s beside (set SPARKTORCH_JAR)" % JAR


def features_encoder(session, binaries, log=None):
    """The SQL name of sparktorch's features function (rows.features_text) in `session`, from
    the jar find_jar finds; None, saying once on `log` why, when the rows must go as Spark's
    decimal text (slower: README, "How the rows reach the binary")."""
    jar, why = find_jar(binaries)
    if jar is not None:
        name = jvm.features_text_function(session, jar)
        if not name.startswith("no "):
            return name
        why = name
    if not _TEXT_SAID:
        _TEXT_SAID.append(why)
        (log or sys.stderr).write("sparktorch: rows go to the binary as Spark's decimal text: "
                                  "%s\n" % why)
    return None


def driver_host(sc):
    """The address tasks reach the driver at, as Spark's own executors do."""
    return sc.getConf().get("spark.driver.host", None) or socket.getfqdn()


def listen_host(bind_address, host):
    """Where the driver's serve listens, as Spark's driver RPC does: `spark.driver.bindAddress`
    when set (`bind_address`), else the address `host` (spark.driver.host) resolves to, so that a
    driver with several interfaces (a docker bridge, a second NIC) listens only on the one its
    executors reach it by. Every interface ("0.0.0.0") when that address is not this machine's
    (a driver behind NAT advertises an address it cannot bind) or is a loopback address (a name
    that resolves to 127.0.1.1 on the driver, as Debian's /etc/hosts has it, may resolve to the
    host's real address on the executors)."""
    if bind_address:
        return bind_address
    try:
        address = socket.gethostbyname(host)
        if address.startswith("127."):
            return "0.0.0.0"
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
        return address
    except OSError:
        return "0.0.0.0"


def files_dir(sc):
    """Where a task finds the files of SparkContext.addFile: its working directory on executors
    of their own, Spark's files directory on the driver for a local master."""
    if not jvm.is_local(sc):
        return "."
    from pyspark import SparkFiles  # pylint: disable=import-outside-toplevel
    return SparkFiles.getRootDirectory()


_SHIPPED = {}  # name -> the copy this process gave SparkContext.addFile
_ADDED = set()  # (application id, name): added to that application's SparkContext


def ship_file(sc, path):
    """Adds the file at `path` to the job (SparkContext.addFile) under a name of its own, made
    from its contents; returns its path as the tasks see it. Spark refuses a second file of
    the same name from another path, so each content is copied once per process, to one
    folder removed at exit, and shipped again from that same copy."""
    with open(path, "rb") as f:
        data = f.read()
    name = "sparktorch-%08x-%d-%s" % (zlib.crc32(data), len(data), os.path.basename(path))
    copy = _SHIPPED.get(name)
    if copy is None:
        folder = _shipping_folder()
        copy = os.path.join(folder, name)
        with open(copy, "wb") as f:
            f.write(data)
        _SHIPPED[name] = copy
    added = (sc.applicationId, name)
    if added not in _ADDED:  # added again, Spark 4 warns that it overwrites nothing
        sc.addFile(copy)
        _ADDED.add(added)
    return os.path.join(files_dir(sc), name)


_FOLDER = []


def _shipping_folder():
    if not _FOLDER:
        folder = tempfile.mkdtemp(prefix="sparktorch-files-")
        atexit.register(shutil.rmtree, folder, True)
        _FOLDER.append(folder)
    return _FOLDER[0]


def _kinds(df, names):
    types = dict((f.name, f.dataType) for f in df.schema.fields)
    return [(name, _kind(types[name])) for name in names]


def _parquet_files(df, features, label):
    """(column names: the features' then the label's, paths) when the tasks can read `df`'s
    rows from its Parquet files themselves (jvm.parquet_scan), else None."""
    needed = list(features) + ([label[0]] if label else [])
    names, paths = jvm.parquet_scan(df.select(*needed))
    return None if names is None else (names, paths)


def _check_binary_here(sc, binary):
    """With a local master the tasks run on this machine: a missing binary is found before any
    Spark work. Raises BinaryMissing."""
    if jvm.is_local(sc):
        find_binary(binary, files_dir(sc))


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
    features = feature_columns(df, options.inputCol, options.inputCols, (options.labelCol,))
    label = label_column(df, options.labelCol)
    if connect.is_connect(df):
        kinds = _kinds(df, features)
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
            why = unreadable_parquet(driver_binary(options), paths, names, label is not None,
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
    sc = _session(df).sparkContext
    barrier = options.useBarrier
    row_args = None
    if files is not None:
        # The tasks read the files themselves: each gets only its rank (a partition of one row).
        names, paths = files
        n = plan_partitions(sc, df._jdf.rdd().getNumPartitions(), options.partitions, barrier,  # noqa pylint: disable=protected-access
                            log=log)
        row_args = opts.parquet_row_flags(paths, names[:len(features)],
                                          names[-1] if label else None, options.onBadRow)
        staged = _session(df).range(0, n, 1, n).selectExpr(
            "concat(CAST(id AS STRING), '\\t') AS t")
        log.write("sparktorch: the %d tasks read their rows from the %d Parquet file%s "
                  "themselves (readParquet)\n" % (n, len(paths), "" if len(paths) == 1 else "s"))
    else:
        encoder = features_encoder(_session(df), [options.driverBinary, options.binary], log=log)
        data = df.selectExpr(text_rows.row_text(label, _kinds(df, features), encoder) + " AS t")
        current = data._jdf.rdd().getNumPartitions()  # pylint: disable=protected-access
        n = plan_partitions(sc, current, options.partitions, barrier, log=log)
        if n != current:
            data = data.repartition(n)
        staged = data.selectExpr(text_rows.with_partition_prefix("t"))
    if options.threads is None:
        options = opts.TrainOptions(**dict(options.as_dict(),
                                           threads=int(sc.getConf().get("spark.task.cpus", "1"))))
    _check_binary_here(sc, options.binary)
    here = driver_binary(options)
    task_model = task_config = None
    if mode == "sync":  # every rank loads the model; in hogwild, serve sends it to the workers
        model_path, config_path = model_files(options)
        task_model = ship_file(sc, model_path)
        task_config = ship_file(sc, config_path) if config_path else None

    def run_stage(command, env):
        return jvm.collect_lines(jvm.pipe(sc, jvm.lines(staged), command, env, barrier=barrier))

    if barrier:
        jvm.end_barrier_timers_at_exit(sc)
    result = run_training(options, mode, n, run_stage, here,
                          candidates=binary_candidates(options.binary, files_dir(sc)),
                          task_model=task_model, task_config=task_config,
                          has_label=label is not None, host=driver_host(sc),
                          listen=listen_host(sc.getConf().get("spark.driver.bindAddress", None),
                                             driver_host(sc)),
                          executor_hosts=lambda: jvm.executor_hosts(sc), log=log,
                          row_args=row_args)
    result.features = features  # what transform must give the model, in this order
    return result


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
    outputs = functions.split(text, ",").cast("array<double>")
    as_doubles = "CAST(split(%s, ',') AS ARRAY<DOUBLE>)" % text_rows.quote(line)
    largest = functions.expr("array_position(%s, array_max(%s)) - 1" % (as_doubles, as_doubles))
    return (functions.when(skipped, None)
            .when(functions.size(outputs) == 1, outputs[0])
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
    features = feature_columns(df, input_col, input_cols, exclude)
    if connect.is_connect(df):
        kinds = _kinds(df, features)
        text_rows.features_text(kinds)  # raises OptionError for a vector among other columns
        return connect.predict(df, model, kinds, prediction_col, vector_out, probabilities,
                               binary, threads, device, batch_size, verbose, on_bad_row)
    spark = _session(df)
    sc = spark.sparkContext
    encoder = features_encoder(spark, [binary])
    kinds = _kinds(df, features)
    text = text_rows.row_text(None, kinds, encoder)
    _check_binary_here(sc, binary)
    with tempfile.TemporaryDirectory(prefix="sparktorch-model-") as tmp:
        path = os.path.join(tmp, "model.pt")
        with open(path, "wb") as f:
            f.write(model)
        model_path = ship_file(sc, path)
    vector = vector_out or probabilities
    threads = threads or int(sc.getConf().get("spark.task.cpus", "1"))
    candidates = binary_candidates(binary, files_dir(sc))
    env = process_env(threads, candidates)
    # The paths, fastest first (README, "How the rows reach the binary"): with the jar, each
    # row and its prediction in one pass in the JVM, through a predict process kept between
    # the executor's tasks (answering partition by partition: groups); without it, the JVM's
    # pipe zipped with a second read of the rows where that read gives them in the same order;
    # else a Python worker.
    command = predict_command(candidates, opts.verbosity_flags(verbose), model_path=model_path,
                              vector_out=vector, probabilities=probabilities,
                              batch_size=batch_size, threads=threads, device=device,
                              on_bad_row=on_bad_row, groups=encoder is not None)
    line = "__sparktorch_prediction"
    if encoder is not None and [kind for _, kind in kinds] == ["vector"]:
        # A vector column: the jar writes its line from the cell itself (VectorLines).
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
    spark = _session(df)
    ship_package(spark.sparkContext)
    task = PredictTask(command, vector_out=vector, env=env)
    rows = df.selectExpr("*", text + " AS __sparktorch_text").rdd.mapPartitions(task)
    if vector:
        rows = rows.map(lambda r: r[:-1] + (None if r[-1] is None else DenseVector(r[-1]),))
    field = StructField(prediction_col, VectorUDT() if vector else DoubleType(), True)
    return spark.createDataFrame(rows, StructType(df.schema.fields + [field]))

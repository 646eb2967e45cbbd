"""What the Spark layer asks of the driver's JVM through py4j, in one place.

PySpark has no public Python API for some of what sparktorch needs, but the JVM's public
API has it and py4j reaches it: the JVM's own `RDD.pipe` (Spark's PipedRDD), which moves rows
from a DataFrame into a process without a Python worker in between, also in a barrier stage;
`mapPartitions` with sparktorch-spark.jar's PipeRows, which pairs each row with its answer in
one pass; and the barrier task timers that older Sparks leave behind. Everything here takes a
SparkContext (or a DataFrame) and works on Spark 3.5 (Scala 2.12) and 4.x (Scala 2.13) alike,
both tested (spark-real).
"""
import atexit
import threading
from urllib.parse import unquote, urlparse

_BARRIER_TIMER = "Barrier task timer for barrier() calls."
_cleanup_registered = set()  # ids of the gateways whose timers are ended at exit
_cleanup_lock = threading.Lock()


def is_local(sc):
    """Whether the tasks run inside the driver's JVM (`local`, `local[N]`, `local[*]`), not
    in executors of their own (`local-cluster[...]` and real clusters)."""
    master = sc.master
    return master == "local" or master.startswith("local[")


def executor_hosts(sc):
    """The hosts of the application's executors (the driver's too on a local master), sorted."""
    infos = sc._jsc.sc().statusTracker().getExecutorInfos()  # pylint: disable=protected-access
    return sorted({info.host() for info in infos})


def end_barrier_timers(jvm, wait_ms=2000):
    """Ends the threads of the non-daemon timers that Spark's BarrierTaskContext starts and never
    cancels ("Barrier task timer for barrier() calls.": Spark 2.4 one per barrier task, 3.0 one
    per JVM; later versions make it a daemon). Tasks of a local master run in the driver's JVM,
    where such a thread keeps `spark-submit` from exiting after the Python program ends. Call
    only when no barrier() call can come any more: at exit. Returns how many it ended."""
    ended = 0
    for thread in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray():
        if thread.getName() != _BARRIER_TIMER or thread.isDaemon() or not thread.isAlive():
            continue
        try:
            # java.util.TimerThread ends once its queue is empty and no new tasks may come; the
            # interrupt wakes it to see that (the flag is read under the queue's monitor, after
            # the interrupt, which orders the write before the read).
            flag = thread.getClass().getDeclaredField("newTasksMayBeScheduled")
            flag.setAccessible(True)
            flag.setBoolean(thread, False)
            thread.interrupt()
            thread.join(wait_ms)
        except Exception:  # pylint: disable=broad-except  # a JVM that refuses the reflection
            pass
        if thread.isAlive():
            thread.stop()  # Java 8 to 19; a pending timer task (a barrier() call) keeps it alive
        ended += 1
    return ended


def end_barrier_timers_at_exit(sc):
    """Once per driver JVM, when the tasks run in it (a local master): ends Spark's barrier
    timers when this Python program exits, so that `spark-submit` exits too."""
    if not is_local(sc):
        return
    jvm = sc._jvm  # pylint: disable=protected-access
    with _cleanup_lock:
        if id(jvm) in _cleanup_registered:
            return
        _cleanup_registered.add(id(jvm))

    def cleanup():
        try:
            end_barrier_timers(jvm)
        except Exception:  # pylint: disable=broad-except  # the gateway is already gone
            pass

    atexit.register(cleanup)



FEATURES_TEXT = "sparktorch_features_text"  # the SQL name of FeaturesText (rows.py)
_FEATURES_TEXT_CLASS = "sparktorch.spark.FeaturesText"


def features_text_function(session, jar):
    """Makes sparktorch's SQL function (spark-scripts/java: the features as float32) callable in
    `session`'s SQL, from `jar` (sparktorch-spark.jar): loaded into the driver's JVM, shipped
    to the executors (SparkContext.addJar), registered once per session. Returns its SQL name,
    or the reason it cannot be used (a string starting with "no ") when the JVM refuses."""
    sc = session.sparkContext
    jvm = sc._jvm  # pylint: disable=protected-access
    if getattr(session, "_sparktorch_features_text", None) == jar:
        return FEATURES_TEXT
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        try:
            jvm.java.lang.Class.forName(_FEATURES_TEXT_CLASS, False, loader)
        except Exception:  # pylint: disable=broad-except  # not loaded yet
            # spark-submit's loader (MutableURLClassLoader) takes jars at run time; py4j's
            # threads inherit it, and Spark SQL looks classes up through it.
            loader.addURL(jvm.java.io.File(jar).toURI().toURL())
        if jar not in getattr(sc, "_sparktorch_jars", ()):
            sc._jsc.addJar(jar)  # pylint: disable=protected-access
            sc._sparktorch_jars = getattr(sc, "_sparktorch_jars", ()) + (jar,)  # noqa pylint: disable=protected-access
        from pyspark.sql.types import StringType  # pylint: disable=import-outside-toplevel
        session.udf.registerJavaFunction(FEATURES_TEXT, _FEATURES_TEXT_CLASS, StringType())
    except Exception as e:  # pylint: disable=broad-except  # py4j's errors, a closed loader
        return "no %s in this JVM (%s)" % (_FEATURES_TEXT_CLASS,
                                          str(e).strip().splitlines()[0][:200])
    session._sparktorch_features_text = jar  # pylint: disable=protected-access
    return FEATURES_TEXT


def _frame(jdf, like):
    """A Python DataFrame around `jdf`, in the session of the DataFrame `like`."""
    from pyspark.sql import DataFrame  # pylint: disable=import-outside-toplevel
    session = getattr(like, "sparkSession", None)  # Spark 3.3+ takes the session
    return DataFrame(jdf, session if session is not None else like.sql_ctx)


def lines(df):
    """The JVM RDD[String] of a DataFrame of one string column (`df.as[String].rdd`)."""
    encoder = df._sc._jvm.org.apache.spark.sql.Encoders.STRING()  # pylint: disable=protected-access
    return getattr(df._jdf, "as")(encoder).rdd()  # pylint: disable=protected-access


def pipe(sc, jrdd, command, env, barrier, task_gpus=False):
    """The JVM's RDD.pipe of `jrdd` (an RDD[String]) through `command` (a list: the program and
    its arguments) with `env` added to each task's environment; returns the RDD[String] of the
    processes' stdout lines, each partition's in order. With `barrier`, in a barrier stage:
    every task starts at once, and one that fails fails them all. With `task_gpus` (the jar
    loaded), each partition's rank prefix names the GPUs Spark gave its task (TaskGpus)."""
    jvm = sc._jvm  # pylint: disable=protected-access
    if barrier:
        # RDDBarrier has mapPartitions only: the identity function (Predef.$conforms, in Scala
        # 2.12 and 2.13 alike) keeps the rows as they are and makes the stage that pipes them a
        # barrier stage.
        tag = jvm.scala.reflect.ClassManifestFactory.fromClass(jvm.java.lang.String._java_lang_class)
        identity = getattr(jvm.scala.Predef, "$conforms")()
        jrdd = jrdd.barrier().mapPartitions(identity, False, tag)
    java = jrdd.toJavaRDD()
    if task_gpus:
        java = java.mapPartitions(jvm.sparktorch.spark.TaskGpus())
    return java.pipe(list(command), dict(env)).rdd()


def collect_lines(jrdd, sc):
    """Every line of an RDD[String] on the driver, in partition order. Through PySpark's own
    collect (a local socket, UTF-8 with a length each), not Py4J: a 23 MB model's base64
    records took 4.5 s as Py4J strings."""
    from pyspark.rdd import RDD  # pylint: disable=import-outside-toplevel
    from pyspark.serializers import UTF8Deserializer  # pylint: disable=import-outside-toplevel
    return RDD(jrdd.toJavaRDD(), sc, UTF8Deserializer()).collect()


def pipe_rows(df, command, env, what, group_end, keep_seconds, answer, vector_col=None):
    """`df` with one more column, `answer` (a string): the command's answer to each row
    on `command`'s stdin, through sparktorch-spark.jar's
    PipeRows: each partition's rows go through the process once, on the task's thread, as
    Spark SQL holds them (no cell converted to a Java object), with no Python worker and no
    second read of `df`, so any plan works. `command` is a list (the program and its
    arguments) that answers in groups, each ending with the line `group_end`; `env` is added
    to its environment; `what` names it in the error of a non-zero exit status. A process is
    kept `keep_seconds` after its task for the next task of the same executor with the same
    command. What the command gets of a row is its `vector_col` (a Spark ML vector column) as a
    record of the float32 row format (the jar's VectorRecords, from the cell's bytes: no SQL
    function, no string, no base64; the command reads `--format float32`), else its last column
    (a string) as a line. The jar must be loaded (features_text_function)."""
    sc = df._sc  # pylint: disable=protected-access
    jvm = sc._jvm  # pylint: disable=protected-access
    cell = -1 if vector_col is None else df.columns.index(vector_col)
    task = jvm.sparktorch.spark.PipeRows(list(command), dict(env), what, group_end,
                                         float(keep_seconds), cell)
    rows = df._jdf.queryExecution().toRdd().toJavaRDD().mapPartitions(task).rdd()  # noqa pylint: disable=protected-access
    schema = df._jdf.schema().add(answer, jvm.org.apache.spark.sql.types.DataTypes.StringType)  # noqa pylint: disable=protected-access
    # SparkSession.internalCreateDataFrame (Spark 3.5 and 4.x; private[sql] in Scala, public in
    # the bytecode): a DataFrame over rows that are already Spark SQL's own.
    session = df._jdf.sparkSession()  # pylint: disable=protected-access
    return _frame(session.internalCreateDataFrame(rows, schema, False), df)


def _row_encoder(jvm, schema):
    """An Encoder[Row] for `schema` (a JVM StructType): Encoders.row from Spark 3.5, the
    catalyst RowEncoder before."""
    try:
        return jvm.org.apache.spark.sql.Encoders.row(schema)
    except Exception:  # pylint: disable=broad-except  # before 3.5
        return jvm.org.apache.spark.sql.catalyst.encoders.RowEncoder.apply(schema)


def zip_lines(df, jlines, name):
    """`df` with one more string column, `name`: row N of each partition paired with line N of
    the same partition of `jlines` (an RDD[String] made from `df` itself, one line per row).
    Both are computed from `df`'s plan, so `df` must give the same rows in the same order each
    time it is read (see recomputes_in_order); Spark fails the task when a partition's counts
    differ."""
    sc = df._sc  # pylint: disable=protected-access
    jvm = sc._jvm  # pylint: disable=protected-access
    rows = df._jdf.rdd()  # pylint: disable=protected-access
    tag = jvm.scala.reflect.ClassManifestFactory.fromClass(jvm.java.lang.Object._java_lang_class)
    pairs = rows.zip(jlines, tag)
    encoder = jvm.org.apache.spark.sql.Encoders.tuple(
        _row_encoder(jvm, df._jdf.schema()), jvm.org.apache.spark.sql.Encoders.STRING())  # noqa pylint: disable=protected-access
    session = df._jdf.sparkSession()  # pylint: disable=protected-access
    paired = _frame(session.createDataset(pairs, encoder).toDF(), df)
    return paired.selectExpr("_1.*", "_2 AS `%s`" % name.replace("`", "``"))



# Logical plan nodes that give the same rows in the same order each time they are read (given
# deterministic expressions); a shuffle (Join, Aggregate, Repartition, Sort, Window, ...) may not.
_IN_ORDER = {"Project", "Filter", "Union", "Sample", "Generate", "LocalLimit", "LocalRelation",
             "LogicalRDD", "LogicalRelation", "HiveTableRelation", "Range", "InMemoryRelation",
             "DeserializeToObject", "SerializeFromObject", "MapElements", "MapPartitions",
             "AppendColumns", "TypedFilter", "ResolvedHint", "SubqueryAlias", "View"}


def _in_order(node):
    name = node.nodeName()
    if name not in _IN_ORDER:
        return False
    if name == "LogicalRelation" and "JDBC" in node.relation().getClass().getSimpleName():
        return False  # a database answers a query in any order
    expressions = node.expressions()
    if not all(expressions.apply(i).deterministic() for i in range(expressions.size())):
        return False  # rand(), uuid(), shuffle(): new values each time
    if name == "InMemoryRelation":
        return True  # cached: read back as it was stored
    children = node.children()
    return all(_in_order(children.apply(i)) for i in range(children.size()))


def recomputes_in_order(df):
    """Whether reading `df` twice gives the same rows in the same order in every partition: its
    optimised plan reads files, tables, cached or local data through row-wise operations
    (select, filter, union, sample) with deterministic expressions; no shuffle (a join,
    groupBy, repartition, orderBy), no random values, no JDBC source."""
    return _in_order(df._jdf.queryExecution().optimizedPlan())  # pylint: disable=protected-access


def _output_names(plan):
    output = plan.output()
    return [output.apply(i).name() for i in range(output.size())]


def parquet_scan(df):
    """(column names, local paths) when `df` is a plain read of Parquet files on a local or
    shared file system: its optimised plan is a scan of Parquet files without partition columns,
    under at most a projection of its columns as they are (no filter, no computed column, no
    shuffle), and every file is a file: URI. The names are the files' own, in `df`'s order.
    Otherwise (None, why not)."""
    plan = df._jdf.queryExecution().optimizedPlan()  # pylint: disable=protected-access
    names = _output_names(plan)
    if plan.nodeName() == "Project":
        projections = plan.projectList()
        for i in range(projections.size()):
            if projections.apply(i).getClass().getSimpleName() != "AttributeReference":
                return None, "a computed column"
        plan = plan.child()
    if plan.nodeName() != "LogicalRelation":
        return None, "the plan has a %s" % plan.nodeName()
    relation = plan.relation()
    if relation.getClass().getSimpleName() != "HadoopFsRelation":
        return None, "not a file source"
    if relation.fileFormat().getClass().getSimpleName() != "ParquetFileFormat":
        return None, "not Parquet"
    if relation.partitionSchema().size() > 0:
        return None, "a partitioned table"
    paths = []
    for uri in df._jdf.inputFiles():  # pylint: disable=protected-access  # PySpark 3.1+ has it
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None, "files on %s:" % parsed.scheme
        paths.append(unquote(parsed.path))
    if not paths:
        return None, "no files"
    return names, sorted(paths)

"""What a Spark Connect client can learn before a training job starts, without a JVM: whether
a DataFrame is a plain read of Parquet files (from the plan the client itself built), and how
many tasks a barrier stage can get (from the server's configuration).

- `parquet_files(df, names)`: the files' paths when `df` is `spark.read.parquet(...)` under at
  most a selection of its columns as they are, every file a file: URI and none of `names` a
  partition column (a `name=value` folder), as jvm.parquet_scan decides from the optimised
  plan on the classic path; else None and why not.
- `barrier_slots(conf_get, master)`: the slots a barrier stage can get on any master the
  server runs: the master URL's own for local masters (slots.master_slots), else
  spark.executor.instances x spark.executor.cores or spark.cores.max, each divided by
  spark.task.cpus; None when the configuration does not fix them (say so in one line: Spark
  then waits for the slots, and fails the stage when they do not come).
"""
import re
from urllib.parse import unquote, urlparse

from .options import OptionError
from .slots import master_slots


def _relation(df):
    """The root relation of the plan `df` sends (a protobuf message)."""
    session = df.sparkSession
    return df._plan.to_proto(session.client).root  # pylint: disable=protected-access


def parquet_files(df, names):
    """(sorted local paths, None) when the tasks can read `names` of `df` from its Parquet
    files themselves, else (None, why not)."""
    try:
        relation = _relation(df)
    except Exception as e:  # pylint: disable=broad-except  # a plan this client cannot render
        return None, "the plan could not be read (%s)" % e
    while relation.WhichOneof("rel_type") == "project":
        for expression in relation.project.expressions:
            if expression.WhichOneof("expr_type") != "unresolved_attribute" or getattr(
                    expression.unresolved_attribute, "is_metadata_column", False):  # 4.x
                return None, "a computed column"
        relation = relation.project.input
    kind = relation.WhichOneof("rel_type")
    if kind != "read" or relation.read.WhichOneof("read_type") != "data_source":
        return None, "the plan has a %s" % kind
    if relation.read.is_streaming:
        return None, "a streaming read"
    source = relation.read.data_source
    if source.format.lower() != "parquet":
        return None, "not Parquet"
    if source.schema or len(source.predicates) or len(source.options):
        return None, "a read with a schema or options"
    paths = []
    partition = re.compile(r"/(?:%s)=[^/]*/" % "|".join(re.escape(n) for n in names), re.I)
    for uri in df.inputFiles():
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None, "files on %s:" % parsed.scheme
        path = unquote(parsed.path)
        if partition.search(path):
            return None, "a partitioned table"
        paths.append(path)
    if not paths:
        return None, "no files"
    return sorted(paths), None


def _number(conf_get, key):
    value = conf_get(key, None)
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def barrier_slots(conf_get, master):
    """The slots a barrier stage can get on `master`, from the server's configuration
    (`conf_get(key, default)`, spark.conf.get); None when it does not fix them. Raises
    OptionError with dynamic allocation, which barrier stages do not work with."""
    cpus = _number(conf_get, "spark.task.cpus") or 1
    fixed = master_slots(master, cpus) if master else None
    if fixed is not None:
        return fixed
    if (conf_get("spark.dynamicAllocation.enabled", "false") or "").lower() == "true":
        raise OptionError("spark.dynamicAllocation.enabled is true on %s: Spark does not run a "
                          "barrier stage with dynamic allocation; give the job a fixed number "
                          "of executors (spark.executor.instances)" % master)
    instances = _number(conf_get, "spark.executor.instances")
    cores = _number(conf_get, "spark.executor.cores")
    if instances and cores:
        return instances * (cores // cpus)
    cores_max = _number(conf_get, "spark.cores.max")
    if cores_max:
        return cores_max // cpus
    return None


# Spark's own message when a barrier stage needs more slots than the cluster has, after
# spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures checks (SPARK-24819).
_TOO_FEW_SLOTS = re.compile(r"SPARK-24819|requires more slots than the total number of slots")


def too_few_slots(error_text, tasks, master):
    """One line for Spark's failure of a barrier stage that got too few slots, or None."""
    if not _TOO_FEW_SLOTS.search(error_text):
        return None
    return ("the %d tasks of the barrier stage need %d free slots at once and %s has fewer "
            "(Spark's SPARK-24819 check); use fewer partitions, or give the job more "
            "executors or cores" % (tasks, tasks, master or "the cluster"))

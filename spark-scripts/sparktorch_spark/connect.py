"""Spark Connect: the same stages for a DataFrame of a Connect session
(`SparkSession.builder.remote("sc://...")`), which has no RDD API, no SparkContext and no JVM
on the client. Only the DataFrame API: Arrow batches reach a Python function on an executor,
which turns them into the binary's `float32` records with numpy (arrow_rows) and runs the binary
there; what the binary answers comes back as a column. What the executors need arrives as the
session's artifacts: this package (ship_package) and, with SPARKTORCH_BUNDLE, the bundle
(ship_bundle).

Prediction: every batch of a partition goes through one `sparktorch predict --group-end`
process (the batch, then the group end record, after whose answers the process echoes the end
line), and the process is kept by the Python worker for its next task of the same model and
options (PREDICT_KEEP_SECONDS idle), as the classic path's PipeRows keeps it. On Spark 4.1+ a number
prediction is an Arrow UDF over the features as float32 arrays (only they go to Python, only
the predictions come back); otherwise `mapInArrow` adds the column to every batch. The model
travels with the task (its bytes in the function's closure) and is written once per worker.
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings

from . import options as opts
from .tasks import (GROUP_END, GROUP_END_RECORD, PREDICT_KEEP_SECONDS, PREDICT_WHAT, find_binary,
                    process_env)

_END_LINE = (GROUP_END + "\n").encode()


def is_connect(df):
    """Whether `df` belongs to a Spark Connect session."""
    return type(df).__module__.startswith("pyspark.sql.connect")


def package_zip():
    """A zip of this package (sparktorch_spark/*.py) in a new temporary folder, for the
    executors' Python workers; None when the package is not a folder (it came as a zip)."""
    import zipfile  # pylint: disable=import-outside-toplevel
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.isdir(here):
        return None
    path = os.path.join(tempfile.mkdtemp(prefix="sparktorch-py-"), "sparktorch_spark.zip")
    with zipfile.ZipFile(path, "w") as z:
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                z.write(os.path.join(here, name), os.path.join("sparktorch_spark", name))
    return path


def ship_package(session):
    """Makes the executors' Python workers of `session` (a Connect session) able to import
    sparktorch_spark: adds package_zip() as a Python artifact, once per session."""
    if getattr(session, "_sparktorch_shipped", False):
        return
    path = package_zip()
    if path is not None:
        session.addArtifacts(path, pyfile=True)
    session._sparktorch_shipped = True  # pylint: disable=protected-access


# A bundle's content digest by (path, size, mtime): hashing 190 MB takes a second.
_DIGESTS = {}


def bundle_digest(path):
    """The first 16 hex digits of the SHA-256 of the file `path`, remembered while it keeps its
    size and modification time."""
    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()[:16]
    return _DIGESTS[key]


def ship_bundle(session, binary, log):
    """Where the tasks of `session` (a Connect session) find the binary: `binary` when given;
    else the bundle that SPARKTORCH_BUNDLE names on this client (sparktorch-VERSION-linux-
    x86_64.tar.gz), added to the session as an archive artifact once per session and content
    (unpacked on each executor into the session's files directory as sparktorch-DIGEST/) and
    its sparktorch-DIGEST/sparktorch; else None: the tasks look for sparktorch/sparktorch
    there (an archive the user added as ...tar.gz#sparktorch), then sparktorch on PATH."""
    bundle = os.environ.get("SPARKTORCH_BUNDLE")
    if binary or not bundle:
        return binary
    if not os.path.isfile(bundle):
        raise opts.OptionError("SPARKTORCH_BUNDLE=%s: no such file on this client" % bundle)
    name = "sparktorch-%s" % bundle_digest(bundle)
    shipped = session.__dict__.setdefault("_sparktorch_bundles", set())
    if name not in shipped:
        # The artifact's name is its file's: a link named by the content, so that another
        # bundle added to the same session later does not clash with this one.
        folder = tempfile.mkdtemp(prefix="sparktorch-bundle-")
        link = os.path.join(folder, name + ".tar.gz")
        os.symlink(os.path.abspath(bundle), link)
        started = time.time()
        try:
            session.addArtifacts("%s#%s" % (link, name), archive=True)
        finally:
            os.unlink(link)
            os.rmdir(folder)
        log.write("sparktorch: the bundle %s reached the Spark Connect server as the archive "
                  "artifact %s in %.1f s; the executors unpack it once a session\n"
                  % (bundle, name, time.time() - started))
        shipped.add(name)
    return os.path.join(name, "sparktorch")


def predict(df, model, columns, prediction_col, vector_out, probabilities, binary, threads,
            device, batch_size, verbose, on_bad_row):
    """`df` (a Connect DataFrame) with `prediction_col`: `model` (the .pt's bytes) applied by
    `sparktorch predict` on the executors to `columns` ([(name, kind)], as columns.column_kinds gives
    them), as spark.predict does for a classic DataFrame. `binary` is where the executors find
    the binary (tasks.find_binary's `configured`)."""
    from pyspark.ml.linalg import VectorUDT  # pylint: disable=import-outside-toplevel
    from pyspark.sql.types import DoubleType, StructField, StructType  # noqa: E501 pylint: disable=import-outside-toplevel
    session = df.sparkSession
    ship_package(session)
    binary = ship_bundle(session, binary, sys.stderr)
    vector = vector_out or probabilities
    schema = StructType(df.schema.fields + [
        StructField(prediction_col, VectorUDT() if vector else DoubleType(), True)])
    threads = threads or int(session.conf.get("spark.task.cpus", "1") or 1)
    kind = ["--prediction", "probabilities"] if probabilities else (
        ["--prediction", "vector"] if vector_out else [])
    flags = ["--on-bad-row", on_bad_row, "--batch-size", str(batch_size), "--threads",
             str(threads), "--device", device] + kind
    task = PredictBatches(model, columns, vector, prediction_col, dict(
        binary=binary, global_flags=opts.verbosity_flags(verbose), flags=flags,
        env=process_env(threads)))
    column = None if vector else _column_udf(task)
    if column is None:
        return df.mapInArrow(task, schema)
    _no_columnar_input(df)
    return df.withColumn(prediction_col, column(_features_array(df, columns)))


def _column_udf(task):
    """An Arrow UDF (Spark 4.1+'s arrow_udf, an iterator of arrays) of task.column, or None
    where this Spark has none. Through it only the features go to the executors' Python and
    only the predictions come back; mapInArrow carries every column both ways."""
    try:
        from pyspark.sql.functions import ArrowUDFType, arrow_udf  # noqa pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    with warnings.catch_warnings():  # "It is preferred to specify type hints": the type is
        warnings.simplefilter("ignore")  # given, and the hints would need pyarrow here
        return arrow_udf(task.column, "double", ArrowUDFType.SCALAR_ITER)


def _features_array(df, columns):
    """The features of `columns` ([(name, kind)]) as one array<float> column, made by Spark's
    own functions (vector_to_array for a Spark ML vector)."""
    from pyspark.ml.functions import vector_to_array  # pylint: disable=import-outside-toplevel
    from pyspark.sql import functions as F  # pylint: disable=import-outside-toplevel
    parts = []
    for name, kind in columns:
        column = df[name]
        if kind == "vector":
            parts.append(vector_to_array(column, "float32"))
        elif kind == "array":
            parts.append(column.cast("array<float>"))
        else:
            parts.append(F.array(column.cast("float")))
    return parts[0] if len(parts) == 1 else F.concat(*parts)


_COLUMNAR_INPUT = "spark.sql.execution.arrow.pythonUDF.columnarInput.enabled"


def _no_columnar_input(df):
    """Turns off Spark 4.3's columnar input to Arrow Python UDFs for `df`'s session when `df`
    holds a Spark ML vector (a UDT), which that path cannot convert ("[UNSUPPORTED_DATATYPE]
    Unsupported data type UDT" from RowToColumnConverter, whatever the UDF takes); says so."""
    session = df.sparkSession
    if not any(type(f.dataType).__name__ == "VectorUDT" for f in df.schema.fields):
        return
    try:
        if session.conf.get(_COLUMNAR_INPUT) != "true":  # (a default given would win)
            return
    except Exception:  # pylint: disable=broad-except  # a Spark without the setting
        return
    session.conf.set(_COLUMNAR_INPUT, "false")
    sys.stderr.write("sparktorch: set %s=false for this Spark Connect session: with it Spark %s "
                     "cannot give a Python UDF the rows of a DataFrame with a vector column\n"
                     % (_COLUMNAR_INPUT, session.version))


class PredictBatches:
    """The function of a Connect prediction's `mapInArrow`: each batch of the partition through
    a kept `sparktorch predict`, and out again with one more column."""

    def __init__(self, model, columns, vector_out, name, args):
        self.model = model
        self.columns = columns
        self.vector_out = vector_out
        self.name = name
        self.args = args

    def __call__(self, batches):
        import pyarrow as pa  # pylint: disable=import-outside-toplevel
        from . import arrow_rows  # pylint: disable=import-outside-toplevel  # numpy: executors
        process = _take(self._command(), self.args.get("env", {}))
        try:
            for batch in batches:
                data = arrow_rows.float32_records(arrow_rows.batch_matrix(batch, self.columns))
                answers = process.answer(data)
                column = arrow_rows.answers_array(answers, batch.num_rows, self.vector_out)
                yield pa.RecordBatch.from_arrays(
                    batch.columns + [column],
                    names=batch.schema.names + [self.name])
        except BaseException:
            process.kill()
            raise
        process.give_back()

    def column(self, arrays):
        """The Arrow UDF's function (_column_udf): the predictions of each array<float> of
        features through a kept `sparktorch predict`."""
        import pyarrow as pa  # pylint: disable=import-outside-toplevel
        from . import arrow_rows  # pylint: disable=import-outside-toplevel  # numpy: executors
        name = ",".join(name for name, _ in self.columns)
        process = _take(self._command(), self.args.get("env", {}))
        try:
            for array in arrays:
                batch = pa.RecordBatch.from_arrays([array], names=[name])
                data = arrow_rows.float32_records(
                    arrow_rows.batch_matrix(batch, [(name, "array")]))
                yield arrow_rows.answers_array(process.answer(data), len(array), False)
        except BaseException:
            process.kill()
            raise
        process.give_back()

    def _command(self):
        from pyspark import SparkFiles  # pylint: disable=import-outside-toplevel
        binary = find_binary(self.args.get("binary"), SparkFiles.getRootDirectory())
        digest = hashlib.sha256(self.model).hexdigest()[:16]
        path = os.path.join(tempfile.gettempdir(), "sparktorch-model-%s.pt" % digest)
        if not os.path.exists(path):
            with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), delete=False) as f:
                f.write(self.model)
            os.replace(f.name, path)
        return ([binary] + list(self.args.get("global_flags", [])) +
                ["predict", "--model", path, "--format", "float32", "--group-end", GROUP_END] +
                list(self.args.get("flags", [])))


_KEPT = {}  # (command, env) -> [idle process]
_KEPT_LOCK = threading.Lock()


def _take(command, env):
    key = (tuple(command), tuple(sorted(env.items())))
    with _KEPT_LOCK:
        idle = _KEPT.get(key, [])
        while idle:
            process = idle.pop()
            if process.alive():
                return process
    return _Kept(command, env, key)


class _Kept:
    """One `sparktorch predict --group-end` process: answers a group of lines at a time; kept
    PREDICT_KEEP_SECONDS after its task for the worker's next one."""

    def __init__(self, command, env, key):
        self.key = key
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=dict(os.environ, **env))
        self.tail = []
        self.idle_since = None
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        for line in self.process.stderr:
            self.tail = (self.tail + [line.decode(errors="replace").rstrip("\n")])[-20:]

    def alive(self):
        return self.process.poll() is None

    def answer(self, data):
        """What the process answers to `data` (a group's float32 records), without the end line.
        Raises RuntimeError with its exit status and its last error line when it fails."""
        # A failure quotes this group's lines only: the binary writes a group's own stderr line
        # before its end line, so the previous group's has come before this group starts.
        self.tail = []
        writer = threading.Thread(target=self._write, args=(data,), daemon=True)
        writer.start()
        out = bytearray()
        fd = self.process.stdout.fileno()
        while not out.endswith(_END_LINE):
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                writer.join()
                raise RuntimeError(self._failure())
            out += chunk
        writer.join()
        return bytes(out[:-len(_END_LINE)])

    def _write(self, data):
        try:
            self.process.stdin.write(data)
            self.process.stdin.write(GROUP_END_RECORD)
            self.process.stdin.flush()
        except OSError:
            pass  # it stopped reading: its exit status says why

    def _failure(self):
        code = self.process.wait()
        time.sleep(0.1)  # the last stderr lines
        return "%s exited with status %d:\n%s" % (
            PREDICT_WHAT.replace("partition's", "batch's"), code,
            "\n".join(self.tail[-5:]) or "(nothing on stderr)")

    def kill(self):
        if self.alive():
            self.process.kill()
        self.process.wait()

    def give_back(self):
        self.idle_since = time.time()
        with _KEPT_LOCK:
            _KEPT.setdefault(self.key, []).append(self)
        timer = threading.Timer(PREDICT_KEEP_SECONDS, self._end_if_idle, args=(self.idle_since,))
        timer.daemon = True
        timer.start()

    def _end_if_idle(self, since):
        with _KEPT_LOCK:
            idle = _KEPT.get(self.key, [])
            if self.idle_since != since or self not in idle:
                return  # taken again since
            idle.remove(self)
        self.process.stdin.close()
        self.process.wait()

"""A model's bytes to and from the file systems Spark reaches: a local path, or any Hadoop file
system (hdfs://, s3a://) through the JVM of a SparkContext."""
import shutil


def write_bytes(sc, path, data):
    """Writes `data` to `path` on any file system Spark's Hadoop configuration reaches."""
    jvm = sc._jvm  # pylint: disable=protected-access
    target = jvm.org.apache.hadoop.fs.Path(path)
    fs = target.getFileSystem(sc._jsc.hadoopConfiguration())  # pylint: disable=protected-access
    out = fs.create(target, True)
    try:
        for start in range(0, len(data), 1 << 20):
            out.write(bytearray(data[start:start + (1 << 20)]))
    finally:
        out.close()


def read_bytes(sc, path):
    """The bytes of the file at `path` (any file system Spark reads)."""
    files = sc.binaryFiles(path).collect()
    if len(files) != 1:
        raise FileNotFoundError("%s: expected one file, found %d" % (path, len(files)))
    return bytes(files[0][1])


def copy_out(data, path, sc=None):
    """Writes the model's bytes to `path`: a local file, or through Hadoop when `sc` is given
    and the path has a scheme (hdfs://, s3a://)."""
    if sc is not None and "://" in path and not path.startswith("file://"):
        write_bytes(sc, path, data)
        return
    local = path[len("file://"):] if path.startswith("file://") else path
    tmp = local + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    shutil.move(tmp, local)


# A Spark Connect client reaches no Hadoop file system and writes no single file: a model stage
# saved there holds its metadata as Spark 4 writes it (one JSON line, a text dataset) and the
# model's bytes as a Parquet dataset of one row (column `pt`) in this folder beside it.
CONNECT_MODEL = "model.pt.parquet"


def is_connect(session):
    """Whether `session` is a Spark Connect session."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def save_stage(session, instance, path, model_file, data):
    """Saves a model stage through `session`: Spark's metadata of `instance` at `path`, and the
    model's bytes `data` as `model_file` beside it (classic), or as CONNECT_MODEL (Connect)."""
    from pyspark.ml.util import DefaultParamsWriter  # pylint: disable=import-outside-toplevel
    if not is_connect(session):
        sc = session.sparkContext
        DefaultParamsWriter.saveMetadata(instance, path, sc)
        write_bytes(sc, path.rstrip("/") + "/" + model_file, data)
        return
    metadata = DefaultParamsWriter._get_metadata_to_save(instance, session)  # noqa pylint: disable=protected-access
    session.createDataFrame([(metadata,)], "value string").coalesce(1).write.text(
        path.rstrip("/") + "/metadata")
    session.createDataFrame([(bytearray(data),)], "pt binary").coalesce(1).write.parquet(
        path.rstrip("/") + "/" + CONNECT_MODEL)


def load_stage(session, path, model_file):
    """(metadata, model bytes) of a model stage saved at `path` by save_stage, classic or
    Connect, read through `session` (either kind)."""
    from pyspark.ml.util import DefaultParamsReader  # pylint: disable=import-outside-toplevel
    base = path.rstrip("/")
    if not is_connect(session):
        sc = session.sparkContext
        metadata = DefaultParamsReader.loadMetadata(path, sc)
        try:
            return metadata, read_bytes(sc, base + "/" + model_file)
        except Exception:  # pylint: disable=broad-except  # saved through Connect
            return metadata, bytes(session.read.parquet(base + "/" + CONNECT_MODEL).first()[0])
    metadata = DefaultParamsReader._parseMetaData(  # pylint: disable=protected-access
        session.read.text(base + "/metadata").first()[0])
    try:
        return metadata, read_through(session, base + "/" + model_file)
    except Exception:  # pylint: disable=broad-except  # saved through Connect: no such file
        return metadata, bytes(session.read.parquet(base + "/" + CONNECT_MODEL).first()[0])


def read_through(session, path):
    """The bytes of the file at `path` on the file systems `session`'s Spark reaches, through
    the DataFrame API (a Spark Connect client has no other way)."""
    return bytes(session.read.format("binaryFile").load(path).select("content").first()[0])

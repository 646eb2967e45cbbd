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

"""What the driver and the executors need besides the rows: this package for the executors'
Python workers, the binary (on the driver, and found by the tasks), sparktorch-spark.jar (the
rows' encoder), and the files a job ships (the model, its training config)."""
import atexit
import os
import shutil
import sys
import tempfile
import zlib

from . import connect
from . import jvm
from .tasks import BinaryMissing, find_binary


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
    decimal text (slower: sparktorch-spark(7), HOW THE ROWS REACH THE BINARY)."""
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


def check_binary_here(sc, binary):
    """With a local master the tasks run on this machine: a missing binary is found before any
    Spark work. Raises BinaryMissing."""
    if jvm.is_local(sc):
        find_binary(binary, files_dir(sc))

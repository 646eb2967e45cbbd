"""Helpers of the spark-real tests: run `spark-submit` against a real Spark, watch its output,
and check what it did. Each test is a script run by the Spark line's Python that prints every check it
makes; the first one that fails ends it with exit status 1 and a line saying what was expected
and what was found, followed by the end of the Spark job's output.

The environment (CTest sets it; set it by hand to run a test alone):
  SPARK_HOME  the Spark to test against: a PyPI pyspark's package folder
  SPARK_PYTHON  that Spark's Python (its venv's bin/python; default: the one running the test)
  SPARKTORCH  the binary under test: the driver's serve, and the tasks' (--binary)
  REPO        the source tree
  WORK        a scratch folder; each test works in $WORK/<test name>, wiped at its start
  SPARK_DATA  the Spark sources prepare_data.py wrote (the fixture spark-real.data)
  DATA        the integration fixture's CSV rows (train12k.csv, test2k.csv)

spark-submit of a Python application prints the program's stdout and stderr together on its
stdout (Spark's PythonRunner merges them), with the log lines of the `sparktorch serve` it
starts; Spark's own logging, and on local[2] the tasks' (the binary's stderr), on its stderr.
"""
import csv
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

MASTERS = {"local": "local[2]", "cluster": "local-cluster[2,1,1024]"}
# The Python of the Spark line under test: its venv (examples/install_python.sh), whose pyspark is
# that line's and which sees numpy and PyTorch 2.x.
PYTHON = os.environ.get("SPARK_PYTHON", sys.executable)

SPARK_HOME = os.environ.get("SPARK_HOME", "")
SPARKTORCH = os.environ.get("SPARKTORCH", "")
REPO = os.environ.get("REPO", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WORK = os.environ.get("WORK", "")
SPARK_DATA = os.environ.get("SPARK_DATA", "")
DATA = os.environ.get("DATA", "")
SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")

# The lines not worth quoting from a failed job: Spark's INFO logging, stack frames, and the
# executor churn of a local-cluster application that is shutting down.
_NOISE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO |^\s+at |^\s*$|"
                    r"Failed to launch executor|status update for unknown executor|"
                    r"Shutdown hooks cannot be modified|^\s*\.\.\. \d+ more")
_last = None  # the last Run, quoted when a check fails
_runs = []  # every Run of this test


def blame(run):
    """Makes `run` the job that a failed check quotes (default: the last one)."""
    global _last  # pylint: disable=global-statement
    _last = run


def check(what):
    """Says what the next assertions check."""
    print("check: %s" % what, flush=True)


def ok(what):
    print("  ok: %s" % what, flush=True)


def fail(what):
    """Ends the test: says what failed, then the end of the last Spark job's output (and where
    its executors' logs are, which hold the tasks' messages on local-cluster)."""
    print("FAIL: %s" % what, file=sys.stderr, flush=True)
    if _last is not None:
        print("---- the last job (%s; all of it in %s.out and .err) ----"
              % (" ".join(_last.command[:4]) + " ...", _last.path), file=sys.stderr)
        print("\n".join(_last.quote()), file=sys.stderr, flush=True)
        executors = _last.executor_logs()
        if executors:
            print("---- sparktorch's lines in its executors' logs (%s) ----"
                  % " ".join(executors), file=sys.stderr)
            for log in executors:
                with open(log, errors="replace") as f:
                    lines = [line.rstrip() for line in f if "sparktorch" in line and
                             not _NOISE.search(line) and "Command ran" not in line]
                print("\n".join(lines[-20:]), file=sys.stderr, flush=True)
    sys.exit(1)


def expect(condition, what, found=None):
    """Fails unless `condition`; `found` says what was there instead."""
    if not condition:
        fail(what + ("" if found is None else ": found %s" % found))
    ok(what)


def expect_in(pattern, text, what):
    """Fails unless the regular expression `pattern` matches a line of `text`; returns the
    match."""
    found = re.search(pattern, text, re.MULTILINE)
    if not found:
        fail("%s: no line matches /%s/" % (what, pattern))
    ok("%s: '%s'" % (what, found.group(0)[:300]))
    return found


def need_environment():
    """Fails naming a variable the test needs that is not set."""
    for name, value in (("SPARK_HOME", SPARK_HOME), ("SPARKTORCH", SPARKTORCH), ("WORK", WORK),
                        ("SPARK_DATA", SPARK_DATA), ("DATA", DATA)):
        if not value:
            fail("set %s (see tests/spark_real/lib.py)" % name)
    if not os.access(os.path.join(SPARK_HOME, "bin", "spark-submit"), os.X_OK):
        fail("no %s/bin/spark-submit" % SPARK_HOME)


def build_bundle():
    """Builds the bundle target ($BUILD, up to date when bundle.run made it) and returns the
    bundle's path ($BUNDLE); fails the test when it cannot."""
    check("cmake --build BUILD --target bundle writes the bundle")
    bundle = os.environ.get("BUNDLE", "")
    built = subprocess.run(["cmake", "--build", os.environ.get("BUILD", ""), "--target",
                            "bundle"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           check=False)
    if built.returncode != 0 or not os.path.isfile(bundle):
        fail("the bundle target failed: %s" % built.stdout.decode(errors="replace")[-800:])
    ok(bundle)
    return bundle


def setup(name):
    """The test's master ('local' or 'cluster', its last argument) and its Spark master URL;
    makes an empty $WORK/NAME.MASTER and changes into it."""
    need_environment()
    if len(sys.argv) < 2 or sys.argv[-1] not in MASTERS:
        fail("usage: %s ... local|cluster" % sys.argv[0])
    where = os.path.join(WORK, "%s.%s" % (name, sys.argv[-1]))
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    os.chdir(where)
    return sys.argv[-1], MASTERS[sys.argv[-1]]


class Run:
    """A finished spark-submit: `rc`, `out` and `err` (text), `lines` [(time, stream, line)],
    `started` and `ended` (time.monotonic())."""

    def __init__(self, command, path):
        self.command = command
        self.path = path
        self.lines = []
        self.rc = None
        self.started = self.ended = None
        self.lock = threading.Lock()
        self._app_folder = None

    @property
    def out(self):
        return "\n".join(line for _, stream, line in self.lines if stream == "out")

    @property
    def err(self):
        return "\n".join(line for _, stream, line in self.lines if stream == "err")

    @property
    def text(self):
        """stdout and stderr together, in the order the lines came."""
        return "\n".join(line for _, _, line in self.lines)

    @property
    def seconds(self):
        return self.ended - self.started

    def seconds_after(self, pattern):
        """Seconds from the first stdout line matching `pattern` to the process's exit."""
        for when, stream, line in self.lines:
            if stream == "out" and re.search(pattern, line):
                return self.ended - when
        fail("no stdout line matches /%s/" % pattern)
        return None

    def app_folder(self):
        """$SPARK_HOME/work/APP of a local-cluster application (its executors' logs and
        files), or None (before the driver connected, or on a local master)."""
        if self._app_folder is None:
            with self.lock:
                err = [line for _, stream, line in self.lines if stream == "err"]
            for line in err:
                found = re.search(r"Connected to Spark cluster with app ID (app-[\w-]+)", line)
                if found:
                    self._app_folder = os.path.join(SPARK_HOME, "work", found.group(1))
                    break
        return self._app_folder

    def executor_logs(self):
        folder = self.app_folder()
        return sorted(glob.glob(os.path.join(folder, "*", "stderr"))) if folder else []

    def quote(self, count=60):
        """The last `count` lines worth reading (no _NOISE)."""
        return [line for _, _, line in self.lines if not _NOISE.search(line)][-count:]


def _session_processes(sid):
    """[(pid, command line)] of the processes in session `sid`."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) != sid:
                continue
            pid = int(stat.split("/")[2])
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                found.append((pid, f.read().replace(b"\0", b" ").decode(errors="replace")))
        except (OSError, IndexError, ValueError):
            continue
    return found


def submit(name, master, args, timeout, on_line=None, env=None):
    """Runs `spark-submit --master MASTER ARGS` with PySpark on PYTHON,
    in a session of its own, and waits for it; returns a Run. Its stdout and stderr go to
    NAME.out and NAME.err as they come; `on_line(run, stream, line)` sees every line. Fails when
    it runs past `timeout` seconds (after killing it), or when a process it started outlives it
    by more than 10 s (serve, a task's sparktorch, an executor). `env` changes its environment
    (a value None removes the variable)."""
    command = [os.path.join(SPARK_HOME, "bin", "spark-submit"), "--master", master] + list(args)
    return run_command(name, command, timeout, on_line, env)


def run_python(name, args, timeout, on_line=None, env=None):
    """Runs PYTHON ARGS (a Spark Connect client, which needs no spark-submit) as submit runs
    spark-submit; returns a Run."""
    return run_command(name, [PYTHON] + list(args), timeout, on_line, env)


def run_command(name, command, timeout, on_line=None, env=None):
    """submit's work for any `command` (a list)."""
    global _last  # pylint: disable=global-statement
    changes = dict(env or {})
    env = dict(os.environ, PYSPARK_PYTHON=PYTHON, PYSPARK_DRIVER_PYTHON=PYTHON)
    env.update((k, v) for k, v in changes.items() if v is not None)
    for k in [k for k, v in changes.items() if v is None]:
        env.pop(k, None)
    run = _last = Run(command, os.path.abspath(name))
    _runs.append(run)
    print("run: %s" % " ".join(command), flush=True)
    run.started = time.monotonic()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, start_new_session=True)

    def read(pipe, stream):
        with open("%s.%s" % (name, stream), "w") as log:
            for raw in pipe:
                line = raw.decode(errors="replace").rstrip("\n")
                with run.lock:
                    run.lines.append((time.monotonic(), stream, line))
                log.write(line + "\n")
                log.flush()
                if on_line is not None:
                    on_line(run, stream, line)

    readers = [threading.Thread(target=read, args=(process.stdout, "out"), daemon=True),
               threading.Thread(target=read, args=(process.stderr, "err"), daemon=True)]
    for r in readers:
        r.start()
    try:
        run.rc = process.wait(timeout)
    except subprocess.TimeoutExpired:
        run.ended = time.monotonic()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        fail("%s: %s ran past %d s (killed): a hang" % (name, os.path.basename(command[0]),
                                                         timeout))
    run.ended = time.monotonic()
    for r in readers:
        r.join(10)
    deadline = time.monotonic() + 10
    left = _session_processes(process.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _session_processes(process.pid)
    if left:
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        fail("%s: %d process(es) outlived spark-submit by 10 s (killed now): %s"
             % (name, len(left), "; ".join("%d: %s" % (p, c[:200]) for p, c in left)))
    print("  %s exited %d after %.1f s" % (os.path.basename(command[0]), run.rc, run.seconds),
          flush=True)
    return run


def train_processes(seed):
    """[pid] of the `sparktorch train ... --seed SEED` processes running now (a test's own job
    marks its processes with a seed no other test uses)."""
    found = []
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0")]
        except OSError:
            continue
        if (argv and os.path.basename(argv[0]) == "sparktorch" and "train" in argv and
                any(a == "--seed" and b == seed for a, b in zip(argv, argv[1:]))):
            found.append(int(path.split("/")[2]))
    return sorted(found)


class RankKiller:
    """Kills one rank of a job (SIGKILL) once the job has trained, at a point the test controls
    rather than a race against the machine's speed: when `trained()` first says so (the test
    reads the job's first epoch line, which comes after a rank's first steps), it freezes every
    `sparktorch train --seed SEED` process with SIGSTOP, so that none can finish whatever the
    rows left, kills the last of them and lets the others go on (SIGCONT), which then find
    their peer lost. `poke()` makes it look at once (from an on_line callback); it also looks
    every 50 ms. After `stop()`: `killed` is (pid, seconds after start()) or None, and `why`
    says what it found when it could not kill."""

    def __init__(self, seed, trained):
        self.seed = seed
        self.trained = trained
        self.killed = None
        self.why = "the job's first epoch line never appeared"
        self._look = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._started = None

    def start(self):
        self._started = time.monotonic()
        self._thread.start()
        return self

    def poke(self):
        self._look.set()

    def stop(self):
        self._stop.set()
        self._look.set()
        self._thread.join(10)

    def _signal(self, pids, sig):
        """The pids of `pids` that got `sig` (the others have exited)."""
        sent = []
        for pid in pids:
            try:
                os.kill(pid, sig)
                sent.append(pid)
            except ProcessLookupError:
                pass
        return sent

    def _watch(self):
        while not self._stop.is_set():
            self._look.wait(0.05)
            self._look.clear()
            if not self.trained():
                continue
            frozen = self._signal(train_processes(self.seed), signal.SIGSTOP)
            if not frozen:
                self.why = "no train process left when its first epoch line appeared"
                return
            os.kill(frozen[-1], signal.SIGKILL)
            self._signal(frozen[:-1], signal.SIGCONT)
            self.killed = (frozen[-1], time.monotonic() - self._started)
            return


def expect_success(run, what):
    expect(run.rc == 0, "%s: spark-submit exits 0" % what, "exit status %s" % run.rc)


def expect_failure(run, what, within):
    """The job failed: spark-submit exited non-zero within `within` seconds."""
    expect(run.rc != 0, "%s: spark-submit exits non-zero" % what, "exit status 0")
    expect(run.seconds < within, "%s: and promptly, within %d s" % (what, within),
           "%.1f s" % run.seconds)


# train.py's closing line: `sparktorch: job N trained R rows in A attempt(s): ...; model
# written to PATH`. Only its stable parts are read.
CLOSING = r"^sparktorch: job (\d+) trained (\d+) rows.*model written to (\S+)"
ACCURACY = r"^sparktorch: accuracy ([0-9.]+) \((\d+) of (\d+) rows\)"
# The driver's line when the tasks read their rows from the DataFrame's Parquet files themselves
# (readParquet): group 1 the tasks, group 2 the files. Without it the rows went through Spark.
READS_PARQUET = (r"^sparktorch: the (\d+) tasks read their rows from the (\d+) Parquet files? "
                 r"themselves \(readParquet\)")


def reads_parquet(run):
    """The match of READS_PARQUET in `run`'s output, or None."""
    return re.search(READS_PARQUET, run.text, re.MULTILINE)


def train_args(source, mode, iters, output, binary=None, partitions=2, more=()):
    """spark-scripts/train.py's arguments for the MLP of examples/fashion_mnist_mlp.json."""
    return [os.path.join(REPO, "spark-scripts", "train.py"), "--source", source,
            "--torchObj", SPEC, "--labelCol", "label", "--mode", mode, "--iters", str(iters),
            "--partitions", str(partitions), "--binary", binary or SPARKTORCH,
            "--output", output] + list(more)


def expect_prompt_exit(run, pattern, what, limit=15.0):
    """spark-submit exited within `limit` seconds of its stdout line matching `pattern`: after a
    barrier stage on a local master, Spark 2.4's barrier timer threads once kept it alive."""
    after = run.seconds_after(pattern)
    expect(after < limit, "%s: spark-submit exits %.1f s after its last line (< %g s)"
           % (what, after, limit), "%.1f s" % after)


def binary_predictions(model):
    """`sparktorch predict --model MODEL` on the integration fixture's test2k.csv (the rows of
    test.parquet): the class of every row, in order. (A model trained through Spark remembers
    the `vector` rows it was fed: --format csv reads the CSV rows.)"""
    done = subprocess.run([SPARKTORCH, "predict", "--model", model, "--format", "csv",
                           "--input", os.path.join(DATA, "test2k.csv")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, check=False)
    if done.returncode != 0:
        fail("sparktorch predict --model %s exited %d: %s"
             % (model, done.returncode, done.stderr.decode(errors="replace")[-600:]))
    return [float(v) for v in done.stdout.decode().split()]


def test_labels():
    with open(os.path.join(DATA, "test2k.csv")) as f:
        return [float(line.split(",", 1)[0]) for line in f]


def read_csv_dir(path):
    """The rows (dicts) of the part files of a CSV folder Spark wrote, part file by part file."""
    rows = []
    csv.field_size_limit(1 << 30)
    for part in sorted(glob.glob(os.path.join(path, "part-*"))):
        with open(part, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def expect_torch_model(path, what, rows=None):
    """The file at `path` is a TorchScript model that torch.jit.load reads in PyTorch 2.x
    and that maps rows of 784 features to 10 outputs; returns its classes for `rows` (lists of
    784 floats)."""
    import torch  # pylint: disable=import-outside-toplevel  # only the tests that need it
    try:
        module = torch.jit.load(path)
    except Exception as e:  # pylint: disable=broad-except
        fail("%s: torch.jit.load(%s): %s" % (what, path, e))
    batch = torch.tensor(rows if rows else [[0.0] * 784], dtype=torch.float32)
    with torch.no_grad():
        outputs = module(batch)
    expect(tuple(outputs.shape) == (len(batch), 10),
           "%s: torch.jit.load reads %s; it maps %d rows to 10 outputs each"
           % (what, path, len(batch)), tuple(outputs.shape))
    return [float(c) for c in outputs.argmax(dim=1).tolist()]


def test_rows(count):
    """The features of the first `count` rows of test2k.csv."""
    out = []
    with open(os.path.join(DATA, "test2k.csv")) as f:
        for line in f:
            if len(out) == count:
                break
            out.append([float(v) for v in line.split(",")[1:]])
    return out


def done():
    """Ends a test that passed: deletes the folders that its local-cluster applications left
    under $SPARK_HOME/work (Spark keeps them after an application ends)."""
    for run in _runs:
        folder = run.app_folder()
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    print("passed", flush=True)

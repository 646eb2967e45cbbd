"""spark-real.compat: sparktorch_spark.compat, SparkTorch 0.2.0's API over sparktorch.

  compat_test.py sparktorch_tests local
      SparkTorch 0.2.0's own unit tests (sparktorch/tests/test_sparktorch.py of its release,
      which the base environment installs, with its simple_net.py), copied here with only the
      import lines changed to sparktorch_spark.compat, run by pytest on local[2] as they are
      written, with SparkTorch itself made unimportable: all 12 pass, each a fit and a
      transform through the binary on PATH.
  compat_test.py cases local|cluster
      compat_cases.py (pytest) on that master: SparkTorch's examples (a DNN in a saved Pipeline,
      the lazy CNN with validation and early stopping, an autoencoder with useVectorOut, hogwild
      with and without its lock, barrier and not), the messages for what cannot be the same,
      the defaults against SparkTorch 0.2.0's own, labelCol=None in the native API, and
      Pipelines that SparkTorch 0.2.0 itself saved, read through unwrap and the converter.
  compat_test.py old_pipelines local|cluster
      compat_cases.py's tests of Pipelines that SparkTorch 0.2.0 saved, alone.
"""
import os
import re
import sys

from lib import (PYTHON, REPO, SPARKTORCH, blame, check, done, expect, expect_in, fail,
                 run_python, setup)

# The lines of SparkTorch's test file that name SparkTorch's modules, and what they become.
IMPORTS = {
    "from sparktorch.inference import create_spark_torch_model":
        "from sparktorch_spark.compat import create_spark_torch_model",
    "from sparktorch.util import serialize_torch_obj, serialize_torch_obj_lazy":
        "from sparktorch_spark.compat import serialize_torch_obj, serialize_torch_obj_lazy",
    "from sparktorch.torch_distributed import SparkTorch":
        "from sparktorch_spark.compat import SparkTorch",
    "from sparktorch.tests.simple_net import Net, AutoEncoder, ClassificationNet, "
    "NetworkWithParameters":
        "from simple_net import Net, AutoEncoder, ClassificationNet, NetworkWithParameters",
}
SPARKTORCH_TESTS = 12  # the test functions of SparkTorch 0.2.0's test_sparktorch.py


def sparktorch_package():
    """The folder of the installed SparkTorch 0.2.0 (the base environment's)."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    spec = importlib.util.find_spec("sparktorch")
    if spec is None or not spec.submodule_search_locations:
        fail("SparkTorch 0.2.0 is not installed beside this Spark (examples/install_python.sh's "
             "base environment has it)")
    return list(spec.submodule_search_locations)[0]


def blocker():
    """A folder whose `sparktorch` package refuses to import, first on PYTHONPATH: the tests run
    on sparktorch_spark alone."""
    os.makedirs("blocker/sparktorch")
    with open("blocker/sparktorch/__init__.py", "w") as f:
        f.write("raise ImportError('SparkTorch itself is not used by these tests')\n")
    return os.path.abspath("blocker")


def test_env(extra_path=()):
    paths = list(extra_path) + [os.path.join(REPO, "spark-scripts")]
    return {"PATH": os.path.dirname(os.path.abspath(SPARKTORCH)) + os.pathsep +
                    os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(paths),
            "SPARKTORCH_BINARY": os.path.abspath(SPARKTORCH)}


def pytest_summary(run, expected, deselected=0):
    """Checks pytest's closing line: `expected` passed (and `deselected` not run), nothing
    failed, skipped or errored."""
    lines = [line for line in run.out.splitlines()
             if re.match(r"^=* ?\d+ (passed|failed|error)", line)]
    if not lines:
        fail("pytest's summary line: none in its output")
    counts = dict((kind, int(n)) for n, kind in re.findall(
        r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)", lines[-1]))
    wanted = dict({"passed": expected}, **({"deselected": deselected} if deselected else {}))
    expect(counts == wanted and run.rc == 0,
           "pytest: %d passed, nothing else (exit 0)" % expected,
           "%r (exit %s)" % (lines[-1], run.rc))


def sparktorch_tests():
    package = sparktorch_package()
    check("SparkTorch 0.2.0's own test file, with only its imports changed")
    with open(os.path.join(package, "tests", "test_sparktorch.py")) as f:
        original = f.read().splitlines()
    changed = [IMPORTS.get(line, line) for line in original]
    differ = [(a, b) for a, b in zip(original, changed) if a != b]
    expect(len(differ) == len(IMPORTS) and len(changed) == len(original),
           "the %d import lines, and nothing else, changed" % len(IMPORTS), differ)
    expect(not [line for line in changed if re.match(r"\s*(from|import) sparktorch\b", line)],
           "no line imports SparkTorch any more")
    tests = [line for line in changed if line.startswith("def test_")]
    expect(len(tests) == SPARKTORCH_TESTS, "%d test functions" % SPARKTORCH_TESTS, len(tests))
    with open("test_sparktorch.py", "w") as f:
        f.write("\n".join(changed) + "\n")
    with open(os.path.join(package, "tests", "simple_net.py")) as f, \
            open("simple_net.py", "w") as out:
        out.write(f.read())

    check("pytest runs them on local[2] (their fixture's master), SparkTorch unimportable")
    run = run_python("pytest", ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                                "test_sparktorch.py"], timeout=1200,
                     env=test_env([blocker(), os.getcwd()]))
    blame(run)
    pytest_summary(run, SPARKTORCH_TESTS)
    # (Spark's progress bar may come first on the line)
    jobs = re.findall(r"sparktorch: job \d+ \(attempt 1 of \d+\): 2 sync tasks", run.out)
    expect(len(jobs) == SPARKTORCH_TESTS, "each test's fit was a sparktorch job of 2 sync tasks "
           "(the driver's line, in pytest's captured output)", len(jobs))


def cases(master, only=None):
    """compat_cases.py's tests on `master`; `only`: those whose name starts test_ONLY."""
    check("compat_cases.py on %s%s" % (master, " (test_%s*)" % only if only else ""))
    here = os.path.dirname(os.path.abspath(__file__))
    env = test_env([blocker(), here])
    env.update(COMPAT_MASTER=master, COMPAT_WORK=os.getcwd())
    with open(os.path.join(here, "compat_cases.py")) as f:
        every = re.findall(r"^def (test_\w+)", f.read(), re.MULTILINE)
    names = [name for name in every if name.startswith("test_" + (only or ""))]

    def count(tests):
        return len(tests) + sum(1 for name in tests if name == "test_hogwild")  # 2 parameter sets
    run = run_python("pytest", ["-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                                os.path.join(here, "compat_cases.py")] +
                     (["-k", " or ".join(names)] if only else []), timeout=1800, env=env)
    blame(run)
    pytest_summary(run, count(names), count(every) - count(names))


def main():
    what = sys.argv[1] if len(sys.argv) > 2 else ""
    where, master = setup("compat_" + what)
    if what == "sparktorch_tests":
        sparktorch_tests()
    elif what == "cases":
        cases(master)
    elif what == "old_pipelines":
        cases(master, "old_pipeline")
    else:
        fail("usage: compat_test.py sparktorch_tests|cases|old_pipelines local|cluster")
    print("  python: %s" % PYTHON, flush=True)
    del where
    done()


if __name__ == "__main__":
    main()

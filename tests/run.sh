#!/usr/bin/env bash
# Installs the Debian packages (as root) and the Python environments (from their lock files),
# builds sparktorch with its tests, and runs them all through CTest. Runs from any directory.
# The exit code is CTest's; the last line counts the tests: `tests: N passed, N failed, N
# skipped` (a test that cannot run here, such as one without its Spark line, is skipped and says
# why; where CI=true a skip is a failure, tests/skip.sh).
#   BUILD_DIR  build folder (default: build/)   CTEST_ARGS  extra ctest arguments, e.g. "-R formats"
#   SPARKTORCH_PYENV  where examples/install_python.sh keeps the Python environments from PyPI
#              (default /opt/sparktorch-python): PyTorch 2.x, the peers, and stock Spark 3.5 and
#              4.x, whose spark-real tests run on both lines. Each is installed from its lock
#              (examples/python-locks/) and checked against it before anything runs: one that
#              drifted is made again, and one that still differs stops the run with a line that
#              names the package and both versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

examples/install_deps.sh
pyenv=$(examples/install_python.sh)
echo "run.sh: Python environments (PyTorch 2.x, Spark 3.5 and 4.x), each as its lock says: $pyenv"
CMAKE_ARGS="${CMAKE_ARGS:-} -DSPARKTORCH_PYENV=$pyenv" examples/build.sh

build_dir=$(cd "${BUILD_DIR:-build}" && pwd)
junit=$build_dir/ctest-results.xml
rm -f "$junit"
rc=0
# shellcheck disable=SC2086  # CTEST_ARGS is a list of words
ctest --test-dir "$build_dir" --output-on-failure -j2 --output-junit "$junit" ${CTEST_ARGS:-} ||
  rc=$?
# CTest's summary counts a skipped test as passed; this line tells them apart. A test CTest did
# not run for another reason (a failed fixture, no executable) counts as failed, as CTest has it.
python3 - "$junit" <<'PY' || true
import sys
import xml.etree.ElementTree as ET
counts = {"passed": 0, "failed": 0, "skipped": 0}
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    skipped = case.find("skipped")
    if case.get("status") == "run":
        counts["passed"] += 1
    elif case.get("status") == "disabled" or (
            skipped is not None and skipped.get("message", "").startswith("SKIP_RETURN_CODE")):
        counts["skipped"] += 1
    else:
        counts["failed"] += 1
print("tests: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts)
PY
exit "$rc"

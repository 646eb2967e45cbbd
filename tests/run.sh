#!/usr/bin/env bash
# Installs the Debian packages (as root), builds sparktorch with its tests, and runs them all
# through CTest. The exit code is CTest's. Runs from any directory.
#   BUILD_DIR  build folder (default: build/)   CTEST_ARGS  extra ctest arguments, e.g. "-R formats"
#   SPARKTORCH_PYENV  where examples/install_python.sh keeps the Python environments from PyPI
#              (default /opt/sparktorch-python): PyTorch 2.x, the peers, and stock Spark 3.5 and
#              4.x, whose spark-real tests run on both lines; reused when already there
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

examples/install_deps.sh
pyenv=$(examples/install_python.sh)
echo "run.sh: Python environments (PyTorch 2.x, Spark 3.5 and 4.x): $pyenv"
CMAKE_ARGS="${CMAKE_ARGS:-} -DSPARKTORCH_PYENV=$pyenv" examples/build.sh

# shellcheck disable=SC2086  # CTEST_ARGS is a list of words
exec ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 ${CTEST_ARGS:-}

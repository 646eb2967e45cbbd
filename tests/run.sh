#!/usr/bin/env bash
# Installs the Debian packages (as root), builds sparktorch with its tests, and runs them all
# through CTest. The exit code is CTest's. Runs from any directory.
#   BUILD_DIR  build folder (default: build/)   CTEST_ARGS  extra ctest arguments, e.g. "-R formats"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

examples/install_deps.sh
examples/build.sh

# shellcheck disable=SC2086  # CTEST_ARGS is a list of words
exec ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 ${CTEST_ARGS:-}

#!/usr/bin/env bash
# Installs the Debian packages (as root), builds sparktorch with its tests, and runs them all
# through CTest. The exit code is CTest's. Runs from any directory.
#   BUILD_DIR  build folder (default: build/)   CTEST_ARGS  extra ctest arguments, e.g. "-R formats"
#   SPARK_HOME the Spark for the spark-real tests (default: the Spark 2.4.4 of ../shared/spark,
#              installed to /opt by its install.sh, with Java 17; none there: they are skipped)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

examples/install_deps.sh

spark_home=${SPARK_HOME:-}
shared_spark=../shared/spark/install.sh
if [[ -z $spark_home && -x $shared_spark ]]; then
  spark_home=$("$shared_spark") ||
    { echo "run.sh: $shared_spark failed: the spark-real tests are skipped" >&2; spark_home=; }
fi
echo "run.sh: Spark for the spark-real tests: ${spark_home:-none}"
CMAKE_ARGS="${CMAKE_ARGS:-} -DSPARKTORCH_SPARK_HOME=$spark_home" examples/build.sh

# shellcheck disable=SC2086  # CTEST_ARGS is a list of words
exec ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j2 ${CTEST_ARGS:-}

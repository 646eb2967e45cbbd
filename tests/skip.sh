#!/usr/bin/env bash
# skip.sh WHY: what a test runs when it cannot run here (no Spark line, no parquet-testing
# corpus, no pyarrow, no network namespaces). It prints `skipped: WHY` and exits 77, which CTest
# reports as skipped (SKIP_RETURN_CODE 77) and tests/run.sh counts in its closing line. Where
# CI=true (.ci/run), nothing may be skipped: it prints `FAIL: WHY (CI=true: a skip is a
# failure)` and exits 1. Scripts in other languages follow the same rule (tests/README.md).
if [[ ${CI:-} == true ]]; then
  echo "FAIL: $* (CI=true: a skip is a failure)"
  exit 1
fi
echo "skipped: $*"
exit 77

#!/usr/bin/env bash
# The suite as a fresh machine runs it, on this one: clones the committed HEAD into a throwaway
# folder (../shared beside it, as CI has it), gives it a new SPARKTORCH_PYENV and a new build
# folder, and runs ./tests/run.sh there with CI=true, so the Python environments are installed
# from the lock files alone and nothing is skipped. A venv, a build folder or an uncommitted file
# of this checkout cannot hide a broken install. (The Debian packages are this machine's:
# examples/install_deps.sh installs what is missing, as on a fresh machine.) Takes the suite's
# time plus the install and a whole build: about an hour on 2 cores.
#   KEEP=1       keep the throwaway folder (default: removed when the suite passes)
#   FRESH_ROOT   where to make it (default: a new folder under /tmp)
#   CTEST_ARGS   passed on, e.g. "-L spark-real" to run a part
# Prints the suite's output, then one line: `fresh_check: PASSED|FAILED (exit N) in M min, at
# COMMIT: <run.sh's closing line>`. Exit status: run.sh's.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
shared=$(cd "$repo/../shared" 2>/dev/null && pwd) || shared=""
commit=$(git -C "$repo" rev-parse --short HEAD)
[[ -z $(git -C "$repo" status --porcelain) ]] ||
  echo "fresh_check: the checkout has uncommitted changes; testing the commit $commit without them" >&2

root=${FRESH_ROOT:-$(mktemp -d /tmp/sparktorch-fresh.XXXXXX)}
mkdir -p "$root"
git clone -q "$repo" "$root/main"
[[ -n $shared ]] && ln -s "$shared" "$root/shared"
echo "fresh_check: $commit in $root/main, SPARKTORCH_PYENV=$root/pyenv, build in $root/main/build" >&2

start=$(date +%s)
rc=0
(cd "$root/main" && env CI=true SPARKTORCH_PYENV="$root/pyenv" BUILD_DIR="$root/main/build" \
  ./tests/run.sh) 2>&1 | tee "$root/run.log" || rc=${PIPESTATUS[0]}
minutes=$((($(date +%s) - start + 59) / 60))
closing=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$root/run.log" |
  tail -n 1 || true)
verdict=PASSED
((rc == 0)) || verdict=FAILED
echo "fresh_check: $verdict (exit $rc) in $minutes min, at $commit: ${closing:-no closing line}"
if ((rc == 0)) && [[ ${KEEP:-0} != 1 ]]; then
  rm -rf "$root"
else
  echo "fresh_check: kept $root (its log: $root/run.log)" >&2
fi
exit "$rc"

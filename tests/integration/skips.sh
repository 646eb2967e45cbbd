#!/usr/bin/env bash
# Skips are visible, and on CI they fail (tests/skip.sh; tests/README.md): tests/skip.sh and
# tests/formats/parquet_conformance.py without pyarrow (Debian's /usr/bin/python3 has none) exit
# 77 with `skipped: WHY`, and with CI=true exit 1 with `FAIL: WHY (CI=true: a skip is a
# failure)`; tests/run.sh's closing line counts a skipped test apart from the passed ones.
# The binary is not run.
source "$(dirname "$0")/lib.sh"
setup_workdir skips

# run_rc FILE COMMAND...: runs COMMAND with its output in FILE; sets RC to its exit status.
run_rc() {
  local out=$1
  shift
  RC=0
  "$@" >"$out" 2>&1 || RC=$?
}

check "tests/skip.sh: skipped (77) here, failed (1) where CI=true, one line saying why"
run_rc skip.txt env -u CI bash "$REPO/tests/skip.sh" "no Spark 3.5 here"
assert_eq 77 "$RC" "exit status without CI"
assert_eq "skipped: no Spark 3.5 here" "$(cat skip.txt)" "its line"
run_rc ci.txt env CI=true bash "$REPO/tests/skip.sh" "no Spark 3.5 here"
assert_eq 1 "$RC" "exit status with CI=true"
assert_eq "FAIL: no Spark 3.5 here (CI=true: a skip is a failure)" "$(cat ci.txt)" "its line"

check "parquet_conformance.py without pyarrow: the same rule"
python3=/usr/bin/python3
if "$python3" -c 'import pyarrow' 2>/dev/null; then
  fail "$python3 has pyarrow: this check needs a Python without it"
fi
args=("$REPO/tests/formats/parquet_conformance.py" --dump /nonexistent --corpus /nonexistent
  --work "$T/pc")
run_rc pc.txt env -u CI "$python3" "${args[@]}"
assert_eq 77 "$RC" "exit status without CI"
assert_eq "parquet_conformance: skipped: No module named 'pyarrow' (examples/install_python.sh's base environment has it)" \
  "$(cat pc.txt)" "its line"
run_rc pc_ci.txt env CI=true "$python3" "${args[@]}"
assert_eq 1 "$RC" "exit status with CI=true"
assert_eq "parquet_conformance: FAIL: No module named 'pyarrow' (examples/install_python.sh's base environment has it) (CI=true: a skip is a failure)" \
  "$(cat pc_ci.txt)" "its line"

check "run.sh's closing line counts a skipped test apart (CTest's JUnit of a small project)"
mkdir project
cat >project/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME skipped COMMAND bash $REPO/tests/skip.sh "nothing here")
set_tests_properties(skipped PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME fails COMMAND false)
add_test(NAME not_run COMMAND /nonexistent/command)
CMAKE
cmake -S project -B project/build >/dev/null
env -u CI ctest --test-dir project/build --output-junit "$T/junit.xml" >ctest.txt 2>&1 || true
sed -n "/^python3 - \"\$junit\" <<'PY'/,/^PY$/p" "$REPO/tests/run.sh" | sed '1d;$d' >count.py
[[ -s count.py ]] || fail "no closing-line counter in tests/run.sh"
assert_eq "tests: 1 passed, 2 failed, 1 skipped" "$(python3 count.py junit.xml)" "the closing line"

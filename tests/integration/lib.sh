# shellcheck shell=bash
# Helpers shared by the integration tests; each test script sources this file first.
#
# The environment (CTest sets it; set it by hand to run a script alone):
#   SPARKTORCH  the binary under test
#   REPO        the source tree (examples/, formats/)
#   WORK        a scratch folder; each test works in $WORK/<test name>, wiped at its start
#   DATA        the Fashion-MNIST rows that data.sh prepares (default: $WORK/../data)
#
# Every check prints what it checks; the first failed one ends the script with exit status 1
# and a line on stderr saying what was expected and what was found.

set -euo pipefail

: "${SPARKTORCH:?set SPARKTORCH to the sparktorch binary}"
: "${REPO:?set REPO to the source tree}"
: "${WORK:?set WORK to a scratch folder}"
DATA=${DATA:-$WORK/../data}

# One LibTorch thread per process: the suite runs two tests at a time on two cores, and a
# 2-thread process sharing a core with another test runs many times slower.
export OMP_NUM_THREADS=1

# fail MESSAGE: ends the test.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# check MESSAGE: says what the next assertions check.
check() {
  echo "check: $*"
}

# setup_workdir NAME: creates an empty $WORK/NAME and changes into it; sets T to it.
setup_workdir() {
  T="$WORK/$1"
  rm -rf "$T"
  mkdir -p "$T"
  cd "$T"
}

# require_data FILE...: fails unless data.sh has prepared these files under $DATA.
require_data() {
  local f
  for f in "$@"; do
    [[ -s "$DATA/$f" ]] || fail "$DATA/$f is missing: run the integration.data test (data.sh) first"
  done
}

# assert_eq EXPECTED ACTUAL WHAT
assert_eq() {
  [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
  echo "  ok: $3 = '$2'"
}

# assert_ne UNEXPECTED ACTUAL WHAT
assert_ne() {
  [[ "$1" != "$2" ]] || fail "$3: expected anything but '$1'"
  echo "  ok: $3 != '$1'"
}

# assert_cmp LEFT OP RIGHT WHAT: numeric comparison (OP: < <= > >= ==), floats allowed.
assert_cmp() {
  awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
    if (a !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || b !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) exit 2
    a += 0; b += 0
    if (op == "<") ok = a < b; else if (op == "<=") ok = a <= b; else if (op == ">") ok = a > b
    else if (op == ">=") ok = a >= b; else if (op == "==") ok = a == b; else exit 2
    exit ok ? 0 : 1 }' || fail "$4: expected $1 $2 $3"
  echo "  ok: $4: $1 $2 $3"
}

# assert_same_file EXPECTED ACTUAL WHAT: byte-identical files.
assert_same_file() {
  cmp -s "$1" "$2" || fail "$3: $2 differs from $1 ($(cmp "$1" "$2" 2>&1 | head -1))"
  echo "  ok: $3 ($2 = $1, $(wc -c <"$2" | tr -d ' ') bytes)"
}

# assert_lines N FILE WHAT
assert_lines() {
  assert_eq "$1" "$(wc -l <"$2" | tr -d ' ')" "$3"
}

# run_ok OUT CMD...: runs CMD with stdout to OUT and stderr to OUT.err; fails unless it exits 0.
run_ok() {
  local out=$1 rc=0
  shift
  "$@" >"$out" 2>"$out.err" || rc=$?
  [[ $rc -eq 0 ]] || fail "'$*' exited $rc; stderr: $(tail -3 "$out.err")"
}

# expect_exit CODE "STDERR" [--stdout-empty] -- CMD...: runs CMD (stdout to last.out, stderr to
# last.err) and fails unless it exits CODE and its stderr is exactly the one line STDERR.
# Run CMD with -q so that nothing but the error reaches stderr. --stdout-empty also requires
# that nothing reached stdout (a failed train must leave no records behind).
expect_exit() {
  local code=$1 line=$2 empty=0 rc=0
  shift 2
  if [[ $1 == --stdout-empty ]]; then
    empty=1
    shift
  fi
  [[ $1 == -- ]] || fail "expect_exit: usage: expect_exit CODE LINE [--stdout-empty] -- CMD..."
  shift
  "$@" >last.out 2>last.err || rc=$?
  [[ $rc -eq $code ]] || fail "'$*': expected exit $code, got $rc; stderr: $(head -c 600 last.err)"
  [[ "$(cat last.err)" == "$line" ]] ||
    fail "'$*': expected stderr to be exactly:
  $line
got ($(wc -l <last.err) lines):
  $(head -c 1200 last.err)"
  if [[ $empty -eq 1 && -s last.out ]]; then
    fail "'$*': expected nothing on stdout, got: $(head -c 200 last.out)"
  fi
  echo "  ok: exit $code, '$line'"
}

# expect_exit_match CODE REGEX -- CMD...: CMD exits CODE, writes nothing on stdout and one line on
# stderr that matches the extended REGEX whole (for a message with a part that varies: a hash).
expect_exit_match() {
  local code=$1 regex=$2 rc=0
  shift 2
  [[ $1 == -- ]] || fail "expect_exit_match: usage: expect_exit_match CODE REGEX -- CMD..."
  shift
  "$@" >last.out 2>last.err || rc=$?
  [[ $rc -eq $code ]] || fail "'$*': expected exit $code, got $rc; stderr: $(head -c 600 last.err)"
  [[ $(wc -l <last.err) -eq 1 ]] && grep -Eqx -- "$regex" last.err ||
    fail "'$*': expected one line on stderr matching
  $regex
got ($(wc -l <last.err) lines):
  $(head -c 1200 last.err)"
  [[ -s last.out ]] && fail "'$*': expected nothing on stdout, got: $(head -c 200 last.out)"
  echo "  ok: exit $code, '$(cat last.err)'"
}

# accuracy PREDICTIONS LABELS: prints the fraction of lines that agree; fails on a count mismatch.
accuracy() {
  [[ $(wc -l <"$1") -eq $(wc -l <"$2") ]] ||
    fail "accuracy: $1 has $(wc -l <"$1") lines, $2 has $(wc -l <"$2")"
  paste -d' ' "$1" "$2" | awk '$1 == $2 { c++ } END { printf "%.4f\n", c / NR }'
}

# summary_field FILE KEY: the value of KEY in the (one) S record of a record stream FILE.
summary_field() {
  local n
  n=$(grep -c $'^S\t' "$1" || true)
  [[ $n -eq 1 ]] || fail "$1: expected one S record, found $n"
  grep $'^S\t' "$1" | cut -f2- | python3 -c '
import json, sys
v = json.load(sys.stdin).get(sys.argv[1], "<absent>")
print(json.dumps(v) if isinstance(v, (bool, list, dict)) or v is None else v)' "$2"
}

# torch_python: prints an interpreter that imports torch (Debian's python3-torch belongs to
# /usr/bin/python3; the first python3 on PATH may lack it). Fails when there is none.
torch_python() {
  local py
  for py in "${TORCH_PYTHON:-}" /usr/bin/python3 python3; do
    [[ -n $py ]] && "$py" -c 'import torch' 2>/dev/null && { echo "$py"; return; }
  done
  fail "no python3 that imports torch (install python3-torch, or set TORCH_PYTHON)"
}

# Background processes and partitions, for the tests of more than one process.

# wait_for PID: waits for the background process PID; sets RC to its exit status. (Not in a
# $(...) subshell: only this shell can wait for its children.)
wait_for() {
  RC=0
  wait "$1" || RC=$?
}

# wait_port_file PID FILE WHAT LOG: waits (up to 30 s) for the `sparktorch serve` process PID to
# write FILE (its --port-file); fails, quoting LOG (its stderr), when it exits or never does.
wait_port_file() {
  local i
  for i in $(seq 300); do
    [[ -s $2 ]] && return
    kill -0 "$1" 2>/dev/null || fail "the $3 exited before it listened: $(cat "$4")"
    sleep 0.1
  done
  fail "the $3 wrote no $2 in 30 s: $(cat "$4")"
}

# split_rows FILE COUNT... : writes part0.csv, part1.csv, ... with COUNT rows each, in order.
split_rows() {
  local file=$1 start=1 i=0 count
  shift
  for count in "$@"; do
    if ((count > 0)); then
      sed -n "${start},$((start + count - 1))p" "$file" >"part$i.csv"
    else
      : >"part$i.csv"
    fi
    start=$((start + count))
    i=$((i + 1))
  done
}

# now: seconds since the epoch, with a fraction.
now() { date +%s.%N; }

# The MLP without dropout (dropout masks would differ between one process and many).
write_mlp_spec() {
  cat >"$1" <<'JSON'
{"layers": [{"type": "linear", "in_features": 784, "out_features": 64}, "relu",
            {"type": "linear", "in_features": 64, "out_features": 10}],
 "loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}
JSON
}

# summary_eval FILE EXPR: evaluates the Python expression EXPR with `s` bound to the (one) S
# record of FILE, e.g. summary_eval server.out 'sorted(s["workers_finished"])'.
summary_eval() {
  local n
  n=$(grep -c $'^S\t' "$1" || true)
  [[ $n -eq 1 ]] || fail "$1: expected one S record, found $n"
  grep $'^S\t' "$1" | cut -f2- | python3 -c '
import json, sys
s = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (bool, list, dict)) or v is None else v)' "$2"
}

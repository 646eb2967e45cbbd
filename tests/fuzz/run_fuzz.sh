#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang++ into BUILD_DIR, fuzzes each for
# SECONDS on a copy of its seed corpus, then runs every seed through it once more.
# Exits non-zero when a target crashes; the input that crashed it is kept in BUILD_DIR/crashes/.
#
# Usage: tests/fuzz/run_fuzz.sh BUILD_DIR SECONDS
# Environment: CXX_FUZZ (the compiler, clang++ by default), FUZZ_BUILD_JOBS (default: all cores).
set -euo pipefail

if (($# != 2)) || [[ ! $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$1
seconds=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cxx=${CXX_FUZZ:-clang++}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v "$cxx" >/dev/null; then
  echo "run_fuzz: $cxx not found; the fuzzers need clang and libFuzzer" \
    "(Debian: apt-get install clang libclang-rt-14-dev, or examples/install_deps.sh)" >&2
  exit 1
fi
# clang without compiler-rt compiles but cannot link -fsanitize=fuzzer: find out before CMake
# does, with a message that says which package is missing.
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' \
  >"$work/probe.cc"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$work/probe.cc" -o "$work/probe" \
  2>"$work/probe.log"; then
  echo "run_fuzz: $cxx cannot link libFuzzer (-fsanitize=fuzzer); install its runtime" \
    "(Debian: apt-get install libclang-rt-14-dev, for clang 14)" >&2
  sed 's/^/  /' "$work/probe.log" >&2
  exit 1
fi

if [[ ! -f $build/CMakeCache.txt ]]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" --parallel "${FUZZ_BUILD_JOBS:-$(nproc)}"

# UBSan's reports carry no stack by default, and libFuzzer needs one to name the bug.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$build/crashes"
status=0
# The Parquet reader's seeds are the files the unit tests read (tests/formats/data/parquet and
# parquet_codecs) and apache/parquet-testing's in corpus/parquet, gathered here.
mkdir "$work/parquet_seeds"
cp "$here"/../formats/data/parquet/*.parquet "$here"/../formats/data/parquet_codecs/*.parquet \
  "$here"/corpus/parquet/*.parquet "$work/parquet_seeds/"
for pair in frame_fuzzer:"$here/corpus/frame" row_fuzzer:"$here/corpus/rows" \
  parquet_fuzzer:"$work/parquet_seeds"; do
  target=${pair%%:*}
  seeds=${pair#*:}
  corpus=$work/$target
  cp -r "$seeds" "$corpus"
  log=$work/$target.log
  echo "run_fuzz: $target for $seconds s on $(ls "$seeds" | wc -l) seeds"
  if ! "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/crashes/$target-" "$corpus" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "run_fuzz: $target FAILED; the input is in $build/crashes/ (rerun: $build/$target FILE)" >&2
    status=1
    continue
  fi
  # "Done 123456 runs in 20 second(s)"
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1/p' "$log")
  secs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log")
  if [[ -z $runs || $runs -eq 0 ]]; then
    tail -n 20 "$log" >&2
    echo "run_fuzz: $target ran no inputs" >&2
    status=1
    continue
  fi
  echo "run_fuzz: $target: $runs runs in $secs s ($((runs / (secs > 0 ? secs : 1))) per second)," \
    "corpus of $(ls "$seeds" | wc -l) seeds grew to $(ls "$corpus" | wc -l) inputs"

  # The seeds again, each once: they must pass on their own, not only as fuzzing starts.
  if ! "$build/$target" "$seeds"/* >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "run_fuzz: $target FAILED on a seed in $seeds" >&2
    status=1
  fi
done
exit "$status"

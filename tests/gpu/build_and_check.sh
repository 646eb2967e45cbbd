#!/usr/bin/env bash
# Builds sparktorch against the LibTorch of the machine's pip PyTorch (CUDA) and exercises its
# CUDA path: (a) trains the MLP of examples/fashion_mnist_mlp.json for 3 epochs on 2,000 rows with
# --device cuda, and with --device cpu; (b) predicts 1,000 test rows with the cuda-trained model on
# cuda and on cpu, which must agree line for line; (c) trains the CNN of
# examples/fashion_mnist_cnn.json for 2 epochs on cuda; (d) --device cuda:1 must be refused with
# exit status 6 (one GPU), and `inspect` must read the model; (e) gpu_sync_check
# (tests/gpu/sync_check.cc): two synchronous ranks as threads on cuda must train the weights of one
# process on their joint batches (the machine has no MPI for sparktorch's own sync mode); (f) a
# hogwild job, `serve` and two workers with --device cuda, trains a model that predicts.
#
# Runs on the GPU machine (no network needed), from the repository root, with the kit that
# tests/gpu/make_kit.sh made as .gpu there (make_kit.sh copies this script into it):
#     tests/gpu/make_kit.sh                 # on a Debian bookworm machine with apt
#     bash .gpu/build_and_check.sh          # on the GPU machine
# Besides the machine's g++, cmake, ninja, nvcc and python3 with torch, everything it needs is in
# the kit: prefix/usr (Debian bookworm's nlohmann-json 3.11.2, CLI11 2.1.2, spdlog 1.10, fmt 9.1,
# protobuf 3.21.12 with protoc), zlib/ (headers and a link-time libz.so, used only when the
# machine has no zlib headers), cmake/kit_preload.cmake and data/. The kit is the folder this
# script is in, or $KIT.
#
# Writes to $OUT (default /tmp/sparktorch-gpu-out): log.txt (everything), summary.txt (the
# machine, the versions, one PASS or FAIL line a check, RESULT), build_errors.txt (only when
# configuring or building failed), metrics_cuda.jsonl, metrics_cpu.jsonl, metrics_cnn.jsonl.
# It builds in /tmp (sparktorch-src, build-gpu, sparktorch-gpu-work), never in the repository.
# Exit status: 0 all checks passed; 1 configure or build failed; 2 no kit, or not run from the
# repository root (nothing written); 3 built, but a check failed.
#
# Knobs (environment): KIT, the kit folder (default: this script's folder); KIT_DEADLINE_S
# (default 540): the whole run's time budget in seconds; KIT_JOBS (default 16);
# KIT_SELFTEST_BIN=/path/to/sparktorch: skip torch, configure and build, and run the checks with
# that binary and the gpu_sync_check of its build folder (for testing this script on a machine
# without a GPU: the cuda checks then fail).
set -euo pipefail
export LC_ALL=C

# The kit need not sit in the repository (KIT=...), so the repository is where this runs from.
REPO=$PWD
KIT=$(cd "${KIT:-$(dirname "${BASH_SOURCE[0]}")}" && pwd)
if [ ! -x "$KIT/prefix/usr/bin/protoc" ] || [ ! -f "$KIT/data/train.csv.gz" ]; then
  echo "build_and_check: $KIT is not a kit: make one with tests/gpu/make_kit.sh, or set KIT" >&2
  exit 2
fi
if [ ! -f "$REPO/CMakeLists.txt" ] || [ ! -f "$REPO/examples/fashion_mnist_mlp.json" ]; then
  echo "build_and_check: $REPO is not sparktorch's repository root: run this from there" >&2
  exit 2
fi
OUT=${OUT:-/tmp/sparktorch-gpu-out}
mkdir -p "$OUT"
SRC=/tmp/sparktorch-src      # a copy of the working tree, so the build never writes into REPO
BUILD=/tmp/build-gpu
WORK=/tmp/sparktorch-gpu-work
KITLIB=$KIT/prefix/usr/lib/x86_64-linux-gnu
JOBS=${KIT_JOBS:-16}
DEADLINE=${KIT_DEADLINE_S:-540}
T0=$SECONDS
SUMMARY=$OUT/summary.txt
ERRORS=$OUT/build_errors.txt

# Seconds left of the budget, and a step timeout: at most $1, at least 5, within the budget.
left() { echo $((DEADLINE - (SECONDS - T0))); }
cap() {
  local want=$1 l
  l=$(left)
  ((l < want)) && want=$l
  ((want < 5)) && want=5
  echo "$want"
}
say() { printf '\n==== %s (t=%ss)\n' "$*" "$((SECONDS - T0))"; }
sum() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

# The first compiler/CMake errors, then the last 300 lines, of log $2, under heading $1.
save_errors() {
  {
    printf '######## %s\n' "$1"
    printf '## first error lines:\n'
    grep -n -E 'error:|Error|FAILED:|undefined reference|fatal' "$2" | head -n 60 || true
    printf '## last 300 lines of %s:\n' "$(basename "$2")"
    tail -n 300 "$2"
  } >>"$ERRORS"
}

main() {
  set -euo pipefail
  : >"$SUMMARY"
  rm -f "$ERRORS"
  say "machine and tools"
  uname -a || true
  grep PRETTY_NAME /etc/os-release || true
  ldd --version 2>&1 | head -n 1 || true
  echo "nproc: $(nproc)"
  g++ --version || true
  cmake --version || true
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  nvcc --version || echo "nvcc: not found"
  echo "ninja $(ninja --version 2>&1 || echo missing)"
  python3 --version || true
  timeout 30 nvidia-smi -L || echo "nvidia-smi -L failed"
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>} OMP_NUM_THREADS=${OMP_NUM_THREADS-<unset>}"
  if [ -n "${KIT_SELFTEST_BIN:-}" ]; then
    selftest_checks
    return
  fi

  say "torch (python3)"
  local pyinfo
  pyinfo=$(timeout 120 python3 -c '
import os, torch
print(torch.utils.cmake_prefix_path)
print(os.path.join(os.path.dirname(torch.__file__), "lib"))
print("torch", torch.__version__, "cuda", torch.version.cuda,
      "cxx11abi", torch._C._GLIBCXX_USE_CXX11_ABI,
      "cuda_available", torch.cuda.is_available(), "devices", torch.cuda.device_count())
') || { sum "FAIL: python3 could not import torch"; return 1; }
  local torch_prefix torch_lib
  torch_prefix=$(sed -n 1p <<<"$pyinfo")
  torch_lib=$(sed -n 2p <<<"$pyinfo")
  echo "$pyinfo"
  sum "machine: $(grep -h PRETTY_NAME /etc/os-release 2>/dev/null | cut -d= -f2) | $(g++ --version | head -n 1) | $(cmake --version | head -n 1) | nvcc $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo '?')"
  sum "gpu: $(timeout 30 nvidia-smi -L 2>/dev/null | head -n 2 | tr '\n' ' ')"
  sum "$(sed -n 3p <<<"$pyinfo")"

  say "kit checks"
  "$KIT/prefix/usr/bin/protoc" --version || echo "WARN: the kit's protoc does not run"
  local zlib_flags=()
  if [ -f /usr/include/zlib.h ] && ls /usr/lib/x86_64-linux-gnu/libz.so /usr/lib64/libz.so /usr/lib/libz.so >/dev/null 2>&1; then
    echo "zlib: the system's"
  else
    echo "zlib: no system headers or libz.so; using the kit's ($KIT/zlib)"
    zlib_flags=(-DZLIB_INCLUDE_DIR="$KIT/zlib/include" -DZLIB_LIBRARY="$KIT/zlib/lib/libz.so")
  fi

  say "copy the sources to $SRC"
  rm -rf "$SRC" "$BUILD" "$WORK"
  mkdir -p "$SRC" "$WORK"
  tar -C "$REPO" --exclude=./.gpu --exclude=./.git --exclude=./build --exclude='./build-*' \
    --exclude=./out -cf - . | tar -C "$SRC" -xf - || { sum "FAIL: could not copy the sources"; return 1; }

  local nvcc_path
  nvcc_path=$(command -v nvcc || true)
  local base=(
    -S "$SRC" -B "$BUILD" -G Ninja
    -DCMAKE_BUILD_TYPE=Release
    -DSPARKTORCH_WITH_MPI=OFF -DSPARKTORCH_BUILD_TESTS=OFF -DSPARKTORCH_BUILD_BENCHMARKS=OFF
    -DSPARKTORCH_GPU_CHECK=ON
    "-DCMAKE_PREFIX_PATH=$KIT/prefix/usr;$torch_prefix"
    -DCMAKE_PROJECT_INCLUDE="$KIT/cmake/kit_preload.cmake"
    -DProtobuf_ROOT="$KIT/prefix/usr"
    -DProtobuf_INCLUDE_DIR="$KIT/prefix/usr/include"
    -DProtobuf_PROTOC_EXECUTABLE="$KIT/prefix/usr/bin/protoc"
    -DCMAKE_DISABLE_FIND_PACKAGE_Java=ON
    -DCMAKE_CUDA_ARCHITECTURES=90
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5
    -DPython_EXECUTABLE="$(command -v python3)"
    -DPYTHON_EXECUTABLE="$(command -v python3)"
  )
  [ -n "$nvcc_path" ] && base+=(-DCMAKE_CUDA_COMPILER="$nvcc_path")
  base+=(${zlib_flags[@]+"${zlib_flags[@]}"})
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  # protoc finds its libraries through its RUNPATH; this is for anything else the build runs.
  export LD_LIBRARY_PATH=$KITLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

  say "configure (attempt 1)"
  local rc=0 configured=""
  timeout -k 10 "$(cap 240)" cmake "${base[@]}" >"$WORK/configure1.log" 2>&1 || rc=$?
  cat "$WORK/configure1.log"
  if ((rc == 0)); then
    configured="attempt 1"
  else
    save_errors "configure attempt 1 failed (rc=$rc)" "$WORK/configure1.log"
    say "configure (attempt 2: CUDA::nvToolsExt shim, -allow-unsupported-compiler)"
    rm -rf "$BUILD"
    rc=0
    timeout -k 10 "$(cap 240)" cmake "${base[@]}" -DSPARKTORCH_KIT_NVTX_SHIM=ON \
      -DCMAKE_CUDA_FLAGS=-allow-unsupported-compiler >"$WORK/configure2.log" 2>&1 || rc=$?
    cat "$WORK/configure2.log"
    if ((rc != 0)); then
      save_errors "configure attempt 2 failed (rc=$rc)" "$WORK/configure2.log"
      sum "FAIL: configure failed twice; see build_errors.txt"
      return 1
    fi
    configured="attempt 2 (nvToolsExt shim, -allow-unsupported-compiler)"
  fi
  sum "configure: OK, $configured"
  grep -E '^(Torch_DIR|Caffe2_DIR|Protobuf_(LIBRARY_RELEASE|INCLUDE_DIR|PROTOC_EXECUTABLE)|ZLIB_(INCLUDE_DIR|LIBRARY_RELEASE)|nlohmann_json_DIR|spdlog_DIR|fmt_DIR|CLI11_DIR|CMAKE_CUDA_COMPILER|CUDAToolkit_NVCC_EXECUTABLE|CMAKE_CXX_COMPILER):' \
    "$BUILD/CMakeCache.txt" | tee -a "$SUMMARY" || true

  # The link of sparktorch must name the kit's libprotobuf (see cmake/kit_preload.cmake).
  if ! ninja -C "$BUILD" -t commands sparktorch | tail -n 1 | grep -q 'libprotobuf\.so'; then
    echo "the sparktorch link line has no libprotobuf.so: adding it to every link"
    cmake -DCMAKE_CXX_STANDARD_LIBRARIES="$KITLIB/libprotobuf.so" "$BUILD" >"$WORK/configure3.log" 2>&1 ||
      { cat "$WORK/configure3.log"; save_errors "re-configure with libprotobuf failed" "$WORK/configure3.log"; return 1; }
    sum "configure: libprotobuf.so added through CMAKE_CXX_STANDARD_LIBRARIES (fallback)"
  fi

  say "build (ninja -k 0 -j$JOBS sparktorch gpu_sync_check)"
  rc=0
  timeout -k 10 "$(cap 420)" ninja -C "$BUILD" -k 0 -j "$JOBS" sparktorch gpu_sync_check >"$WORK/build1.log" 2>&1 || rc=$?
  tail -n 400 "$WORK/build1.log"
  local built="pristine sources"
  if ((rc != 0)); then
    save_errors "build attempt 1 failed (rc=$rc)" "$WORK/build1.log"
    sum "build attempt 1: FAILED (rc=$rc); errors in build_errors.txt"
    local reconf=() why=()
    if grep -q -E 'C\+\+20 or later|only available with .-std=c\+\+20|requires. does not name a type' "$WORK/build1.log"; then
      reconf+=(-DSPARKTORCH_KIT_CXX20=ON)
      why+=("C++20")
    fi
    if grep -q -E 'cmake_pch|precompiled header' "$WORK/build1.log"; then
      reconf+=(-DSPARKTORCH_PCH=OFF)
      why+=("PCH off")
    fi
    if grep -q -E "'u?int(8|16|32|64)_t' (does not name a type|was not declared)|include '<cstdint>'" "$WORK/build1.log"; then
      reconf+=("-DCMAKE_CXX_FLAGS=-include cstdint")
      why+=("-include cstdint")
    fi
    if ((${#why[@]} == 0)); then
      sum "FAIL: build failed; no known fallback applies"
      return 1
    fi
    say "build attempt 2: ${why[*]}"
    if ((${#reconf[@]})); then
      cmake "${reconf[@]}" "$BUILD" >"$WORK/configure4.log" 2>&1 ||
        { cat "$WORK/configure4.log"; save_errors "re-configure for build attempt 2 failed" "$WORK/configure4.log"; return 1; }
      cat "$WORK/configure4.log"
    fi
    rc=0
    timeout -k 10 "$(cap 420)" ninja -C "$BUILD" -k 0 -j "$JOBS" sparktorch gpu_sync_check >"$WORK/build2.log" 2>&1 || rc=$?
    tail -n 400 "$WORK/build2.log"
    if ((rc != 0)); then
      save_errors "build attempt 2 (${why[*]}) failed (rc=$rc)" "$WORK/build2.log"
      sum "FAIL: build attempt 2 (${why[*]}) failed too; see build_errors.txt"
      return 1
    fi
    built="attempt 2: ${why[*]}"
  fi
  sum "build: OK ($built) in $((SECONDS - T0)) s since start"
  checks "$BUILD/sparktorch" "$torch_lib" "$SRC" "$BUILD/tests/gpu/gpu_sync_check"
}

selftest_checks() {
  sum "SELFTEST: no torch, no build; checks with $KIT_SELFTEST_BIN"
  mkdir -p "$WORK"
  checks "$KIT_SELFTEST_BIN" "" "$REPO" "$(dirname "$KIT_SELFTEST_BIN")/tests/gpu/gpu_sync_check"
}

# checks BINARY TORCH_LIB SOURCE_DIR SYNC_CHECK: the runs (a)-(f).
checks() {
  local bin=$1 torch_lib=$2 src=$3 sync_check=$4
  say "the binary"
  ls -la "$bin"
  readelf -d "$bin" >"$WORK/readelf.txt" || true
  grep -E 'NEEDED|RUNPATH|RPATH' "$WORK/readelf.txt" || true
  local runenv=(env "LD_LIBRARY_PATH=$KITLIB:$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  if grep -q 'libtorch_cuda\.so' "$WORK/readelf.txt"; then
    sum "binary: libtorch_cuda.so is NEEDED"
  else
    if [ -f "$torch_lib/libtorch_cuda.so" ]; then
      sum "WARN: libtorch_cuda.so is not NEEDED by the binary (--as-needed?); running with LD_PRELOAD=$torch_lib/libtorch_cuda.so"
      runenv+=("LD_PRELOAD=$torch_lib/libtorch_cuda.so")
    else
      sum "WARN: libtorch_cuda.so is not NEEDED by the binary, and there is no $torch_lib/libtorch_cuda.so to preload"
    fi
  fi
  "${runenv[@]}" ldd "$bin" | grep -E 'not found|torch|c10|cuda|protobuf|spdlog|fmt|libz' || true
  "${runenv[@]}" "$bin" --version || true

  say "data"
  cd "$WORK"
  gunzip -c "$KIT/data/train.csv.gz" >train.csv || { sum "FAIL: gunzip train.csv.gz"; return 1; }
  gunzip -c "$KIT/data/test.csv.gz" >test.csv || { sum "FAIL: gunzip test.csv.gz"; return 1; }
  cut -d, -f2- test.csv >test.features
  cp "$KIT/data/test.labels" test.labels
  wc -l train.csv test.features test.labels
  if ! cmp -s <(cut -d, -f1 test.csv) test.labels; then
    echo "WARN: test.labels differs from test.csv's first column"
  fi

  local failed=0 LAST_RC=0 LAST_WALL=0
  # run NAME TIMEOUT ARGS...: sparktorch ARGS > NAME.out 2> NAME.err, timed; sets LAST_RC, LAST_WALL.
  run() {
    local name=$1 to=$2 t1 t2
    shift 2
    LAST_RC=0
    t1=${EPOCHREALTIME:-$(date +%s.%N)}
    timeout -k 5 "$(cap "$to")" "${runenv[@]}" "$bin" "$@" >"$name.out" 2>"$name.err" || LAST_RC=$?
    t2=${EPOCHREALTIME:-$(date +%s.%N)}
    LAST_WALL=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
    echo "---- $name: sparktorch $* -> rc=$LAST_RC, wall ${LAST_WALL}s; stderr:"
    cat "$name.err"
    echo "---- $name: stdout (first 40 lines, 2000 chars each):"
    head -n 40 "$name.out" | cut -c1-2000
  }
  srecord() { grep -m 1 $'^S\t' "$1.out" || echo "(no S record)"; }
  devline() { grep -o -m 1 -E 'training .* on [0-9]+ rows.*, (cpu|cuda(:[0-9]+)?) with' "$1.err" | grep -o -E '(cpu|cuda(:[0-9]+)?) with$' | sed 's/ with$//' || echo '?'; }
  check() { # check OK_CONDITION_RC LABEL
    if [ "$1" = 0 ]; then sum "PASS: $2"; else sum "FAIL: $2"; failed=1; fi
  }
  local mlp=$src/examples/fashion_mnist_mlp.json cnn=$src/examples/fashion_mnist_cnn.json

  say "(a) MLP, 3 epochs, cuda and cpu"
  run train_cuda 180 train --model "$mlp" --input train.csv --epochs 3 --device cuda --seed 0 \
    -o cuda.pt --metrics "$OUT/metrics_cuda.jsonl"
  local a_rc=$LAST_RC a_wall=$LAST_WALL
  run train_cpu 180 train --model "$mlp" --input train.csv --epochs 3 --device cpu --seed 0 \
    -o cpu.pt --metrics "$OUT/metrics_cpu.jsonl"
  local c_rc=$LAST_RC c_wall=$LAST_WALL
  check "$([ "$a_rc" = 0 ] && [ -s cuda.pt ] && [[ $(devline train_cuda) == cuda* ]] && echo 0 || echo 1)" \
    "(a) train --device cuda: rc=$a_rc, wall ${a_wall}s, trained on '$(devline train_cuda)'"
  sum "    S(cuda): $(srecord train_cuda)"
  check "$([ "$c_rc" = 0 ] && [ -s cpu.pt ] && echo 0 || echo 1)" \
    "(a) train --device cpu (threads: OMP_NUM_THREADS=${OMP_NUM_THREADS-<unset>}, else 1): rc=$c_rc, wall ${c_wall}s, trained on '$(devline train_cpu)'"
  sum "    S(cpu): $(srecord train_cpu)"

  say "(b) predict with cuda.pt on cuda and on cpu"
  if [ -s cuda.pt ]; then
    run predict_cuda 120 predict --model cuda.pt --input test.features --device cuda
    local p1=$LAST_RC p1_wall=$LAST_WALL
    run predict_cpu 120 predict --model cuda.pt --input test.features --device cpu
    local p2=$LAST_RC p2_wall=$LAST_WALL
    local n1 n2 ndiff acc
    n1=$(wc -l <predict_cuda.out)
    n2=$(wc -l <predict_cpu.out)
    ndiff=$(paste -d' ' predict_cuda.out predict_cpu.out | awk '$1 != $2' | wc -l)
    acc=$(paste -d' ' predict_cuda.out test.labels | awk '$1 == $2 { c++ } END { if (NR) printf "%.4f", c / NR; else print "n/a" }')
    check "$([ "$p1" = 0 ] && [ "$p2" = 0 ] && [ "$n1" = 1000 ] && [ "$n2" = 1000 ] && [ "$ndiff" = 0 ] && echo 0 || echo 1)" \
      "(b) predict cuda.pt: cuda rc=$p1 (${p1_wall}s, $n1 lines), cpu rc=$p2 (${p2_wall}s, $n2 lines), lines that differ: $ndiff"
    sum "    test accuracy of cuda.pt (1000 rows, predicted on cuda): $acc"
    if [ -s cpu.pt ]; then
      run predict_cpu_model 120 predict --model cpu.pt --input test.features --device cpu
      sum "    for reference, cpu.pt on cpu: rc=$LAST_RC, accuracy $(paste -d' ' predict_cpu_model.out test.labels | awk '$1 == $2 { c++ } END { if (NR) printf "%.4f", c / NR; else print "n/a" }')"
    fi
  else
    check 1 "(b) skipped: no cuda.pt"
  fi

  say "(c) CNN, 2 epochs, cuda"
  run train_cnn 240 train --model "$cnn" --input train.csv --epochs 2 --device cuda -o cnn.pt \
    --metrics "$OUT/metrics_cnn.jsonl"
  check "$([ "$LAST_RC" = 0 ] && [ -s cnn.pt ] && [[ $(devline train_cnn) == cuda* ]] && echo 0 || echo 1)" \
    "(c) CNN train --device cuda: rc=$LAST_RC, wall ${LAST_WALL}s, trained on '$(devline train_cnn)'"
  sum "    S(cnn): $(srecord train_cnn)"
  if [ -s cnn.pt ]; then
    run predict_cnn 120 predict --model cnn.pt --input test.features --device cuda
    sum "    cnn.pt test accuracy on cuda: rc=$LAST_RC, $(paste -d' ' predict_cnn.out test.labels | awk '$1 == $2 { c++ } END { if (NR) printf "%.4f", c / NR; else print "n/a" }')"
  fi

  say "(d) --device cuda:1 must fail; inspect must run"
  run train_cuda1 120 train --model "$mlp" --input train.csv --epochs 1 --device cuda:1 -o cuda1.pt
  local msg
  msg=$(grep -m 1 'error' train_cuda1.err || head -n 1 train_cuda1.err)
  check "$([ "$LAST_RC" = 6 ] && grep -q 'CUDA device' train_cuda1.err && echo 0 || echo 1)" \
    "(d) train --device cuda:1: exit $LAST_RC (expected 6), message: $msg"
  run inspect 60 inspect cuda.pt
  check "$([ "$LAST_RC" = 0 ] && echo 0 || echo 1)" "(d) inspect cuda.pt: rc=$LAST_RC, $(grep -m 1 'trainable parameters' inspect.out || echo 'no parameter count')"

  say "(e) two synchronous ranks (threads) on cuda against one process"
  local e_rc=0
  timeout -k 5 "$(cap 180)" "${runenv[@]}" "$sync_check" cuda >sync_check.out 2>sync_check.err || e_rc=$?
  cat sync_check.out sync_check.err
  sed 's/^/    /' sync_check.out | tee -a "$SUMMARY"
  check "$([ "$e_rc" = 0 ] && [ "$(grep -c '^PASS' sync_check.out)" = 2 ] && echo 0 || echo 1)" \
    "(e) gpu_sync_check cuda: rc=$e_rc $(head -n 1 sync_check.err)"

  say "(f) hogwild: serve and two workers on cuda"
  head -n 1000 train.csv >part0.csv
  tail -n +1001 train.csv >part1.csv
  rm -f server.port hogwild.pt
  timeout -k 5 "$(cap 240)" "${runenv[@]}" "$bin" serve --mode hogwild -n 2 --model "$mlp" \
    --port-file server.port -o hogwild.pt >server.out 2>server.err &
  local server_pid=$! i
  for i in $(seq 300); do [ -s server.port ] && break; sleep 0.1; done
  local worker_pids=()
  for i in 0 1; do
    timeout -k 5 "$(cap 180)" "${runenv[@]}" "$bin" train --mode hogwild --server "$(cat server.port)" \
      --rank "$i" --world-size 2 -e 3 --device cuda <"part$i.csv" >"worker$i.out" 2>"worker$i.err" &
    worker_pids+=($!)
  done
  local w_rc=() s_rc=0
  for i in 0 1; do
    local r=0
    wait "${worker_pids[i]}" || r=$?
    w_rc+=("$r")
  done
  wait "$server_pid" || s_rc=$?
  for i in 0 1; do echo "---- worker $i (rc=${w_rc[i]}) stderr:"; cat "worker$i.err"; done
  echo "---- server (rc=$s_rc) stderr:"
  cat server.err
  local hacc="n/a"
  if [ -s hogwild.pt ]; then
    run predict_hogwild 120 predict --model hogwild.pt --input test.features --device cuda
    hacc=$(paste -d' ' predict_hogwild.out test.labels | awk '$1 == $2 { c++ } END { if (NR) printf "%.4f", c / NR; else print 0 }')
  fi
  check "$([ "${w_rc[0]}" = 0 ] && [ "${w_rc[1]}" = 0 ] && [ "$s_rc" = 0 ] &&
           [[ $(devline worker0) == cuda* ]] && [[ $(devline worker1) == cuda* ]] &&
           awk -v a="$hacc" 'BEGIN { exit !(a >= 0.6) }' && echo 0 || echo 1)" \
    "(f) hogwild on cuda: workers rc=${w_rc[*]} on '$(devline worker0)' and '$(devline worker1)', server rc=$s_rc, test accuracy $hacc (at least 0.6)"
  sum "    S(server): $(srecord server)"

  sum "total wall time: $((SECONDS - T0)) s"
  if ((failed)); then
    sum "RESULT: built, but at least one check FAILED"
    return 3
  fi
  sum "RESULT: all checks passed"
  return 0
}

set +e
main "$@" 2>&1 | tee "$OUT/log.txt"
rc=${PIPESTATUS[0]}
echo "exit status $rc" >>"$SUMMARY"
exit "$rc"

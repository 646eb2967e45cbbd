#!/usr/bin/env bash
# The relocatable bundle (examples/make_bundle.sh, DESIGN.md section 9) as Spark ships it: made by
# `cmake --build BUILD --target bundle`, unpacked into a fresh directory the way
# `spark-submit --archives BUNDLE#sparktorch` unpacks it (into sparktorch/), and run from there
# with LD_LIBRARY_PATH and OPAL_PREFIX unset: it trains in one process, trains with 2 ranks
# through the tracker (Open MPI and its plugins from the bundle) and predicts; and the loader
# takes no library and no Open MPI plugin from outside the bundle, glibc's own excepted.
#
# The environment (CTest sets it), besides lib.sh's SPARKTORCH, REPO, WORK and DATA:
#   BUILD     the build tree
#   BUNDLE    the tarball that the bundle target writes
#   WITH_MPI  1 when the binary has MPI (then the 2-rank part runs)
# and for the bundle of torch2/sparktorch (PyTorch 2.x's LibTorch, core/libtorch_wheel.cmake):
#   BUNDLE_LIBS    libraries the bundle's lib/ must carry (the wheel's and those they load)
#   TORCH2_PYTHON  a python with that PyTorch: a model with nn.RMSNorm, which LibTorch 1.13
#                  cannot compile, trains and predicts from the bundle too
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/../integration/sync_lib.sh"
: "${BUILD:?set BUILD to the build tree}"
: "${BUNDLE:?set BUNDLE to the bundle tarball}"
setup_workdir bundle
require_data train12k.csv test2k.csv test2k.labels
unset LD_LIBRARY_PATH OPAL_PREFIX OPAL_SYSCONFDIR
BUILT=$SPARKTORCH  # the build tree's binary; SPARKTORCH becomes the bundle's below

# glibc's libraries (as in make_bundle.sh): the only ones an executor supplies.
GLIBC_RE='^(ld-linux-x86-64\.so\.2|(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libmvec|libthread_db|libc_malloc_debug|libmemusage|libpcprofile|libnss_[a-z0-9]+)\.so\.[0-9.]+)$'

# loaded_outside DIR LOG...: prints every object that the loader's LD_DEBUG=libs logs LOG show it
# loaded (each runs its initialisers) from outside DIR, glibc's own excepted.
loaded_outside() {
  local dir=$1 path
  shift
  sed -n 's/^ *[0-9]*:[[:space:]]*calling init: //p' "$@" | sort -u |
    xargs -r -d '\n' realpath -m -- | while read -r path; do
    [[ $path == "$dir"/* || $(basename "$path") =~ $GLIBC_RE ]] || echo "$path"
  done
}

check "cmake --build --target bundle writes $(basename "$BUNDLE")"
started=$(now)
cmake --build "$BUILD" --target bundle >bundle.log 2>&1 ||
  fail "the bundle target failed: $(tail -5 bundle.log)"
[[ -s $BUNDLE ]] || fail "the bundle target wrote no $BUNDLE"
echo "  bundle: $(du -m "$BUNDLE" | cut -f1) MB; the target took" \
  "$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s"

check "unpacked as --archives $(basename "$BUNDLE")#sparktorch does: the binary is sparktorch/sparktorch"
# A Spark task's working directory. (Its real path: the loader's logs name the objects by theirs.)
TASK=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/sparktorch-bundle-test.XXXXXX")")
trap 'rm -rf "$TASK"' EXIT
mkdir "$TASK/sparktorch"
tar -C "$TASK/sparktorch" -xzf "$BUNDLE"
B=$TASK/sparktorch
top="lib libsparktorch_pmi.so openmpi sparktorch"
[[ -f $BUILD/sparktorch-spark.jar ]] && top+=" sparktorch-spark.jar"  # built with a JDK
assert_eq "$top" "$(cd "$B" && echo *)" "the bundle's top level"
SPARKTORCH=$B/sparktorch
assert_eq "$("$BUILT" --version)" "$(env -u LD_LIBRARY_PATH "$SPARKTORCH" --version)" \
  "the bundle's sparktorch --version"
if [[ -n ${BUNDLE_LIBS:-} ]]; then
  for lib in $BUNDLE_LIBS; do
    [[ -f $B/lib/$lib ]] || fail "the bundle has no lib/$lib: $(cd "$B/lib" && echo *)"
  done
  echo "  ok: lib/ carries $BUNDLE_LIBS"
fi
if compgen -G "$B/lib/libtorch_cuda*" >/dev/null || compgen -G "$B/lib/libc10_cuda*" >/dev/null; then
  fail "the bundle carries CUDA's half of LibTorch: $(cd "$B/lib" && echo libtorch* libc10*)"
fi
echo "  ok: no libtorch_cuda or libc10_cuda; $(du -sm "$B" | cut -f1) MB unpacked," \
  "$(find "$B" -name '*.so*' | wc -l) libraries and plugins"

check "the check below sees libraries from outside: the build tree's binary loads LibTorch from the system (or the wheel)"
LD_DEBUG=libs LD_DEBUG_OUTPUT="$T/ld.control" "$BUILT" --version >/dev/null
outside=$(loaded_outside "$B" ld.control.*)
[[ $outside == */libtorch_cpu.so* ]] ||
  fail "loaded_outside does not report the system's libtorch_cpu for the build tree's binary"
echo "  ok: $(wc -l <<<"$outside") objects from outside, libtorch_cpu among them"

check "one process: train the MLP on 4,000 rows from the task directory (./sparktorch/sparktorch)"
head -n 4000 "$DATA/train12k.csv" >train4k.csv
in_task() (cd "$TASK" && exec ./sparktorch/sparktorch "$@")
run_ok local.records in_task -q train --model "$REPO/examples/fashion_mnist_mlp.json" \
  --input "$T/train4k.csv" --epochs 2 --seed 1 --output "$T/local.pt"
assert_eq 4000 "$(summary_field local.records rows_read)" "rows read"
assert_eq local "$(summary_field local.records mode)" "mode"
[[ -s local.pt ]] || fail "train wrote no local.pt"

check "predict the 2,000 test rows with it, from the bundle"
run_ok local.predictions "$SPARKTORCH" predict --model local.pt --input "$DATA/test2k.csv"
assert_lines 2000 local.predictions "predictions"
assert_cmp "$(accuracy local.predictions "$DATA/test2k.labels")" ">=" 0.72 \
  "test accuracy (measured 0.757)"

if [[ -n ${TORCH2_PYTHON:-} ]]; then
  check "a model with nn.RMSNorm (aten::rms_norm, new in PyTorch 2.4) trains and predicts, from the bundle"
  PYTHONWARNINGS=ignore "$TORCH2_PYTHON" - >rms.txt 2>&1 <<'PY' || fail "$(cat rms.txt)"
import json
import torch
from torch import nn
torch.manual_seed(0)
torch.jit.script(nn.Sequential(nn.Linear(784, 16), nn.RMSNorm(16), nn.Linear(16, 10))).save("rms.pt")
json.dump({"loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.003}}, open("rms.json", "w"))
PY
  run_ok rms.records in_task -q train --model "$T/rms.pt" --input "$T/train4k.csv" --epochs 2 \
    --seed 1 --output "$T/rms_trained.pt"
  assert_eq 4000 "$(summary_field rms.records rows_read)" "rows read"
  run_ok rms.predictions in_task predict --model "$T/rms_trained.pt" --input "$DATA/test2k.csv"
  assert_lines 2000 rms.predictions "predictions"
  assert_cmp "$(accuracy rms.predictions "$DATA/test2k.labels")" ">=" 0.72 \
    "test accuracy (measured 0.764)"
fi

if [[ ${WITH_MPI:-0} == 1 ]]; then
  check "2 ranks through the tracker, from the bundle, under LD_DEBUG=libs: the same weights"
  split_rows train4k.csv 2000 2000
  start_tracker 2
  export LD_DEBUG=libs LD_DEBUG_OUTPUT=$T/ld.rank
  for r in 0 1; do
    start_rank "$r" 2 "part$r.csv" --model "$REPO/examples/fashion_mnist_mlp.json" --epochs 2 \
      --seed 1 --output sync.pt
  done
  unset LD_DEBUG LD_DEBUG_OUTPUT
  for r in 0 1; do
    wait_for "${RANK_PID[r]}"
    assert_eq 0 "$RC" "rank $r's exit status ($(tail -3 "err.$r"))"
  done
  wait_for "$TRACKER_PID"
  assert_eq 0 "$RC" "the tracker's exit status ($(tail -3 tracker.err))"
  for r in 0 1; do
    assert_eq sync "$(summary_field "out.$r" mode)" "rank $r's mode"
    assert_eq 2 "$(summary_field "out.$r" world_size)" "rank $r's world size"
  done
  assert_eq "$(summary_field out.0 weights_crc32)" "$(summary_field out.1 weights_crc32)" \
    "rank 1's weights checksum against rank 0's"
  # Open MPI says so on stderr when a plugin fails to load or a help text is missing.
  if grep -iE 'unable to open|help file|mca_base_component' err.0 err.1; then
    fail "Open MPI complained on the ranks' stderr (above)"
  fi

  check "Open MPI, its plugins and the PMI library came from the bundle (OPAL_PREFIX unset by the user)"
  n=$(sed -n "s|^ *[0-9]*:[[:space:]]*calling init: $B/openmpi/.*/mca_\(.*\)\.so\$|\1|p" ld.rank.* |
    sort -u | wc -l)
  assert_cmp "$n" ">=" 10 "distinct Open MPI plugins loaded from the bundle"
  for lib in lib/libmpi.so.40 lib/libopen-pal.so.40 libsparktorch_pmi.so; do
    grep -q "calling init: $B/$lib\$" ld.rank.* || fail "the ranks did not load $B/$lib"
    echo "  ok: $lib from the bundle"
  done
  outside=$(loaded_outside "$B" ld.rank.*)
  [[ -z $outside ]] || fail "the ranks loaded from outside the bundle: $outside"
  logs=(ld.rank.*)
  echo "  ok: nothing but glibc from outside the bundle" \
    "($(sed -n 's/^.*calling init: //p' "${logs[@]}" | sort -u | wc -l) objects, ${#logs[@]} processes)"

  check "predict the 2,000 test rows with the 2-rank model, from the bundle"
  run_ok sync.predictions "$SPARKTORCH" predict --model sync.pt --input "$DATA/test2k.csv"
  assert_lines 2000 sync.predictions "predictions"
  assert_cmp "$(accuracy sync.predictions "$DATA/test2k.labels")" ">=" 0.72 \
    "test accuracy (measured 0.779)"
fi

#!/usr/bin/env bash
# cli/link_order.sh (run after linking sparktorch) names the busiest libraries first in a binary's
# DT_NEEDED list, but never lets a library take an ordinary symbol from the library it bound to
# before: checked on a small program whose two libraries both define pick(), one of them with
# many more bindings (so it is the one the script wants first), and both a weak shared().
source "$(dirname "$0")/lib.sh"
setup_workdir link_order
command -v patchelf >/dev/null || fail "patchelf is missing (examples/install_deps.sh installs it)"
command -v cc >/dev/null || fail "no C compiler (cc)"

# libfirst: pick() = 1 and a weak shared() = 1. libbusy: pick() = 2, a weak shared() = 2, and
# 150 functions main calls (150 bindings: more than link_order.sh's 100, so it goes first).
cat >first.c <<'EOF'
int pick(void) { return 1; }
__attribute__((weak)) int shared(void) { return 1; }
EOF
{
  echo 'int pick(void) { return 2; }'
  echo '__attribute__((weak)) int shared(void) { return 2; }'
  for i in $(seq 0 149); do echo "int busy$i(void) { return $i; }"; done
} >busy.c
{
  echo '#include <stdio.h>'
  echo 'int pick(void); int shared(void);'
  for i in $(seq 0 149); do echo "int busy$i(void);"; done
  echo 'int main(void) { int sum = 0;'
  for i in $(seq 0 149); do echo "  sum += busy$i();"; done
  echo '  printf("pick %d shared %d sum %d\n", pick(), shared(), sum); return 0; }'
} >main.c
cc -shared -fPIC -o libfirst.so first.c
cc -shared -fPIC -o libbusy.so busy.c
# Linked in this order, pick() and shared() come from libfirst.
cc -o program main.c -L. -Wl,--no-as-needed -lfirst -lbusy -Wl,-rpath,"$PWD"
run_ok before.out ./program --version
assert_eq "pick 1 shared 1 sum 11175" "$(cat before.out)" "the program as linked"

check "link_order.sh names libbusy first only with libfirst before it: pick() stays libfirst's"
run_ok script.out "$REPO/cli/link_order.sh" "$PWD/program"
grep -q "names 2 libraries first" script.out || fail "link_order.sh did not reorder: $(cat script.out)"
assert_eq "libfirst.so libbusy.so" "$(patchelf --print-needed program | head -2 | tr '\n' ' ' | sed 's/ $//')" \
  "the first two DT_NEEDED entries"
run_ok after.out ./program --version
assert_eq "pick 1 shared 1 sum 11175" "$(cat after.out)" "the program after link_order.sh"
assert_eq "libfirst.so libbusy.so" "$(cat program.link-order | tr '\n' ' ' | sed 's/ $//')" \
  "the order kept for the next link"

check "a second run starts from the kept order and keeps it"
run_ok script2.out "$REPO/cli/link_order.sh" "$PWD/program"
grep -q "names 2 libraries first" script2.out || fail "the second run: $(cat script2.out)"
run_ok again.out ./program --version
assert_eq "pick 1 shared 1 sum 11175" "$(cat again.out)" "the program after the second run"

check "the sparktorch binary starts and binds sgemm_ where its libraries alone would"
# LibTorch's BLAS: whichever library defines sgemm_ first in libtorch_cpu's own dependency
# order, not another copy that a reordering could have put first.
# sgemm_BINDING FILE...: the library libtorch_cpu's sgemm_ bound to, in LD_DEBUG files.
sgemm_binding() {
  cat "$@" | awk '/libtorch_cpu[^ ]* \[0\] to [^ ]* \[0\]: normal symbol .sgemm_./ && !n++ { print $7 }'
}
LD_DEBUG=bindings LD_BIND_NOW=1 LD_DEBUG_OUTPUT="$PWD/alone" /usr/bin/python3 -c 'import ctypes, glob
lib = glob.glob("/usr/lib/*/libtorch_cpu.so*") + glob.glob("/lib/*/libtorch_cpu.so*")
lib and ctypes.CDLL(sorted(lib)[0])' || true
expected=$(sgemm_binding alone.* 2>/dev/null || true)
LD_DEBUG=bindings LD_BIND_NOW=1 LD_DEBUG_OUTPUT="$PWD/binary" "$SPARKTORCH" --version >/dev/null
actual=$(sgemm_binding binary.*)
if [[ -n $expected ]]; then
  assert_eq "$expected" "$actual" "the library libtorch_cpu's sgemm_ binds to"
else
  echo "  (no libtorch_cpu.so to load from Python here; only that sparktorch binds sgemm_: $actual)"
  [[ -n $actual ]] || fail "sparktorch's libtorch_cpu binds no sgemm_"
fi

#!/usr/bin/env bash
# cli/link_order.sh (run after linking sparktorch) names the busiest libraries first in a binary's
# DT_NEEDED list, but never lets a library take an ordinary symbol from the library it bound to
# before; a weak symbol may bind to another copy. Checked on a small program: libfirst and libbusy
# both define pick() (ordinary), libbase and libweak both define other() (weak), and libbusy and
# libweak have many bindings (so they are the ones the script wants first). Then the sparktorch
# binary: it binds sgemm_ where libtorch_cpu alone would, and its RUNPATH has no empty entry.
source "$(dirname "$0")/lib.sh"
setup_workdir link_order
command -v patchelf >/dev/null || fail "patchelf is missing (examples/install_deps.sh installs it)"
command -v cc >/dev/null || fail "no C compiler (cc)"

# busy_library NAME N FIRST_LINES: NAME.c with FIRST_LINES and N functions NAME0..NAME{N-1}.
busy_library() {
  { echo "$3"; for i in $(seq 0 $(($2 - 1))); do echo "int $1$i(void) { return $i; }"; done; } >"$1.c"
}
echo 'int pick(void) { return 1; }' >first.c
echo '__attribute__((weak)) int other(void) { return 0; }' >base.c
busy_library busy 150 'int pick(void) { return 2; }'  # 150 bindings: over the script's 100
busy_library weak 120 '__attribute__((weak)) int other(void) { return 3; }'
{
  echo '#include <stdio.h>'
  echo 'int pick(void); int other(void);'
  echo 'int main(void) { int sum = 0;'
  for i in $(seq 0 149); do echo "  { int busy$i(void); sum += busy$i(); }"; done
  for i in $(seq 0 119); do echo "  { int weak$i(void); sum += weak$i(); }"; done
  echo '  printf("pick %d other %d sum %d\n", pick(), other(), sum); return 0; }'
} >main.c
for lib in first base busy weak; do cc -shared -fPIC -o "lib$lib.so" "$lib.c"; done
# Linked in this order, pick() comes from libfirst and other() from libbase.
cc -o program main.c -L. -Wl,--no-as-needed -lfirst -lbase -lbusy -lweak -Wl,-rpath,"$PWD"
run_ok before.out ./program --version
assert_eq "pick 1 other 0 sum 18315" "$(cat before.out)" "the program as linked"

check "link_order.sh names libbusy first only behind libfirst (pick() stays libfirst's); libweak's other() may win"
run_ok script.out "$REPO/cli/link_order.sh" "$PWD/program"
grep -q "names 3 libraries first (1 weak symbols bind to another copy" script.out ||
  fail "link_order.sh did not reorder as expected: $(cat script.out)"
assert_eq "libfirst.so libbusy.so libweak.so" \
  "$(patchelf --print-needed program | head -3 | tr '\n' ' ' | sed 's/ $//')" "the first three DT_NEEDED entries"
run_ok after.out ./program --version
assert_eq "pick 1 other 3 sum 18315" "$(cat after.out)" "the program after link_order.sh"
assert_eq "libfirst.so libbusy.so libweak.so" "$(cat program.link-order | tr '\n' ' ' | sed 's/ $//')" \
  "the order kept for the next link"

check "a second run starts from the kept order and keeps it"
run_ok script2.out "$REPO/cli/link_order.sh" "$PWD/program"
grep -q "names 3 libraries first" script2.out || fail "the second run: $(cat script2.out)"
run_ok again.out ./program --version
assert_eq "pick 1 other 3 sum 18315" "$(cat again.out)" "the program after the second run"

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

check "the sparktorch binary's RUNPATH has no empty entry (the loader would search the working directory)"
runpath=$(readelf -d "$SPARKTORCH" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
echo "  RUNPATH: ${runpath:-(none)}"
[[ ! ":$runpath:" =~ :: || -z $runpath ]] ||
  fail "RUNPATH '$runpath' has an empty entry"
echo "  ok: no empty entry"

#!/usr/bin/env bash
# cli/link_order.sh BINARY: makes BINARY start faster by naming first, in its own DT_NEEDED list,
# the shared libraries that the dynamic loader binds the most symbols to, when no symbol with a
# single definition changes library by it. CMake runs it after linking `sparktorch`.
#
# Why: Debian's libtorch_cpu pulls in about 295 libraries (OpenCV, ffmpeg, GDAL and theirs), and
# ld.so looks each symbol up along that list, breadth first from the binary: a quarter of a process
# start went to those walks (perf: do_lookup_x under _dl_relocate_object), most of them for
# libraries deep in the list (GDAL's references to xerces, geos, proj...). Naming the busiest
# libraries first shortens the walks.
#
# What must not change: a symbol that two libraries define as ordinary (strong) symbols binds to
# the first in the list, and that choice is behaviour: libblas.so.3 and libopenblas.so.0 both
# define sgemm_ (two OpenBLAS instances with two thread pools; moving the second first made the
# Spark fit's row phase twice as slow), libm and libc both define frexp. So the new order is
# checked symbol by symbol (LD_DEBUG=bindings with LD_BIND_NOW=1: every symbol, not only those
# bound at start), and a library that would take such a symbol from its first definer is not
# moved. Symbols that both libraries define weak (C++ inline functions, template instances,
# typeinfo: copies the one-definition rule makes interchangeable, already bound to whichever
# copy the list happens to reach first) may change copy. Without patchelf, or when no order
# passes, BINARY stays as linked; this script never fails the build.
set -uo pipefail

binary=$1
# Libraries with fewer bindings than this stay in place (what they cost is small).
readonly MIN_BINDINGS=100

say() { echo "link_order: $*"; }

for tool in patchelf nm; do
  if ! command -v "$tool" >/dev/null; then
    say "no $tool: $binary left as linked (each start takes about 20% longer)"
    exit 0
  fi
done

work=$(mktemp -d) || exit 0
trap 'rm -rf "$work"' EXIT

# bindings FILE: "REFERRER SYMBOL VERSION PROVIDER" for every symbol the loader binds when FILE
# starts, FILE itself written as EXE; sorted, unique. Fails when FILE does not start.
bindings() {
  rm -f "$work"/debug.*
  env -u LD_PRELOAD LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/debug" \
    "$1" --version >/dev/null 2>&1 || return 1
  # "PID: binding file REFERRER [0] to PROVIDER [0]: normal symbol `NAME' [VERSION]"
  cat "$work"/debug.* | awk -v exe="$1" '
    $2 == "binding" && $3 == "file" {
      referrer = $4; provider = $7
      if (referrer == exe) referrer = "EXE"
      if (provider == exe) provider = "EXE"
      name = $0; sub(/^[^`]*`/, "", name); sub(/'"'"'.*$/, "", name)
      version = "-"
      if (match($0, /'"'"' \[[^]]*\]$/)) version = substr($0, RSTART + 3, RLENGTH - 4)
      print referrer, name, version, provider
    }' | LC_ALL=C sort -u
}

# weak_names LIB: "LIB NAME" for every dynamic symbol LIB defines only as weak (W, V, or u:
# GNU unique), never as an ordinary symbol.
weak_names() {
  local file=$1
  [[ $file == EXE ]] && file=$binary
  nm -D --defined-only "$file" 2>/dev/null | awk -v lib="$1" '
    NF >= 3 { name = $3; sub(/@.*/, "", name)
              if ($2 ~ /^[WVwvu]$/) { if (!(name in strong)) weak[name] = 1 }
              else { strong[name] = 1; delete weak[name] } }
    END { for (n in weak) print lib, n }'
}

bindings "$binary" >"$work/before" || { say "$binary does not start: left as linked"; exit 0; }
[[ -s $work/before ]] || { say "LD_DEBUG gave no bindings: $binary left as linked"; exit 0; }
cut -d' ' -f1-3 "$work/before" | LC_ALL=C sort -u >"$work/keys.before"

# The busiest providers first; never the binary itself or the loader. The order the last link
# settled on, kept beside the binary, is tried first (it is checked all the same).
cache=$binary.link-order
if [[ -s $cache ]]; then
  mapfile -t order <"$cache"
else
  mapfile -t order < <(awk -v min="$MIN_BINDINGS" '
      $4 != "EXE" && $4 !~ /\/ld-linux/ { n[$4]++ }
      END { for (p in n) if (n[p] >= min) print n[p], p }' "$work/before" |
    LC_ALL=C sort -k1,1nr -k2 | awk '{ sub(/.*\//, "", $2); print $2 }')
fi
rm -f "$cache"
mapfile -t linked < <(patchelf --print-needed "$binary")

for attempt in 1 2 3 4 5 6 7 8; do
  ((${#order[@]} > 0)) || break
  cp -p "$binary" "$work/candidate"
  args=()
  for lib in "${order[@]}"; do
    for have in "${linked[@]}"; do
      [[ $have == "$lib" ]] && args+=(--remove-needed "$lib")
    done
  done
  ((${#args[@]} == 0)) || patchelf "${args[@]}" "$work/candidate" || break
  # patchelf adds the names of one call sorted: add numbered placeholders, then rename them.
  # (One call each, or the file grows by a segment a call.)
  args=() renames=()
  for i in "${!order[@]}"; do
    printf -v placeholder "%04d-%s" "$i" "${order[i]}"
    args+=(--add-needed "$placeholder")
    renames+=(--replace-needed "$placeholder" "${order[i]}")
  done
  patchelf "${args[@]}" "$work/candidate" && patchelf "${renames[@]}" "$work/candidate" || break
  if ! bindings "$work/candidate" >"$work/after"; then
    say "$binary with the new order does not start: left as linked"
    exit 0
  fi
  if ! cut -d' ' -f1-3 "$work/after" | LC_ALL=C sort -u | cmp -s - "$work/keys.before"; then
    say "the new order binds another set of symbols: $binary left as linked"
    exit 0
  fi
  # "SYMBOL FIRST NOW" for each binding that changed library: FIRST its provider before.
  LC_ALL=C comm -13 "$work/before" "$work/after" |
    awk 'FILENAME == ARGV[1] { k = $1 " " $2 " " $3; if (!(k in first)) first[k] = $4; next }
         { print $2, first[$1 " " $2 " " $3], $4 }' "$work/before" - >"$work/moved"
  # Those not weak in both libraries are the ones that matter. (FILENAME, not NR == FNR: the
  # list of weak names may be empty.)
  awk '{ print $2; print $3 }' "$work/moved" | LC_ALL=C sort -u | while read -r lib; do
    weak_names "$lib"
  done >"$work/weak"
  awk 'FILENAME == ARGV[1] { weak[$1 " " $2] = 1; next }
       !(($2 " " $1) in weak && ($3 " " $1) in weak) { sub(/.*\//, "", $2); sub(/.*\//, "", $3); print $2, $3 }' \
    "$work/weak" "$work/moved" | LC_ALL=C sort -u >"$work/taken"
  if [[ ! -s $work/taken ]]; then
    cp -p "$work/candidate" "$binary" || exit 0
    printf '%s\n' "${order[@]}" >"$cache"
    say "$binary names ${#order[@]} libraries first ($(wc -l <"$work/moved") weak symbols bind" \
        "to another copy; every other symbol as before)"
    exit 0
  fi
  # A taker named first gets the library it took from named just before it, or, when that one
  # is named first already (after it), goes back to its place. A taker that moved up only
  # because libraries named first brought their dependencies forward is answered by naming the
  # library it took from first too.
  declare -A front=() drop=() before=() add=()
  for lib in "${order[@]}"; do front[$lib]=1; done
  while read -r first taker; do
    [[ $first == EXE ]] && continue
    if [[ -z ${front[$taker]:-} ]]; then
      add[$first]=1
    elif [[ -n ${front[$first]:-} ]]; then
      drop[$taker]=1
    else
      before[$taker]+=" $first"
    fi
  done <"$work/taken"
  kept=()
  declare -A placed=()
  for lib in "${order[@]}"; do
    [[ -n ${drop[$lib]:-} ]] && continue
    for first in ${before[$lib]:-}; do
      [[ -n ${placed[$first]:-} ]] || { kept+=("$first"); placed[$first]=1; }
    done
    [[ -n ${placed[$lib]:-} ]] || { kept+=("$lib"); placed[$lib]=1; }
  done
  for lib in "${!add[@]}"; do [[ -n ${placed[$lib]:-} ]] || { kept+=("$lib"); placed[$lib]=1; }; done
  unset front drop before add placed
  if [[ ${kept[*]} == "${order[*]}" ]]; then
    say "the new order moves symbols it cannot give back: $binary left as linked"
    exit 0
  fi
  order=("${kept[@]}")
done
say "no order keeps every binding: $binary left as linked"
exit 0

#!/usr/bin/env bash
# The house's layout rules (issue 28; ARCHITECTURE in man/sparktorch-spark.7), checked on the
# source tree: cli/ includes of the project only core/jobs/ headers and core/version.h; the
# core/jobs headers it includes hold the jobs' plain options, so they include nothing but each
# other, the standard library, formats/prediction_kind.h (a plain enum of the model format's) and
# formats/enum_names.h (enums' name tables) (nlohmann::json, which inspect prints, aside: no torch, no MPI, no other lower header); formats/ includes nothing of core/ or cli/; core's rooms include only rooms
# below them (no climb back); no .cc in core/ or formats/ and no .py in spark-scripts/ is over
# 400 lines; every file of the repository a document names exists. The binary is not run.
source "$(dirname "$0")/lib.sh"
setup_workdir layout
cd "$REPO"

# project_includes FILE...: FILE:LINE: "path" for each #include "..." of the project.
project_includes() {
  grep -Hn '^#include "' "$@" | sed 's/#include //'
}

check "cli/ includes of the project only core/jobs/ and core/version.h"
bad=$(project_includes cli/*.cc cli/*.h | grep -vE ':"(cli/|core/jobs/|core/version\.h")' || true)
[[ -z $bad ]] || fail "cli/ reaches past core/jobs:
$bad"
echo "  ok: $(project_includes cli/*.cc cli/*.h | wc -l) includes, all cli/, core/jobs/ or core/version.h"

check "the core/jobs headers cli/ includes include only other such headers (plain options)"
mapfile -t facing < <(project_includes cli/*.cc cli/*.h | sed -n 's/.*:"\(core\/jobs\/[^"]*\)"/\1/p' | sort -u)
((${#facing[@]} >= 6)) || fail "expected cli/ to include at least 6 core/jobs headers, found ${#facing[@]}"
seen=" ${facing[*]} "
queue=("${facing[@]}")
while ((${#queue[@]} > 0)); do
  header=${queue[0]}
  queue=("${queue[@]:1}")
  while read -r included; do
    [[ $included == core/jobs/* || $included == formats/prediction_kind.h ||
       $included == formats/enum_names.h ]] ||
      fail "$header (which cli/ sees) includes $included"
    if [[ $seen != *" $included "* ]]; then
      seen+="$included "
      queue+=("$included")
    fi
  done < <(sed -n 's/^#include "\([^"]*\)"/\1/p' "$header")
  ! grep -qE '^#include <(torch|ATen|c10|mpi|spdlog|CLI)' "$header" ||
    fail "$header (which cli/ sees) includes a library header: $(grep -E '^#include <' "$header" | tr '\n' ' ')"
done
echo "  ok:$seen"

check "formats/ includes nothing of core/ or cli/"
bad=$(project_includes $(find formats -name '*.h' -o -name '*.cc') | grep -E ':"(core|cli)/' || true)
[[ -z $bad ]] || fail "formats/ reaches up:
$bad"
echo "  ok"

check "core's rooms point one way: jobs -> ps -> train -> world -> model -> data, each also on net, progress and core/*.h; progress on nothing (and no torch)"
# The rooms a room's files may include besides its own ("base": core/device.h, files.h,
# version.h). ARCHITECTURE in man/sparktorch-spark.7 draws the same order.
declare -A below=([jobs]="ps train world model data net progress base"
                  [ps]="train world model data net progress base"
                  [train]="world model data net progress base" [world]="model data net progress base"
                  [model]="data net progress base" [data]="net progress base" [net]="base"
                  [progress]="")
rooms=$(find core -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
[[ $rooms == "data jobs model net progress ps train world " ]] ||
  fail "core's rooms are $rooms; give a new one its place in layout.sh and ARCHITECTURE"
checked=0
for room in "${!below[@]}"; do
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed 's/.*"core\/\([^"]*\)".*/\1/' <<<"$line")
    [[ $target == */* ]] && to=${target%%/*} || to=base
    [[ $to == "$room" || " ${below[$room]} " == *" $to "* ]] ||
      fail "$file (core/$room) includes core/$target: $room may include ${below[$room]:-nothing} of core"
    checked=$((checked + 1))
  done < <(grep -Hn '^#include "core/' core/"$room"/*.h core/"$room"/*.cc)
done
! grep -qE '^#include <(torch|ATen|c10)' core/progress/* || fail "core/progress includes torch"
echo "  ok: $checked includes between core's rooms"

check "no .cc in core/ or formats/ and no .py in spark-scripts/ over 400 lines"

long=$( (find core formats -name '*.cc'; find spark-scripts -name '*.py') |
  xargs wc -l | awk '$2 != "total" && $1 > 400 { print $2 ": " $1 " lines" }')
[[ -z $long ]] || fail "files over 400 lines (split them by concept):
$long"
echo "  ok: the longest is $( (find core formats -name '*.cc'; find spark-scripts -name '*.py') |
  xargs wc -l | grep -v ' total$' | sort -n | tail -1 | awk '{ print $2 ", " $1 " lines" }')"

check "every file a document names exists (README.md, core/, formats/, tests/ READMEs, man pages)"
# Paths under the repository's folders as the documents write them (man pages' \- for -);
# a name without its extension (core/world/tracker_protocol) stands for the files that have one.
python3 - <<'PY' || fail "documents name files that do not exist (above)"
import glob, os, re, sys
docs = ["README.md", "core/README.md", "formats/README.md", "tests/README.md",
        "tests/fuzz/README.md"] + sorted(glob.glob("man/*.[17]"))
path = re.compile(r"(?<![\w/.-])((?:cli|core|formats|spark-scripts|examples|tests|man)/"
                  r"[\w./{},*-]*[\w*}])")
missing, named = [], 0
for doc in docs:
    text = open(doc).read().replace("\\-", "-")
    text = re.sub(r"\\f[BIRP]", "", text)
    for found in sorted({m.group(1).rstrip(".,") for m in path.finditer(text)}):
        named += 1
        pattern = re.sub(r"\{[^}]*\}", "*", found)
        if glob.glob(pattern) or glob.glob(pattern + ".*"):
            continue
        missing.append("%s: %s" % (doc, found))
print("\n".join(missing) if missing else "  ok: %d paths in %d documents" % (named, len(docs)))
sys.exit(1 if missing else 0)
PY

echo "PASS: layout"

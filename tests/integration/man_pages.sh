#!/usr/bin/env bash
# The man pages (man/): each renders with `man --warnings -l` without a warning and fits 80
# columns; sparktorch.1 names every flag that `sparktorch --help` and each command's --help
# print; sparktorch-spark.7 every flag of spark-scripts/train.py and predict.py --help; README.md
# stays within 300 lines and names the three pages. Needs man-db and groff-base
# (examples/install_deps.sh) and the spark-4 venv of examples/install_python.sh
# (SPARKTORCH_PYENV) for the entry points' --help.
source "$(dirname "$0")/lib.sh"
setup_workdir man_pages

PAGES=(sparktorch.1 sparktorch-spark.7 sparktorch-formats.7)
PY=${SPARKTORCH_PYENV:-/opt/sparktorch-python}/spark-4/bin/python
# UTF-8 as a reader's terminal has it: man breaks long words with U+2010, a hyphen (render joins
# them again).
export LC_ALL=C.UTF-8 MANWIDTH=80
command -v man >/dev/null || fail "no man: install man-db and groff-base (examples/install_deps.sh)"

# render PAGE: writes the page as man shows it to PAGE.txt, its hyphenated line breaks joined.
render() {
  local page=$1 rc=0
  [[ -f $REPO/man/$page ]] || fail "man/$page is missing"
  man --warnings -l "$REPO/man/$page" >"$page.raw" 2>"$page.err" || rc=$?
  [[ $rc -eq 0 ]] || fail "man -l man/$page exited $rc: $(head -c 800 "$page.err")"
  [[ ! -s $page.err ]] || fail "man --warnings -l man/$page warned:
$(head -c 2000 "$page.err")"
  [[ -s $page.raw ]] || fail "man -l man/$page rendered nothing"
  perl -CSD -0pe 's/\x{2010}\n\s*//g' "$page.raw" >"$page.txt"
  echo "  ok: man/$page renders, $(wc -l <"$page.raw" | tr -d ' ') lines, no warning"
}

# flags FILE...: every flag the --help texts print, one per line, sorted: a short flag with its
# long one as the page must write it ("-o, --output"), else the flag alone ("--lock").
flags() {
  cat "$@" | perl -ne '
    while (/(?<![A-Za-z0-9_\/:.-])(-[A-Za-z]), ?(--[A-Za-z][A-Za-z0-9-]*)/g) { print "$1, $2\n" }
    while (/(?<![A-Za-z0-9_\/:.-])(--[A-Za-z][A-Za-z0-9-]*|-[A-Za-z])(?=[][ ,=.)]|$)/g) {
      print "$1\n" unless substr($_, pos($_)) =~ /^, ?--/ }' | sort -u
}

# require_flags PAGE HELP...: fails, naming them, unless PAGE.txt names every flag of the HELP
# files; "-o, --output" may break between its two flags.
require_flags() {
  local page=$1 missing=() flag n=0
  shift
  while read -r flag; do
    n=$((n + 1))
    FLAG=$flag perl -0ne '
      my $re = join(q(,\s+), map { quotemeta } split(/, /, $ENV{FLAG}));
      exit(/(?<![A-Za-z0-9-])$re(?![A-Za-z0-9-])/ ? 0 : 1)' "$page.txt" || missing+=("$flag")
  done < <(flags "$@")
  ((n > 0)) || fail "no flags found in $*"
  ((${#missing[@]} == 0)) ||
    fail "man/$page does not name ${#missing[@]} of the $n flags of $*: $(printf '[%s] ' "${missing[@]}")"
  echo "  ok: man/$page names all $n flags of $*"
}

check "each page renders with man --warnings -l, warning-free and within 80 columns"
for page in "${PAGES[@]}"; do
  render "$page"
  wide=$(perl -CSD -ne 'chomp; print "$.: $_\n" if length > 80' "$page.raw" | head -5)
  [[ -z $wide ]] || fail "man/$page has lines wider than 80 columns:
$wide"
  echo "  ok: man/$page fits 80 columns"
done

check "sparktorch.1 names every flag of sparktorch --help and of each command's --help"
run_ok help.txt "$SPARKTORCH" --help
helps=(help.txt)
for command in train predict unpack inspect serve; do
  run_ok "help-$command.txt" "$SPARKTORCH" "$command" --help
  helps+=("help-$command.txt")
done
require_flags sparktorch.1 "${helps[@]}"

check "sparktorch-spark.7 names every flag of train.py --help and predict.py --help"
[[ -x $PY ]] || fail "no $PY: examples/install_python.sh makes it (SPARKTORCH_PYENV)"
run_ok train-py.txt "$PY" "$REPO/spark-scripts/train.py" --help
run_ok predict-py.txt "$PY" "$REPO/spark-scripts/predict.py" --help
require_flags sparktorch-spark.7 train-py.txt predict-py.txt

check "README.md: at most 300 lines, and it names each page"
lines=$(wc -l <"$REPO/README.md" | tr -d ' ')
assert_cmp "$lines" "<=" 300 "README.md's lines"
for page in "${PAGES[@]}"; do
  grep -qF "man/$page" "$REPO/README.md" || fail "README.md does not name man/$page"
  echo "  ok: README.md names man/$page"
done

echo "PASS: man_pages"

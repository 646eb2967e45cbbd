#!/usr/bin/env bash
# Installs the Python side that sparktorch is tested and measured with, from PyPI, into virtual
# environments of Debian's /usr/bin/python3, and prints the folder that holds them:
#
#   PYENV/base        torch (PyTorch 2.x, the version users write models with), numpy, pandas,
#                     pyarrow, duckdb, and the peers' Python packages: SparkTorch 0.2.0
#                     (`sparktorch` on PyPI) and its dependencies
#   PYENV/spark-3.5   stock Apache Spark 3.5.9 (LTS, Scala 2.12), the whole Spark in one PyPI
#                     package, with the Spark Connect server's jar from Maven Central in jars/
#   PYENV/spark-4     stock Apache Spark 4.3.0 (Scala 2.13, Java 17)
# Both with pyspark's `connect` extra (grpcio and the rest of the Spark Connect client).
#
# Each Spark environment sees base's packages through a .pth file, so torch is installed once;
# its own pyspark comes first. SPARK_HOME of a line is the pyspark package directory, which
# PYENV/spark-LINE/spark-home links to (bin/spark-submit, jars/).
#
# Every package is pinned, with its hashes, in a lock file per environment
# (examples/python-locks/ENV.lock, made from ENV.in by examples/python_lock.py lock) and installed
# by pip with --no-deps --require-hashes (`python_lock.py install`): pip resolves nothing here,
# so a fresh machine gets exactly what the locks name, whatever PyPI serves that day.
#
# Idempotent: an environment whose stamp (its lock's sha256, the Python, the base it sees) is
# current and whose packages are exactly its lock's (examples/python_lock.py check: versions,
# `pip check`, imports) is reused as it is, with no network; one whose lock changed or that
# drifted from it (a package added, removed or upgraded by hand) is made again, after a line
# that says why. Needs /usr/bin/python3 with venv (python3-venv, which
# examples/install_deps.sh installs) and PyPI.
#   SPARKTORCH_PYENV  the folder (default: /opt/sparktorch-python)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pyenv=${SPARKTORCH_PYENV:-/opt/sparktorch-python}
python=/usr/bin/python3
locks=$here/python-locks
lock_tool=$here/python_lock.py

say() { echo "install_python: $*" >&2; }

# site_packages VENV: prints VENV's site-packages folder.
site_packages() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

spark_home() { echo "$(site_packages "$pyenv/spark-$1")/pyspark"; }

# ensure_venv ENV [BASE_SITE]: makes $pyenv/ENV from python-locks/ENV.lock (seeing BASE_SITE's
# packages through a .pth file), unless it is current and matches its lock.
ensure_venv() {
  local env=$1 base=${2:-} dir=$pyenv/$1 lock=$locks/$1.lock stamp why
  stamp="lock=$(sha256sum <"$lock" | cut -d' ' -f1) python=$("$python" -V 2>&1) base=$base"
  if [[ -f $dir/.sparktorch-stamp && $(<"$dir/.sparktorch-stamp") == "$stamp" ]]; then
    why=$("$python" "$lock_tool" check "$dir" "$lock" 2>&1) && return
    say "$why: making it again"
  fi
  say "installing $dir from ${lock#"$here/"}"
  "$python" "$lock_tool" install "$dir" "$lock" ${base:+--base "$base"} >&2
  echo "$stamp" >"$dir/.sparktorch-stamp"
}

# Spark 3.5's wheel lacks the Spark Connect server, which 4.x's carries in jars/: its jar from
# Maven Central, checked against Maven's SHA-1. The newest served there is 3.5.7, one patch
# release behind the wheel (3.5.8 and 3.5.9 were not published to Maven Central); it serves
# 3.5.9 (tests/spark_real/connect_test.py).
connect_jar=spark-connect_2.12-3.5.7.jar
connect_url=https://repo1.maven.org/maven2/org/apache/spark/spark-connect_2.12/3.5.7/$connect_jar
ensure_connect_jar() {
  local jars=$1
  [[ -f $jars/$connect_jar ]] && return
  say "downloading $connect_url"
  local tmp
  tmp=$(mktemp -d)
  "$python" - "$connect_url" "$tmp/$connect_jar" <<'PY' >&2
import hashlib, sys, urllib.request
url, path = sys.argv[1], sys.argv[2]
data = urllib.request.urlopen(url, timeout=120).read()
sha1 = urllib.request.urlopen(url + ".sha1", timeout=60).read().decode().split()[0]
if hashlib.sha1(data).hexdigest() != sha1:
    sys.exit("install_python: %s: SHA-1 mismatch" % url)
open(path, "wb").write(data)
PY
  mv "$tmp/$connect_jar" "$jars/$connect_jar"
  rm -rf "$tmp"
}

[[ -x $python ]] || { say "no $python (examples/install_deps.sh installs it)"; exit 1; }
mkdir -p "$pyenv"
ensure_venv base
base_site=$(site_packages "$pyenv/base")
for line in 3.5 4; do
  ensure_venv "spark-$line" "$base_site"
  ln -sfn "$(spark_home "$line")" "$pyenv/spark-$line/spark-home"
done
ensure_connect_jar "$(spark_home 3.5)/jars"

echo "$pyenv"

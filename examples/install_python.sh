#!/usr/bin/env bash
# Installs the Python side that sparktorch is tested and measured with, from PyPI, into virtual
# environments of Debian's /usr/bin/python3, and prints the folder that holds them:
#
#   PYENV/base        torch (PyTorch 2.x, the version users write models with), numpy, pandas,
#                     pyarrow, duckdb, and the peers' Python packages: SparkTorch 0.2.0
#                     (`sparktorch` on PyPI) and its dependencies
#   PYENV/spark-3.5   stock Apache Spark 3.5 (LTS, Scala 2.12): `pip install pyspark==3.5.*`,
#                     with the Spark Connect server's jar from Maven Central in its jars/
#   PYENV/spark-4     stock Apache Spark 4.x (Scala 2.13, Java 17)
# Both with pyspark's `connect` extra (grpcio and the rest of the Spark Connect client).
#
# Each Spark environment sees base's packages through a .pth file, so torch is installed once;
# its own pyspark comes first. SPARK_HOME of a line is the pyspark package directory, which
# PYENV/spark-LINE/spark-home links to (bin/spark-submit, jars/).
#
# Idempotent: an environment whose stamp matches the pins below is reused as it is (no network);
# a missing or different one is made again. Needs /usr/bin/python3 with venv (python3-venv, which
# examples/install_deps.sh installs) and PyPI.
#   SPARKTORCH_PYENV  the folder (default: /opt/sparktorch-python)
set -euo pipefail

pyenv=${SPARKTORCH_PYENV:-/opt/sparktorch-python}
python=/usr/bin/python3

# The newest of each line on PyPI on 2026-11-27. numpy 1.x and pandas 2.x: what both Spark lines
# support (Spark 3.5's pandas API predates numpy 2 and pandas 3).
base_pins=(torch==2.15.0 "numpy==1.26.4" "pandas==2.2.3" "pyarrow==18.1.0" duckdb==1.1.3
  sparktorch==0.2.0 flask requests dill)
declare -A spark_pins=([3.5]="pyspark[connect]==3.5.9" [4]="pyspark[connect]==4.3.0")

say() { echo "install_python: $*" >&2; }

# site_packages VENV: prints VENV's site-packages folder.
site_packages() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

spark_home() { echo "$(site_packages "$pyenv/spark-$1")/pyspark"; }

# ensure_venv DIR STAMP PIN...: makes DIR a venv with PIN... installed, unless DIR's stamp is
# STAMP already.
ensure_venv() {
  local dir=$1 stamp=$2
  shift 2
  if [[ -x $dir/bin/python && -f $dir/.sparktorch-stamp && $(<"$dir/.sparktorch-stamp") == "$stamp" ]]; then
    return
  fi
  say "installing $dir: $stamp"
  rm -rf "$dir"
  "$python" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" >&2
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
ensure_venv "$pyenv/base" "${base_pins[*]}" "${base_pins[@]}"
base_site=$(site_packages "$pyenv/base")
for line in "${!spark_pins[@]}"; do
  ensure_venv "$pyenv/spark-$line" "${spark_pins[$line]} base=$base_site" "${spark_pins[$line]}"
  echo "$base_site" >"$(site_packages "$pyenv/spark-$line")/sparktorch-base.pth"
  ln -sfn "$(spark_home "$line")" "$pyenv/spark-$line/spark-home"
done
ensure_connect_jar "$(spark_home 3.5)/jars"

echo "$pyenv"

#!/usr/bin/env bash
# How a Spark fit's time and a rank's peak RssAnon grow with the rows: sparktorch (the tasks
# reading Parquet, or the rows through Spark) and TorchDistributor, 60k rows x 10 epochs
# against 600k x 1 (and 6m x 1), in one spark-submit (tests/bench/rows_scale_bench.py says what
# it measures).
# Usage: tests/bench/rows_scale_bench.sh [rows_scale_bench.py ARGS...]   e.g. --quick,
#        --sizes 60k,600k --repeats 3, --sizes 6m --fits ours-files --repeats 1
#   SPARK_LINE        4 (default) or 3.5: the environment of examples/install_python.sh to use
#   SPARKTORCH_PYENV  its folder (default /opt/sparktorch-python)
#   SPARK_HOME  default PYENV/spark-LINE/spark-home;  PYTHON  default PYENV/spark-LINE/bin/python
#   MASTER      default local[2]
#   BUILD       the build folder whose sparktorch, libsparktorch_pmi.so and sparktorch-spark.jar
#               are copied into out/rows_scale/bin and used (default build; without the jar the
#               rows of readParquet=False go to the binary as Spark's decimal text)
# The data is written once into out/rows_scale (--work). Spark's and the tasks' log goes to
# out/rows_scale/stderr-LINE.log, the progress and the table to stdout.
# Reports numbers; fails on nothing but errors.
set -euo pipefail
# The Spark line, Python, master and build: tests/bench/spark_submit_bench.sh's variables.
exec "$(dirname "$0")/spark_submit_bench.sh" rows_scale "$@"

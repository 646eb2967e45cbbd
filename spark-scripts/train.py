"""spark-submit entry point: sparktorch train on a Spark DataFrame (`train.py --help`).

    spark-submit --archives sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch \
        spark-scripts/train.py --source DATA ...

The sparktorch_spark package beside this file is shipped to the executors by the job itself.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sparktorch_spark.cli import train_main  # noqa: E402

if __name__ == "__main__":
    train_main()

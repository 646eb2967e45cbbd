"""spark-submit entry point: sparktorch predict on a Spark DataFrame (`predict.py --help`).

    spark-submit --archives sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch \
        spark-scripts/predict.py --source DATA ...

The sparktorch_spark package beside this file is shipped to the executors by the job itself.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sparktorch_spark.cli import predict_main  # noqa: E402

if __name__ == "__main__":
    predict_main()

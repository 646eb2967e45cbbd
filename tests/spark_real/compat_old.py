"""Saves what SparkTorch 0.2.0 itself saves, for compat_cases.py: run with SparkTorch installed
(the base environment's), on local[1].

  OUT/main       a PipelineModel of create_spark_torch_model(a network whose class is this
                 script's, which dill pickles by value), inputCol features, predictionCol
                 predicted
  OUT/module     the same with a network whose class is in a module (oldnets) that only this
                 script can import
  OUT/estimator  an unfitted Pipeline of SparkTorch(iters=3, labelCol="label", miniBatch=16)
  OUT/expected.json  the network's classes for the first 50 rows of TEST (by id)

  compat_old.py OUT TEST.parquet
"""
import json
import os
import sys

import numpy
import torch
from torch import nn

from pyspark.ml import Pipeline, PipelineModel
from pyspark.sql import SparkSession

from sparktorch import SparkTorch, create_spark_torch_model, serialize_torch_obj

OLDNETS = '''import torch.nn as nn


class OldNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x)
'''


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x / 255.0)))


def main():
    out, test_path = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "oldnets.py"), "w") as f:
        f.write(OLDNETS)
    sys.path.insert(0, out)
    import oldnets  # pylint: disable=import-outside-toplevel,import-error
    spark = SparkSession.builder.master("local[1]").appName("sparktorch-0.2.0").getOrCreate()
    torch.manual_seed(1)
    net = Net()
    PipelineModel(stages=[create_spark_torch_model(net, "features", "predicted")]).write() \
        .overwrite().save(os.path.join(out, "main"))
    PipelineModel(stages=[create_spark_torch_model(oldnets.OldNet(), "features")]).write() \
        .overwrite().save(os.path.join(out, "module"))
    # SparkTorch's dill pickles torch.optim.Adam by reference only when torch.optim.adam is
    # bound, which torch 2.15 no longer does (tests/bench/peers_bench.py, the same shim).
    torch.optim.adam = sys.modules["torch.optim.adam"]
    torch_obj = serialize_torch_obj(Net(), nn.CrossEntropyLoss(), torch.optim.Adam, lr=0.01)
    Pipeline(stages=[SparkTorch(torchObj=torch_obj, iters=3, labelCol="label",
                                miniBatch=16)]).write().overwrite().save(
        os.path.join(out, "estimator"))
    rows = spark.read.parquet(test_path).orderBy("id").limit(50).collect()
    with torch.no_grad():
        classes = net(torch.tensor(numpy.array([r["features"].toArray() for r in rows]),
                                   dtype=torch.float32)).argmax(1).tolist()
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump([float(c) for c in classes], f)
    spark.stop()


if __name__ == "__main__":
    main()

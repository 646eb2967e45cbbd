"""sparktorch_spark.compat on a real Spark (pytest; compat_test.py runs it): SparkTorch 0.2.0's
examples written as its users write them, with `from sparktorch_spark.compat import ...`, and
what cannot be the same. Environment: COMPAT_MASTER (local[2] or local-cluster[2,1,1024]),
COMPAT_WORK (a scratch folder), SPARKTORCH_BINARY, SPARK_DATA (train.csv, test.parquet; see
prepare_data.py), SPARK_PYTHON.
"""
import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from pyspark.ml import Pipeline, PipelineModel
from pyspark.ml.feature import VectorAssembler
from pyspark.sql import SparkSession

from sparktorch_spark import compat, ml
from sparktorch_spark.compat import (PysparkPipelineWrapper, SparkTorch, SparkTorchModel,
                                     attach_pytorch_model_to_pipeline, create_spark_torch_model,
                                     serialize_torch_obj, serialize_torch_obj_lazy)
from sparktorch_spark.options import OptionError

MASTER = os.environ["COMPAT_MASTER"]
WORK = os.environ["COMPAT_WORK"]
BINARY = os.environ["SPARKTORCH_BINARY"]
DATA = os.environ["SPARK_DATA"]
PYTHON = os.environ.get("SPARK_PYTHON", sys.executable)


@pytest.fixture(scope="module")
def spark():
    session = (SparkSession.builder.master(MASTER).appName("compat")
               .config("spark.executorEnv.PATH", os.environ["PATH"])
               .config("spark.ui.enabled", "false").getOrCreate())
    yield session
    session.stop()


@pytest.fixture(scope="module")
def train(spark):
    """6,000 Fashion-MNIST rows as SparkTorch's examples read MNIST: a CSV, VectorAssembler."""
    df = spark.read.option("header", "true").option("inferSchema", "true").csv(
        os.path.join(DATA, "train.csv")).limit(6000).repartition(2).cache()
    return df


@pytest.fixture(scope="module")
def assembler(train):
    return VectorAssembler(inputCols=train.columns[1:785], outputCol="features")


@pytest.fixture(scope="module")
def test(spark):
    """2,000 test rows: id, label, features (a vector of the 784 pixels, scaled to [0, 1])."""
    return spark.read.parquet(os.path.join(DATA, "test.parquet")).cache()


def dnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


class Cnn(nn.Module):
    """SparkTorch's lazy example's kind of network: flat rows reshaped to 1x28x28 inside."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 5, stride=2)
        self.fc = nn.Linear(8 * 12 * 12, 10)

    def forward(self, x):
        x = F.relu(self.conv(x.view(-1, 1, 28, 28)))
        return self.fc(x.view(x.size(0), -1))


def accuracy(df, label="label", prediction="predictions"):
    rows = df.select(label, prediction).collect()
    return sum(1 for r in rows if r[0] == r[1]) / len(rows)


def test_simple_dnn_pipeline_saved_and_unwrapped(train, assembler):
    """examples/simple_dnn.py: VectorAssembler and SparkTorch in a Pipeline, saved, loaded
    through PysparkPipelineWrapper.unwrap, transformed."""
    torch_obj = serialize_torch_obj(model=dnn(), criterion=nn.CrossEntropyLoss(),
                                    optimizer=torch.optim.Adam, lr=0.001)
    stage = SparkTorch(inputCol="features", labelCol="label", predictionCol="predictions",
                       torchObj=torch_obj, iters=30, partitions=2, verbose=1,
                       useBarrier=True, binary=BINARY)
    fitted = Pipeline(stages=[assembler, stage]).fit(train)
    path = os.path.join(WORK, "simple_dnn")
    fitted.save(path)
    loaded = PysparkPipelineWrapper.unwrap(PipelineModel.load(path))
    assert type(loaded.stages[-1]) is SparkTorchModel
    before = fitted.transform(train).select("predictions").collect()
    after = loaded.transform(train).persist()
    assert after.select("predictions").collect() == before
    assert accuracy(after) > 0.6
    assert loaded.stages[-1].getPredictionCol() == "predictions"


def test_lazy_cnn_validation_early_stopping(train, assembler):
    """examples/lazy_load_cnn.py: serialize_torch_obj_lazy, miniBatch 128, iters 60 steps,
    validationPct 0.2, earlyStopPatience: a step an epoch, validated every step."""
    torch.manual_seed(0)
    torch_obj = serialize_torch_obj_lazy(model=Cnn, criterion=nn.CrossEntropyLoss,
                                         optimizer=torch.optim.Adam,
                                         optimizer_params={"lr": 0.0003})
    stage = SparkTorch(inputCol="features", labelCol="label", predictionCol="predictions",
                       torchObj=torch_obj, iters=60, verbose=1, miniBatch=128,
                       earlyStopPatience=5, validationPct=0.2, binary=BINARY)
    fitted = Pipeline(stages=[assembler, stage]).fit(train)
    history = fitted.stages[-1].getHistory()
    assert 1 <= len(history) <= 60
    assert all(h["steps"] == 1 and "validation_loss" in h for h in history)
    manifest = fitted.stages[-1].getManifest()
    assert manifest["training"]["steps_per_epoch"] == 1
    assert manifest["training"]["batch_size"] == 128
    assert accuracy(fitted.transform(train)) > 0.3
    module = fitted.stages[-1].getPytorchModel()
    assert isinstance(module, Cnn)


def test_mini_batch_iters_are_steps(train, assembler):
    """iters counts optimizer steps with a miniBatch: 40 steps of 64 rows, one epoch."""
    torch_obj = serialize_torch_obj(dnn(), nn.CrossEntropyLoss(), torch.optim.SGD, lr=0.001,
                                    momentum=0.9)
    fitted = Pipeline(stages=[assembler, SparkTorch(
        inputCol="features", labelCol="label", torchObj=torch_obj, iters=40, miniBatch=64,
        partitions=2, binary=BINARY)]).fit(train)
    stage = fitted.stages[-1]
    history = stage.getHistory()
    assert [h["steps"] for h in history] == [40]
    assert history[0]["rows"] == 40 * 64 * 2
    optimizer = stage.getManifest()["optimizer"]
    assert (optimizer["type"], optimizer["lr"], optimizer["momentum"]) == ("sgd", 0.001, 0.9)
    assert stage.getPredictionCol() == "predicted"


def test_autoencoder_vector_out(test):
    """No labelCol (SparkTorch's default: None): an autoencoder; useVectorOut: vectors."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 784))
    model = SparkTorch(inputCol="features", predictionCol="predictions",
                       torchObj=serialize_torch_obj(net, nn.MSELoss(), torch.optim.Adam,
                                                    lr=0.001),
                       iters=300, miniBatch=64, partitions=2, useVectorOut=True,
                       binary=BINARY).fit(test)
    assert model.getManifest()["label_kind"] == "input"
    rows = model.transform(test).select("features", "predictions").limit(50).collect()
    assert all(len(r["predictions"]) == 784 for r in rows)
    error = sum(float(((r["features"].toArray() - r["predictions"].toArray()) ** 2).sum())
                for r in rows)
    baseline = sum(float((r["features"].toArray() ** 2).sum()) for r in rows)
    assert error < 0.5 * baseline


@pytest.mark.parametrize("lock,barrier", [(True, False), (False, True)])
def test_hogwild(train, assembler, lock, barrier):
    """Hogwild with SparkTorch's lock (its default) and without; barrier stage and not."""
    torch_obj = serialize_torch_obj(dnn(), nn.CrossEntropyLoss(), torch.optim.Adam, lr=0.0003)
    stage = SparkTorch(inputCol="features", labelCol="label", torchObj=torch_obj, iters=30,
                       miniBatch=-1, mode="hogwild", acquireLock=lock, useBarrier=barrier,
                       partitions=2, port=0, binary=BINARY)
    fitted = Pipeline(stages=[assembler, stage]).fit(train)
    assert fitted.stages[-1].getManifest()["training"]["mode"] == "hogwild"
    assert accuracy(fitted.transform(train), prediction="predicted") > 0.5


def test_create_and_attach(train, assembler):
    """create_spark_torch_model and attach_pytorch_model_to_pipeline take an nn.Module."""
    net = dnn()
    assembled = assembler.transform(train)
    model = create_spark_torch_model(net, "features", "predicted")
    got = [r["predicted"] for r in model.transform(assembled).limit(20).collect()]
    rows = [r["features"].toArray() for r in assembled.limit(20).collect()]
    with torch.no_grad():
        expected = net(torch.tensor(rows, dtype=torch.float32)).argmax(1).tolist()
    assert got == [float(c) for c in expected]
    pipeline = attach_pytorch_model_to_pipeline(net, Pipeline(stages=[assembler]).fit(train))
    again = [r["predicted"] for r in pipeline.transform(train).limit(20).collect()]
    assert again == got


def test_what_cannot_be_the_same(train, capsys):
    """A loss or optimizer the binary does not run, and a mode SparkTorch does not know, fail
    in one line; compileMode says it has no effect."""
    cases = [
        (serialize_torch_obj(dnn(), nn.HuberLoss(), torch.optim.Adam, lr=0.1), {},
         "criterion HuberLoss is not one the sparktorch binary runs; it runs CrossEntropyLoss, "
         "NLLLoss, MSELoss, L1Loss, SmoothL1Loss, BCELoss, BCEWithLogitsLoss"),
        (serialize_torch_obj(dnn(), nn.CrossEntropyLoss(), torch.optim.Adadelta), {},
         "optimizer Adadelta is not one the sparktorch binary runs; it runs SGD, Adam, AdamW, "
         "RMSprop, Adagrad"),
        (serialize_torch_obj(dnn(), nn.CrossEntropyLoss(), torch.optim.Adam), {"mode": "ring"},
         "Mode: ring not recognized: synchronous or hogwild"),
    ]
    for torch_obj, more, message in cases:
        with pytest.raises(OptionError) as caught:
            SparkTorch(torchObj=torch_obj, labelCol="label", binary=BINARY, **more).fit(train)
        assert str(caught.value) == message
    capsys.readouterr()
    options = compat.native_options(dict(compat.SPARKTORCH_DEFAULTS, compileMode="default",
                                         earlyStopPatience=3), log=sys.stderr)
    assert (options["iters"], options["miniBatch"], options["earlyStopPatience"]) == (10, -1, 3)
    assert capsys.readouterr().err == (
        "sparktorch: earlyStopPatience keeps the weights of the best step's loss (SparkTorch "
        "0.2.0 kept the last step's)\n"
        "sparktorch: compileMode='default' has no effect: the binary runs the model as "
        "TorchScript (SparkTorch 0.2.0 did not compile it either)\n")
    steps = compat.native_options(dict(compat.SPARKTORCH_DEFAULTS, miniBatch=32, iters=50))
    assert (steps["iters"], steps["stepsPerEpoch"], steps["miniBatch"]) == (1, 50, 32)
    sync = compat.native_options(dict(compat.SPARKTORCH_DEFAULTS, acquireLock=True, port=1))
    assert "acquireLock" not in sync and "port" not in sync and "useBarrier" not in sync


def test_defaults_and_getters_are_sparktorchs():
    """The defaults are SparkTorch 0.2.0's own (its class, imported where it is installed)."""
    code = ("import json, sparktorch; s = sparktorch.SparkTorch(); "
            "print(json.dumps({p.name: s.getOrDefault(p) for p in s.params "
            "if s.hasDefault(p)}))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if "blocker" not in p))
    theirs = json.loads(subprocess.run([PYTHON, "-c", code], env=env, check=True,
                                       capture_output=True, text=True).stdout.splitlines()[-1])
    assert theirs == compat.SPARKTORCH_DEFAULTS
    stage = SparkTorch()
    assert (stage.getAqcuireLock(), stage.getBarrier(), stage.getVectorOut(),
            stage.getCompileMode(), stage.getLabelCol(), stage.getPredictionCol(),
            stage.getMiniBatch(), stage.getPartitions()) == (
                True, False, False, None, None, "predicted", -1, -1)
    assert SparkTorchModel().getInputCol() == "encoded"


def test_native_label_col_none():
    """sparktorch_spark.ml: labelCol=None means no label (an autoencoder), as it says."""
    assert ml.SparkTorch(labelCol=None).getLabelCol() == ""
    assert ml.SparkTorch().getLabelCol() == "label"
    assert ml.SparkTorch().setLabelCol(None).getLabelCol() == ""


def test_estimator_saved_and_loaded(spark):  # pylint: disable=unused-argument,redefined-outer-name
    """An unfitted Pipeline with SparkTorch saves and loads with its parameters."""
    torch_obj = serialize_torch_obj(dnn(), nn.CrossEntropyLoss(), torch.optim.Adam, lr=0.01)
    path = os.path.join(WORK, "estimator")
    Pipeline(stages=[SparkTorch(torchObj=torch_obj, iters=3, miniBatch=32,
                                mode="hogwild")]).save(path)
    stage = PysparkPipelineWrapper.unwrap(Pipeline.load(path)).getStages()[0]
    assert type(stage) is SparkTorch
    assert (stage.getIters(), stage.getMiniBatch(), stage.getMode(), stage.getLabelCol(),
            stage.getTorchObj()) == (3, 32, "hogwild", None, torch_obj)


OLD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat_old.py")


@pytest.fixture(scope="module")
def old_saved(spark, test):
    """What SparkTorch 0.2.0 itself saved (compat_old.py, run where it is installed)."""
    out = os.path.join(WORK, "old")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if "blocker" not in p))
    done = subprocess.run([PYTHON, OLD, out, os.path.join(DATA, "test.parquet")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(os.path.join(out, "expected.json")) as f:
        return out, json.load(f)


def first_predictions(model, test, column="predicted"):
    rows = model.transform(test).orderBy("id").limit(50).select(column).collect()
    return [r[0] for r in rows]


def test_old_pipeline_unwrapped(old_saved, test):
    """A PipelineModel that SparkTorch 0.2.0 saved (its model a dill string in a
    StopWordsRemover) loads through unwrap and predicts what the network predicts."""
    out, expected = old_saved
    loaded = PysparkPipelineWrapper.unwrap(PipelineModel.load(os.path.join(out, "main")))
    stage = loaded.stages[-1]
    assert type(stage) is SparkTorchModel
    assert (stage.getInputCol(), stage.getPredictionCol()) == ("features", "predicted")
    assert first_predictions(loaded, test) == expected


def test_old_pipeline_converted(old_saved, test):
    """python -m sparktorch_spark.convert OLD NEW: NEW loads with plain PipelineModel.load."""
    out, expected = old_saved
    new = os.path.join(WORK, "converted")
    done = subprocess.run([PYTHON, "-m", "sparktorch_spark.convert", os.path.join(out, "main"),
                           new, "--example-features", "784"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "convert: stage 0: SparkTorch 0.2.0's SparkTorchModel -> "
        "sparktorch_spark.compat.SparkTorchModel", "convert: wrote %s" % new]
    loaded = PipelineModel.load(new)
    assert type(loaded.stages[0]) is SparkTorchModel
    assert first_predictions(loaded, test) == expected
    estimator = PysparkPipelineWrapper.unwrap(Pipeline.load(os.path.join(out, "estimator")))
    stage = estimator.getStages()[0]
    assert type(stage) is SparkTorch
    assert (stage.getIters(), stage.getLabelCol(), stage.getMiniBatch()) == (3, "label", 16)


def test_old_pipeline_class_missing(old_saved):
    """A pickled network whose class's module is not importable here: one line that says so."""
    out, _ = old_saved
    with pytest.raises(OptionError) as caught:
        PysparkPipelineWrapper.unwrap(PipelineModel.load(os.path.join(out, "module")))
    why = ("cannot read modStr (SparkTorch's pickled model): ModuleNotFoundError: No module "
           "named 'oldnets' (the model's classes must be importable on the driver, as they "
           "were for SparkTorch)")
    assert str(caught.value) == why + ("; or convert it once where they are: python -m "
                                       "sparktorch_spark.convert OLD NEW")
    done = subprocess.run([PYTHON, "-m", "sparktorch_spark.convert", os.path.join(out, "module"),
                           os.path.join(WORK, "never")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "convert: error: " + why
    assert not os.path.exists(os.path.join(WORK, "never"))


def test_man_page_says_the_same_only_where_it_is():
    """Every OPTIONS entry of sparktorch-spark(7) that says "SparkTorch: the same" is an option
    whose default is SparkTorch 0.2.0's and that compat passes on unchanged."""
    import re  # pylint: disable=import-outside-toplevel
    from sparktorch_spark.options import TRAIN_OPTIONS  # pylint: disable=import-outside-toplevel
    with open(os.path.join(os.environ["REPO"], "man", "sparktorch-spark.7")) as f:
        page = f.read()
    options = page.split("\n.SH OPTIONS\n", 1)[1].split("\n.SH ", 1)[0]
    same = []
    for entry in options.split("\n.TP\n")[1:]:
        name = re.match(r"\.BR? (\w+)", entry).group(1)
        if "SparkTorch: the same" in entry:
            same.append(name)
    assert sorted(same) == ["device", "inputCol", "useVectorOut", "validationPct"]
    for name in same:
        assert name in compat.SPARKTORCH_DEFAULTS and name not in compat.TRANSLATED
        assert TRAIN_OPTIONS[name][0] == compat.SPARKTORCH_DEFAULTS[name], name

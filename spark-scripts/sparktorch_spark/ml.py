"""Spark ML stages: `SparkTorch` (an Estimator) and `SparkTorchModel` (its Model).

They take SparkTorch's parameter names (options.TRAIN_OPTIONS; ml_params.py declares them),
follow pyspark.ml's conventions (keyword-only constructors and setParams, a getter and a setter
per Param), sit in a `Pipeline`, and are saved and loaded by Spark's own `Pipeline.save` /
`PipelineModel.load`: a SparkTorchModel stage is its parameters (Spark's metadata) and
`model.pt` beside them, the TorchScript file sparktorch trained, which PyTorch loads as it is
(`torch.jit.load`). Loading needs this module importable on the driver, nothing else: no
pickles.

    from sparktorch_spark.ml import SparkTorch, create_spark_torch_model
    stage = SparkTorch(torchObj="mlp.json", inputCol="features", labelCol="label", iters=5)
    model = Pipeline(stages=[assembler, stage]).fit(df)
    model.save("hdfs:///models/fmnist")
    PipelineModel.load("hdfs:///models/fmnist").transform(test).select("predictions")
    model.stages[-1].saveModelFile("mlp.pt")          # SparkTorch's getPytorchModel, as a file
    model.stages[-1].getHistory()                      # the metrics of every epoch
"""
import io
import json
import zipfile

from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.ml.util import (DefaultParamsReadable, DefaultParamsReader, DefaultParamsWritable,
                             MLReadable, MLReader, MLWritable, MLWriter)

from . import model_io
from . import spark as layer
from .ml_params import PredictionParams, TrainingParams, given, set_defaults
from .options import TrainOptions

MODEL_FILE = "model.pt"
MANIFEST = "/extra/sparktorch.json"  # inside the .pt (a zip), after the archive's own folder


def model_manifest(model):
    """The manifest sparktorch embeds in a model it wrote (sparktorch-formats(7), MODEL FILE), as a
    dict; {} for a TorchScript file without one."""
    with zipfile.ZipFile(io.BytesIO(model)) as z:
        for name in z.namelist():
            if name.endswith(MANIFEST):
                return json.loads(z.read(name).decode("utf-8"))
    return {}


class SparkTorch(Estimator, TrainingParams, DefaultParamsReadable, DefaultParamsWritable):
    """Trains a model with sparktorch; `fit(df)` returns a SparkTorchModel. Every option of
    options.TRAIN_OPTIONS is a Param, with getX and setX (`SparkTorch(torchObj="mlp.json",
    iters=5)`, `setParams(iters=3)`, `setIters(3)`, `getIters()`)."""

    @keyword_only
    def __init__(self, *, torchObj=None, trainConfig=None, inputCol="features", inputCols=None,
                 labelCol="label", predictionCol="predictions", iters=10, miniBatch=64,
                 stepsPerEpoch=None, validationPct=0.0, earlyStopPatience=0, mode="sync", acquireLock=False,
                 pullEvery=1, partitionShuffles=1, useBarrier=True, useVectorOut=False,
                 device="cpu", port=0, verbose=0, loss=None, optimizer=None, lr=None,
                 lrSchedule=None, lrScaling="none", allreduceDtype="fp32", allreduceOverlap=False,
                 clipGradNorm=None, clipGradValue=None, seed=0,
                 inputShape=None, partitions=None, threads=None, binary=None, driverBinary=None,
                 timeout=600.0, retries=1, onBadRow="fail", readParquet=True,
                 rowMemory=None, spillDir=None, minPartitions=None, checkpointEvery=1,
                 checkpointDir=None):
        super().__init__()
        set_defaults(self, self.NAMES)
        self.setParams(**self._input_kwargs)

    @keyword_only
    def setParams(self, *, torchObj=None, trainConfig=None, inputCol="features", inputCols=None,
                  labelCol="label", predictionCol="predictions", iters=10, miniBatch=64,
                  stepsPerEpoch=None, validationPct=0.0, earlyStopPatience=0, mode="sync", acquireLock=False,
                  pullEvery=1, partitionShuffles=1, useBarrier=True, useVectorOut=False,
                  device="cpu", port=0, verbose=0, loss=None, optimizer=None, lr=None,
                  lrSchedule=None, lrScaling="none", allreduceDtype="fp32", allreduceOverlap=False,
                  clipGradNorm=None, clipGradValue=None, seed=0,
                  inputShape=None, partitions=None, threads=None, binary=None, driverBinary=None,
                  timeout=600.0, retries=1, onBadRow="fail", readParquet=True,
                  rowMemory=None, spillDir=None, minPartitions=None, checkpointEvery=1,
                  checkpointDir=None):
        """Sets the Params given by keyword; returns this stage."""
        return self._set(**given(self._input_kwargs))

    def setTorchObj(self, value):
        return self._set(torchObj=value)

    def setTrainConfig(self, value):
        return self._set(trainConfig=value)

    def setLabelCol(self, value):
        """None (or ""): no label, an autoencoder."""
        return self._set(labelCol="" if value is None else value)

    def setIters(self, value):
        return self._set(iters=value)

    def setMiniBatch(self, value):
        return self._set(miniBatch=value)

    def setStepsPerEpoch(self, value):
        return self._set(stepsPerEpoch=value)

    def setValidationPct(self, value):
        return self._set(validationPct=value)

    def setEarlyStopPatience(self, value):
        return self._set(earlyStopPatience=value)

    def setMode(self, value):
        return self._set(mode=value)

    def setAcquireLock(self, value):
        return self._set(acquireLock=value)

    def setPullEvery(self, value):
        return self._set(pullEvery=value)

    def setPartitionShuffles(self, value):
        return self._set(partitionShuffles=value)

    def setUseBarrier(self, value):
        return self._set(useBarrier=value)

    def setPort(self, value):
        return self._set(port=value)

    def setLoss(self, value):
        return self._set(loss=value)

    def setOptimizer(self, value):
        return self._set(optimizer=value)

    def setLr(self, value):
        return self._set(lr=value)

    def setLrSchedule(self, value):
        return self._set(lrSchedule=value)

    def setLrScaling(self, value):
        return self._set(lrScaling=value)

    def setAllreduceDtype(self, value):
        return self._set(allreduceDtype=value)

    def setAllreduceOverlap(self, value):
        return self._set(allreduceOverlap=value)

    def setClipGradNorm(self, value):
        return self._set(clipGradNorm=value)

    def setClipGradValue(self, value):
        return self._set(clipGradValue=value)

    def setSeed(self, value):
        return self._set(seed=value)

    def setInputShape(self, value):
        return self._set(inputShape=value)

    def setPartitions(self, value):
        return self._set(partitions=value)

    def setDriverBinary(self, value):
        return self._set(driverBinary=value)

    def setTimeout(self, value):
        return self._set(timeout=value)

    def setRetries(self, value):
        return self._set(retries=value)

    def setReadParquet(self, value):
        return self._set(readParquet=value)

    def setRowMemory(self, value):
        return self._set(rowMemory=value)

    def setSpillDir(self, value):
        return self._set(spillDir=value)

    def setMinPartitions(self, value):
        return self._set(minPartitions=value)

    def setCheckpointEvery(self, value):
        return self._set(checkpointEvery=value)

    def setCheckpointDir(self, value):
        return self._set(checkpointDir=value)

    def _fit(self, dataset):
        options = TrainOptions(**self.param_values())
        result = layer.train(dataset, options)
        params = {name: getattr(options, name) for name in PredictionParams.NAMES}
        if result.features != [options.inputCol]:  # assembled: transform takes the same columns
            params["inputCols"] = result.features
        model = SparkTorchModel(model=result.model, **given(params))
        model.summaries = result.summaries
        model.jobId = result.job_id
        model.attempts = result.attempts
        model.attemptStarts = result.starts
        return model


class SparkTorchModel(Model, PredictionParams, MLReadable, MLWritable):
    """A trained (or attached) sparktorch model: `transform(df)` adds `predictionCol`, a double
    (the class, or the single output), or with useVectorOut a vector of the model's outputs.
    `modelBytes()` is the TorchScript file, `saveModelFile(path)` writes it, and
    `getPytorchModel()` loads it with torch on the driver. `getHistory()` gives the metrics of
    every epoch (from the model's manifest, so a saved and loaded model has them too);
    `summaries` the tasks' summary records of the job that trained it, `jobId`, `attempts` and
    `attemptStarts` (the epoch each attempt started from: after the first, the one after the
    checkpoint it resumed)."""

    @keyword_only
    def __init__(self, *, model=None, inputCol="features", inputCols=None,
                 predictionCol="predictions", useVectorOut=False, device="cpu", verbose=0,
                 threads=None, binary=None, onBadRow="fail"):
        super().__init__()
        kwargs = dict(self._input_kwargs)
        self._model = kwargs.pop("model", None)
        self.summaries = []
        self.jobId = None
        self.attempts = None
        self.attemptStarts = None
        set_defaults(self, self.NAMES)
        self.setParams(**kwargs)

    @keyword_only
    def setParams(self, *, inputCol="features", inputCols=None, predictionCol="predictions",
                  useVectorOut=False, device="cpu", verbose=0, threads=None, binary=None,
                  onBadRow="fail"):
        """Sets the Params given by keyword; returns this model."""
        return self._set(**given(self._input_kwargs))

    def modelBytes(self):
        return self._model

    def getManifest(self):
        """The manifest sparktorch embedded in the model (its spec, input shape, row format,
        loss, optimizer, training settings, metrics and history); {} for a plain TorchScript
        model."""
        return model_manifest(self._model)

    def getHistory(self):
        """The metrics of every epoch the model was trained for, in order (a list of dicts:
        epoch, train_loss, train_accuracy, validation_loss, samples_per_second, ...)."""
        return list(self.getManifest().get("history", []))

    def saveModelFile(self, path):
        """Writes the TorchScript file to `path` (local, or hdfs:// and the like)."""
        model_io.copy_out(self._model, path, _spark_context())

    def getPytorchModel(self):
        """The model as a torch.jit.ScriptModule (needs torch on the driver)."""
        import torch  # pylint: disable=import-outside-toplevel
        return torch.jit.load(io.BytesIO(self._model))

    def _transform(self, dataset):
        v = self.param_values()
        return layer.predict(dataset, self._model, input_col=v["inputCol"],
                             input_cols=v["inputCols"], prediction_col=v["predictionCol"],
                             vector_out=v["useVectorOut"], binary=v["binary"],
                             threads=v["threads"], device=v["device"], verbose=v["verbose"],
                             on_bad_row=v["onBadRow"])

    def write(self):
        return _ModelWriter(self)

    @classmethod
    def read(cls):
        return _ModelReader(cls)


def _spark_context():
    from pyspark import SparkContext  # pylint: disable=import-outside-toplevel
    return SparkContext._active_spark_context  # pylint: disable=protected-access


class _ModelWriter(MLWriter):
    """Spark's metadata for the parameters, and model.pt beside it."""

    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path):
        model_io.save_stage(self.sparkSession, self.instance, path, MODEL_FILE,
                            self.instance.modelBytes())


class _ModelReader(MLReader):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        metadata, model = model_io.load_stage(self.sparkSession, path, MODEL_FILE)
        instance = self.cls(model=model)
        instance._resetUid(metadata["uid"])  # pylint: disable=protected-access
        DefaultParamsReader.getAndSetParams(instance, metadata)
        return instance


def create_spark_torch_model(model, inputCol="features", predictionCol="predictions",
                             useVectorOut=False, **kwargs):
    """A SparkTorchModel for inference only (SparkTorch's create_spark_torch_model): `model` is
    a TorchScript file (a local path) or its bytes, trained by sparktorch or saved from Python
    with `torch.jit.script(net).save(path)`. Further keywords are SparkTorchModel's Params."""
    if isinstance(model, str):
        with open(model, "rb") as f:
            model = f.read()
    return SparkTorchModel(model=bytes(model), **given(dict(
        kwargs, inputCol=inputCol, predictionCol=predictionCol, useVectorOut=useVectorOut)))

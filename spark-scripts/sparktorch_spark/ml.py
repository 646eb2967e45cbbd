"""Spark ML stages: `SparkTorch` (an Estimator) and `SparkTorchModel` (its Model).

They take SparkTorch's parameter names (see options.TRAIN_OPTIONS), sit in a `Pipeline`, and
are saved and loaded by Spark's own `Pipeline.save` / `PipelineModel.load`: a SparkTorchModel
stage is its parameters (Spark's metadata) and `model.pt` beside them, the TorchScript file
sparktorch trained, which PyTorch loads as it is (`torch.jit.load`). Loading needs this module
importable on the driver, nothing else: no pickles.

    from sparktorch_spark.ml import SparkTorch, create_spark_torch_model
    stage = SparkTorch(torchObj="mlp.json", inputCol="features", labelCol="label", iters=5)
    model = Pipeline(stages=[assembler, stage]).fit(df)
    model.save("hdfs:///models/fmnist")
    PipelineModel.load("hdfs:///models/fmnist").transform(test).select("predictions")
    model.stages[-1].saveModelFile("mlp.pt")          # SparkTorch's getPytorchModel, as a file
"""
import io
import os

from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.util import (DefaultParamsReadable, DefaultParamsReader, DefaultParamsWritable,
                             DefaultParamsWriter, MLReadable, MLReader, MLWritable, MLWriter)

from . import spark as layer
from .options import TRAIN_OPTIONS, TrainOptions

_CONVERTERS = {str: TypeConverters.toString, int: TypeConverters.toInt,
               float: TypeConverters.toFloat, bool: TypeConverters.toBoolean,
               list: TypeConverters.toListString}
# The parameters a model keeps for transform: what its predictions need.
MODEL_PARAMS = ("inputCol", "inputCols", "predictionCol", "useVectorOut", "device", "verbose",
                "threads", "binary", "onBadRow")
MODEL_FILE = "model.pt"


def _params(names):
    """Class attributes: a Param for each option in `names`."""
    return {name: Param(Params._dummy(), name, TRAIN_OPTIONS[name][2],  # noqa pylint: disable=protected-access
                        typeConverter=_CONVERTERS[TRAIN_OPTIONS[name][1]]) for name in names}


def _defaults(names):
    return {name: TRAIN_OPTIONS[name][0] for name in names}


def _given(kwargs):
    """The values given, without None: None means the default, and a None in the param map
    would not load back (PySpark's type converters refuse it)."""
    return {name: value for name, value in kwargs.items() if value is not None}


def _values(stage, names):
    return {name: stage.getOrDefault(name) for name in names}


class SparkTorch(Estimator, DefaultParamsReadable, DefaultParamsWritable):
    """Trains a model with sparktorch; `fit(df)` returns a SparkTorchModel. Every option of
    options.TRAIN_OPTIONS is a parameter (`SparkTorch(torchObj="mlp.json", iters=5)`,
    `setParams(...)`, `getOrDefault("iters")`). The fitted model's `summaries` hold the tasks'
    (and the parameter server's) summary records."""

    def __init__(self, **kwargs):
        super().__init__()
        self._setDefault(**_defaults(TRAIN_OPTIONS))
        self._set(**_given(kwargs))

    def setParams(self, **kwargs):
        return self._set(**_given(kwargs))

    def _fit(self, dataset):
        options = TrainOptions(**_values(self, TRAIN_OPTIONS))
        result = layer.train(dataset, options)
        params = {name: getattr(options, name) for name in MODEL_PARAMS}
        if result.features != [options.inputCol]:  # assembled: transform takes the same columns
            params["inputCols"] = result.features
        model = SparkTorchModel(result.model, **params)
        model.summaries = result.summaries
        model.jobId = result.job_id
        return model


class SparkTorchModel(Model, MLReadable, MLWritable):
    """A trained (or attached) sparktorch model: `transform(df)` adds `predictionCol`, a double
    (the class, or the single output), or with useVectorOut a vector of the model's outputs.
    `modelBytes()` is the TorchScript file, `saveModelFile(path)` writes it, and
    `getPytorchModel()` loads it with torch on the driver."""

    def __init__(self, model=None, **kwargs):
        super().__init__()
        self._model = model
        self.summaries = []
        self.jobId = None
        self._setDefault(**_defaults(MODEL_PARAMS))
        self._set(**_given(kwargs))

    def setParams(self, **kwargs):
        return self._set(**_given(kwargs))

    def modelBytes(self):
        return self._model

    def saveModelFile(self, path):
        """Writes the TorchScript file to `path` (local, or hdfs:// and the like)."""
        layer.copy_out(self._model, path, _spark_context())

    def getPytorchModel(self):
        """The model as a torch.jit.ScriptModule (needs torch on the driver)."""
        import torch  # pylint: disable=import-outside-toplevel
        return torch.jit.load(io.BytesIO(self._model))

    def _transform(self, dataset):
        v = _values(self, MODEL_PARAMS)
        return layer.predict(dataset, self._model, v["inputCol"], v["inputCols"],
                             v["predictionCol"], v["useVectorOut"], False, v["binary"],
                             v["threads"], v["device"], verbose=v["verbose"],
                             on_bad_row=v["onBadRow"])

    def write(self):
        return _ModelWriter(self)

    @classmethod
    def read(cls):
        return _ModelReader(cls)


# Each stage's Params as class attributes, where PySpark's Params finds and copies them.
for _stage, _names in ((SparkTorch, TRAIN_OPTIONS), (SparkTorchModel, MODEL_PARAMS)):
    for _name, _param in _params(_names).items():
        setattr(_stage, _name, _param)


def _spark_context():
    from pyspark import SparkContext  # pylint: disable=import-outside-toplevel
    return SparkContext._active_spark_context  # pylint: disable=protected-access


class _ModelWriter(MLWriter):
    """Spark's metadata for the parameters, and model.pt beside it."""

    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path):
        DefaultParamsWriter.saveMetadata(self.instance, path, self.sc)
        layer.write_bytes(self.sc, os.path.join(path, MODEL_FILE), self.instance.modelBytes())


class _ModelReader(MLReader):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        metadata = DefaultParamsReader.loadMetadata(path, self.sc)
        instance = self.cls(layer.read_bytes(self.sc, os.path.join(path, MODEL_FILE)))
        instance._resetUid(metadata["uid"])  # pylint: disable=protected-access
        DefaultParamsReader.getAndSetParams(instance, metadata)
        return instance


def create_spark_torch_model(model, inputCol="features", predictionCol="predictions",
                             useVectorOut=False, **kwargs):
    """A SparkTorchModel for inference only (SparkTorch's create_spark_torch_model): `model` is
    a TorchScript file (a local path) or its bytes, trained by sparktorch or saved from Python
    with `torch.jit.script(net).save(path)`."""
    if isinstance(model, str):
        with open(model, "rb") as f:
            model = f.read()
    return SparkTorchModel(bytes(model), inputCol=inputCol, predictionCol=predictionCol,
                           useVectorOut=useVectorOut, **kwargs)

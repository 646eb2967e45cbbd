"""SparkTorch 0.2.0's API over sparktorch: a SparkTorch user changes one import line.

    from sparktorch_spark.compat import (SparkTorch, SparkTorchModel, serialize_torch_obj,
        serialize_torch_obj_lazy, create_spark_torch_model, attach_pytorch_model_to_pipeline,
        PysparkPipelineWrapper)

Names, parameters, defaults and meanings are SparkTorch 0.2.0's (its torch_distributed.py,
util.py, inference.py and pipeline_util.py at that tag). `native_options` is the one place that
turns them into sparktorch's (sparktorch_spark.ml); sparktorch-spark(7), COMING FROM SPARKTORCH,
lists what differs. On the driver the model is scripted (or traced) to TorchScript and the
criterion and optimizer become the binary's loss and optimizer (torch_convert); the executors
run the binary, with no Python. Needs torch and dill on the driver, as SparkTorch did.
"""
import copy
import io
import json
import os
import sys
import tempfile
import warnings

from pyspark import keyword_only
from pyspark.ml import Estimator, Pipeline, PipelineModel
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasInputCol, HasLabelCol, HasPredictionCol
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from . import compat_pickles
from . import ml
from . import spark as layer
from .ml_params import given
from .options import MODES, OptionError, TrainOptions

# SparkTorch 0.2.0's SparkTorch(...) defaults, as its _setDefault has them.
SPARKTORCH_DEFAULTS = {
    "inputCol": "features", "labelCol": None, "torchObj": "", "iters": 10,
    "predictionCol": "predicted", "partitions": -1, "acquireLock": True, "verbose": 0,
    "partitionShuffles": 1, "port": 3000, "useBarrier": False, "useVectorOut": False,
    "earlyStopPatience": -1, "miniBatch": -1, "validationPct": 0.0, "mode": "synchronous",
    "device": "cpu", "compileMode": None}
# The parameters whose value native_options changes on the way to sparktorch_spark.ml (every
# other one passes as it is).
TRANSLATED = ("torchObj", "labelCol", "iters", "partitions", "acquireLock", "partitionShuffles",
              "port", "useBarrier", "earlyStopPatience", "miniBatch", "compileMode")

_CONVERT = {str: TypeConverters.toString, int: TypeConverters.toInt,
            float: TypeConverters.toFloat, bool: TypeConverters.toBoolean}


def _param(name, kind, doc):
    return Param(Params._dummy(), name, doc, typeConverter=_CONVERT[kind])  # noqa pylint: disable=protected-access


def serialize_torch_obj(model, criterion, optimizer, **kwargs):
    """SparkTorch's torchObj string: the model (an nn.Module), the criterion (a loss module),
    the optimizer's class and its keywords (lr=...)."""
    return compat_pickles.torch_obj_string(
        compat_pickles.TorchObj(model, criterion, optimizer, kwargs, False, None),
        [list(p.shape) for p in model.parameters()])


def serialize_torch_obj_lazy(model, criterion, optimizer, optimizer_params=None,
                             model_parameters=None):
    """SparkTorch's torchObj string of classes: the model's (made with `model_parameters`),
    the criterion's and the optimizer's (with `optimizer_params`)."""
    net = model(**model_parameters) if model_parameters else model()
    return compat_pickles.torch_obj_string(
        compat_pickles.TorchObj(model, criterion, optimizer, optimizer_params, True,
                                model_parameters),
        [list(p.shape) for p in net.parameters()])


def _instances(obj):
    """(module, criterion, optimizer class, its keywords) of a TorchObj, lazy or not."""
    if obj.is_lazy:
        module = obj.model(**obj.model_parameters) if obj.model_parameters else obj.model()
        return module, obj.criterion, obj.optimizer, obj.optimizer_params
    return obj.model, obj.criterion, obj.optimizer, obj.optimizer_params


def native_options(values, log=sys.stderr):
    """sparktorch_spark.ml's options (a dict for TrainOptions, without the model's files) for
    SparkTorch 0.2.0's Param values `values` (every name of SPARKTORCH_DEFAULTS, binary, and
    for hogwild `features`, a row's, which the parameter server needs first).

    `iters` counts SparkTorch's optimizer steps: with miniBatch -1 a step takes the whole
    partition, so steps are epochs; with miniBatch N each step takes N rows, so it becomes an
    epoch of `iters` steps (stepsPerEpoch), or, with earlyStopPatience, `iters` epochs of one step
    each, since SparkTorch validates and checks its patience every step. Sync mode ignores
    acquireLock, partitionShuffles, port and useBarrier, as SparkTorch's does; partitions -1
    keeps the input's partitions; earlyStopPatience -1 never stops."""
    v = values
    if MODES.get(v["mode"]) not in ("sync", "hogwild"):
        raise OptionError("Mode: %s not recognized: synchronous or hogwild" % v["mode"])
    hogwild = MODES[v["mode"]] == "hogwild"
    out = {"inputCol": v["inputCol"], "labelCol": v["labelCol"] or None,
           "predictionCol": v["predictionCol"], "mode": v["mode"], "device": v["device"],
           "verbose": v["verbose"], "validationPct": float(v["validationPct"]),
           "useVectorOut": v["useVectorOut"], "miniBatch": v["miniBatch"], "iters": v["iters"],
           "partitions": v["partitions"] if v["partitions"] > 0 else None,
           "earlyStopPatience": max(0, v["earlyStopPatience"])}
    if v["miniBatch"] > 0 and out["earlyStopPatience"] > 0:
        out.update(stepsPerEpoch=1)
    elif v["miniBatch"] > 0:
        out.update(iters=1, stepsPerEpoch=v["iters"])
    # Epochs of one step each: a checkpoint for a lost executor every tenth of them, not every step.
    out["checkpointEvery"] = max(1, out["iters"] // 10)
    if hogwild:
        out.update(acquireLock=v["acquireLock"], partitionShuffles=v["partitionShuffles"],
                   port=v["port"], useBarrier=v["useBarrier"])
    if v.get("binary"):
        out["binary"] = v["binary"]
    if hogwild and v.get("features"):  # the server builds the model before any row arrives
        out["inputShape"] = str(v["features"])
    if out["earlyStopPatience"] > 0:
        log.write("sparktorch: earlyStopPatience keeps the weights of the best step's loss "
                  "(SparkTorch 0.2.0 kept the last step's)\n")
    if v.get("compileMode"):
        log.write("sparktorch: compileMode=%r has no effect: the binary runs the model as "
                  "TorchScript (SparkTorch 0.2.0 did not compile it either)\n" % v["compileMode"])
    return out


def _feature_count(dataset, input_col):
    """The features of the first row of `input_col`, for tracing a model."""
    first = dataset.select(input_col).first()
    if first is None:
        raise OptionError("cannot trace the model on an empty DataFrame")
    value = first[0]
    return len(value) if hasattr(value, "__len__") else 1


def _script(module, dataset, input_col, log, features=None):
    """The TorchScript bytes of `module`: scripted, else traced on a row of `features`
    features, or of `dataset`'s first row."""
    from . import torch_convert  # pylint: disable=import-outside-toplevel
    try:
        return torch_convert.script_module(module, features, log=_log_line(log))
    except OptionError:
        if dataset is None:
            raise
        return torch_convert.script_module(module, _feature_count(dataset, input_col),
                                           log=_log_line(log))


def _log_line(log):
    return lambda line: log.write(line.rstrip("\n") + "\n")


class SparkTorch(Estimator, HasInputCol, HasPredictionCol, HasLabelCol, DefaultParamsReadable,
                 DefaultParamsWritable):
    """SparkTorch 0.2.0's estimator: `fit(df)` trains torchObj (serialize_torch_obj's string)
    with the sparktorch binary and returns a SparkTorchModel. `binary` (not SparkTorch's) is
    where the executors find the binary, as sparktorch_spark.ml's."""

    torchObj = _param("torchObj", str, "The serialized torch object")
    mode = _param("mode", str, "The training mode: synchronous or hogwild")
    device = _param("device", str, "cpu or cuda")
    iters = _param("iters", int, "optimizer steps (epochs with miniBatch -1)")
    partitions = _param("partitions", int, "tasks; -1: the input's partitions")
    verbose = _param("verbose", int, "1: the loss of every step in the task logs")
    acquireLock = _param("acquireLock", bool, "hogwild: one task at a time")
    partitionShuffles = _param("partitionShuffles", int, "hogwild: rounds of iters")
    port = _param("port", int, "hogwild: the parameter server's port")
    useBarrier = _param("useBarrier", bool, "hogwild: a barrier stage")
    useVectorOut = _param("useVectorOut", bool, "predictions as vectors")
    earlyStopPatience = _param("earlyStopPatience", int, "steps without a better loss; -1: never")
    miniBatch = _param("miniBatch", int, "rows a step; -1: the whole partition")
    validationPct = _param("validationPct", float, "share of each partition for validation")
    compileMode = _param("compileMode", str, "torch.compile's mode (no effect)")
    binary = _param("binary", str, "the sparktorch binary on the executors")

    @keyword_only
    def __init__(self, inputCol=None, labelCol=None, torchObj=None, iters=None,
                 predictionCol=None, partitions=None, acquireLock=None, verbose=None,
                 partitionShuffles=None, port=None, useBarrier=None, useVectorOut=None,
                 earlyStopPatience=None, miniBatch=None, validationPct=None, mode=None,
                 device=None, compileMode=None, binary=None):
        super().__init__()
        self._setDefault(**SPARKTORCH_DEFAULTS)
        self.setParams(**self._input_kwargs)

    @keyword_only
    def setParams(self, inputCol=None, labelCol=None, torchObj=None, iters=None,
                  predictionCol=None, partitions=None, acquireLock=None, verbose=None,
                  partitionShuffles=None, port=None, useBarrier=None, useVectorOut=None,
                  earlyStopPatience=None, miniBatch=None, validationPct=None, mode=None,
                  device=None, compileMode=None, binary=None):
        return self._set(**given(self._input_kwargs))

    def _get(self, name):
        param = self.getParam(name)
        return self.getOrDefault(param) if self.isDefined(param) else None

    def getLabelCol(self):
        return self._get("labelCol") or None

    def getTorchObj(self):
        return self._get("torchObj")

    def getEarlyStopPatience(self):
        return self._get("earlyStopPatience")

    def getIters(self):
        return self._get("iters")

    def getPartitions(self):
        return self._get("partitions")

    def getVerbose(self):
        return self._get("verbose")

    def getAqcuireLock(self):  # SparkTorch's spelling
        return self._get("acquireLock")

    getAcquireLock = getAqcuireLock

    def getPartitionShuffles(self):
        return self._get("partitionShuffles")

    def getPort(self):
        return self._get("port")

    def getBarrier(self):
        return self._get("useBarrier")

    def getVectorOut(self):
        return self._get("useVectorOut")

    def getMiniBatch(self):
        return self._get("miniBatch")

    def getValidationPct(self):
        return self._get("validationPct")

    def getMode(self):
        return self._get("mode")

    def getDevice(self):
        return self._get("device")

    def getCompileMode(self):
        return self._get("compileMode")

    def _fit(self, dataset):
        values = {name: self._get(name) for name in list(SPARKTORCH_DEFAULTS) + ["binary"]}
        if MODES.get(values["mode"]) == "hogwild":
            values["features"] = _feature_count(dataset, values["inputCol"])
        options = native_options(values)
        module, criterion, optimizer, params = _instances(
            compat_pickles.load_torch_obj(values["torchObj"]))
        from . import torch_convert  # pylint: disable=import-outside-toplevel
        config = torch_convert.train_config(criterion, optimizer, params)
        with tempfile.TemporaryDirectory(prefix="sparktorch-compat-") as tmp:
            options["torchObj"] = os.path.join(tmp, "model.pt")
            options["trainConfig"] = os.path.join(tmp, "model.json")
            with open(options["torchObj"], "wb") as f:
                f.write(_script(module, dataset, values["inputCol"], sys.stderr))
            with open(options["trainConfig"], "w") as f:
                json.dump(config, f)
            result = layer.train(dataset, TrainOptions(**options))
        model = SparkTorchModel(model=result.model, module=module, inputCol=values["inputCol"],
                                predictionCol=values["predictionCol"],
                                useVectorOut=values["useVectorOut"], binary=values["binary"])
        model.summaries, model.jobId = result.summaries, result.job_id
        model.attempts, model.attemptStarts = result.attempts, result.starts
        return model


class SparkTorchModel(ml.SparkTorchModel):
    """SparkTorch 0.2.0's model: inputCol (default 'encoded', as SparkTorch's), predictionCol
    (default 'predicted'), useVectorOut, and the model as `modStr` (SparkTorch's base64 dill
    of an nn.Module), `module` (an nn.Module) or `model` (TorchScript bytes).
    `getPytorchModel()` is the nn.Module with the trained weights (the TorchScript module when
    there is no nn.Module: a model loaded from a saved Pipeline)."""

    @keyword_only
    def __init__(self, inputCol=None, predictionCol=None, modStr=None, useVectorOut=None,
                 model=None, module=None, binary=None):
        kwargs = self._input_kwargs  # before the native __init__ sets its own
        self._module = None
        super().__init__(model=model)
        self._setDefault(inputCol="encoded", predictionCol="predicted")
        self.setParams(**kwargs)

    @keyword_only
    def setParams(self, inputCol=None, predictionCol=None, modStr=None, useVectorOut=None,
                  model=None, module=None, binary=None):
        kwargs = dict(self._input_kwargs)
        mod_str, module = kwargs.pop("modStr", None), kwargs.pop("module", None)
        model = kwargs.pop("model", None)
        if mod_str:
            module = compat_pickles.loads_base64(mod_str, "modStr (SparkTorch's pickled model)")
        if module is not None:
            self._module = module
            self._model = None
        if model is not None:
            self._model = bytes(model)
        if self._model is None and self._module is not None:
            try:
                self._model = _script(self._module, None, None, sys.stderr)
            except OptionError:
                pass  # traced on the first DataFrame it transforms
        return self._set(**given(kwargs))

    def modelBytes(self):
        if self._model is None:
            raise OptionError("this model could not be scripted and is traced on the rows of "
                              "its first transform: transform a DataFrame before saving it")
        return self._model

    def getPytorchModel(self):
        import torch  # pylint: disable=import-outside-toplevel
        with warnings.catch_warnings():  # torch 2.x calls torch.jit deprecated
            warnings.simplefilter("ignore", FutureWarning)
            script = torch.jit.load(io.BytesIO(self.modelBytes()))
        if self._module is None:
            return script
        module = copy.deepcopy(self._module)
        module.load_state_dict(script.state_dict())
        return module

    def traced(self, features):
        """This model, traced on a row of `features` features when its nn.Module does not
        script (a class that dill rebuilt has no source to script); returns it."""
        if self._model is None:
            self._model = _script(self._module, None, None, sys.stderr, features)
        return self

    def _transform(self, dataset):
        if self._model is None:
            self._model = _script(self._module, dataset, self.getInputCol(), sys.stderr)
        return super()._transform(dataset)


def create_spark_torch_model(network, inputCol="features", predictionCol="predicted",
                             useVectorOut=False):
    """SparkTorch's: a SparkTorchModel of a trained nn.Module (or a TorchScript file's path or
    bytes), for inference."""
    if isinstance(network, (str, bytes, bytearray)):
        model = ml.create_spark_torch_model(network).modelBytes()
        return SparkTorchModel(model=model, inputCol=inputCol, predictionCol=predictionCol,
                               useVectorOut=useVectorOut)
    return SparkTorchModel(module=network, inputCol=inputCol, predictionCol=predictionCol,
                           useVectorOut=useVectorOut)


def attach_pytorch_model_to_pipeline(network, pipeline_model, inputCol="features",
                                     predictionCol="predicted", useVectorOut=False):
    """SparkTorch's: a PipelineModel of `pipeline_model` then the network's SparkTorchModel."""
    return PipelineModel(stages=[pipeline_model, create_spark_torch_model(
        network, inputCol, predictionCol, useVectorOut)])


def from_old_stage(old):
    """This module's stage for a SparkTorch 0.2.0 stage read from its pickle (OldStage)."""
    p = old.params()
    if old.class_name == "SparkTorchModel":
        return SparkTorchModel(**given({name: p.get(name) for name in (
            "inputCol", "predictionCol", "useVectorOut", "modStr")}))
    if old.class_name == "SparkTorch":
        return SparkTorch(**given({name: p.get(name) for name in SPARKTORCH_DEFAULTS
                                   if name != "labelCol"}),
                          labelCol=p.get("labelCol"))
    raise OptionError("a SparkTorch 0.2.0 stage of class %s, which sparktorch does not know"
                      % old.class_name)


def unwrap_stages(pipeline):
    """`pipeline` (a Pipeline or PipelineModel, loaded) with every SparkTorch 0.2.0 stage in it
    turned into this module's, nested pipelines too; returns it."""
    if not isinstance(pipeline, (Pipeline, PipelineModel)):
        raise TypeError("Cannot recognize a pipeline of type %s." % type(pipeline))
    stages = pipeline.getStages() if isinstance(pipeline, Pipeline) else pipeline.stages
    for i, stage in enumerate(stages):
        if isinstance(stage, (Pipeline, PipelineModel)):
            stages[i] = unwrap_stages(stage)
        elif compat_pickles.is_carrier(stage):
            stages[i] = from_old_stage(compat_pickles.carrier_stage(stage.getStopWords()))
    if isinstance(pipeline, Pipeline):
        pipeline.setStages(stages)
    else:
        pipeline.stages = stages
    return pipeline


class PysparkPipelineWrapper:  # pylint: disable=too-few-public-methods
    """SparkTorch's: `unwrap(PipelineModel.load(path))` turns the SparkTorch 0.2.0 stages
    that its Pipeline.save wrote (in StopWordsRemover carriers) into this module's stages.
    A Pipeline saved with this module's stages loads as it is; unwrap leaves it unchanged."""

    @staticmethod
    def unwrap(pipeline):
        try:
            return unwrap_stages(pipeline)
        except OptionError as e:
            raise OptionError("%s; or convert it once where they are: python -m "
                              "sparktorch_spark.convert OLD NEW" % e) from None

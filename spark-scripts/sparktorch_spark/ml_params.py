"""The Params of the Spark ML stages (ml.py), declared as pyspark.ml declares its own: a Param per
option with its getter, in mixins shared by the estimator and its model, on top of PySpark's
shared HasInputCol, HasInputCols, HasLabelCol and HasPredictionCol. Names, defaults and
descriptions are options.TRAIN_OPTIONS', so they are written once.

An option whose default is None (trainConfig, inputCols, stepsPerEpoch, loss, optimizer, lr,
inputShape, partitions, threads, binary, driverBinary) has no default here: unset, its getter returns None
(a None in the param map would not load back, PySpark's type converters refuse it).
"""
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasInputCol, HasInputCols, HasLabelCol, HasPredictionCol

from .options import TRAIN_OPTIONS

_CONVERTERS = {str: TypeConverters.toString, int: TypeConverters.toInt,
               float: TypeConverters.toFloat, bool: TypeConverters.toBoolean,
               list: TypeConverters.toListString}


def _param(name):
    _, kind, doc = TRAIN_OPTIONS[name]
    return Param(Params._dummy(), name, doc, typeConverter=_CONVERTERS[kind])  # noqa pylint: disable=protected-access


def set_defaults(stage, names):
    """Sets the defaults of TRAIN_OPTIONS that are not None for the Params `names`."""
    stage._setDefault(**{name: TRAIN_OPTIONS[name][0] for name in names  # noqa pylint: disable=protected-access
                         if TRAIN_OPTIONS[name][0] is not None})


def given(kwargs):
    """The keyword arguments given, without None (None means the default), but for labelCol:
    there None means no label (an autoencoder), which the Param holds as ""."""
    out = {name: value for name, value in kwargs.items() if value is not None}
    if "labelCol" in kwargs and kwargs["labelCol"] is None:
        out["labelCol"] = ""
    return out


class PredictionParams(HasInputCol, HasInputCols, HasPredictionCol):
    """What a model needs to predict: the feature columns, the prediction column and how the
    tasks run the binary; their getters and setters serve the Estimator and the Model alike."""

    NAMES = ("inputCol", "inputCols", "predictionCol", "useVectorOut", "device", "verbose",
             "threads", "binary", "onBadRow")

    useVectorOut = _param("useVectorOut")
    device = _param("device")
    verbose = _param("verbose")
    threads = _param("threads")
    binary = _param("binary")
    onBadRow = _param("onBadRow")

    def _optional(self, param):
        return self.getOrDefault(param) if self.isDefined(param) else None

    def getInputCol(self):
        return self.getOrDefault(self.inputCol)

    def getInputCols(self):
        return self._optional(self.inputCols)

    def getPredictionCol(self):
        return self.getOrDefault(self.predictionCol)

    def getUseVectorOut(self):
        return self.getOrDefault(self.useVectorOut)

    def getDevice(self):
        return self.getOrDefault(self.device)

    def getVerbose(self):
        return self.getOrDefault(self.verbose)

    def getThreads(self):
        return self._optional(self.threads)

    def getBinary(self):
        return self._optional(self.binary)

    def getOnBadRow(self):
        return self.getOrDefault(self.onBadRow)

    def setInputCol(self, value):
        return self._set(inputCol=value)

    def setInputCols(self, value):
        return self._set(inputCols=value)

    def setPredictionCol(self, value):
        return self._set(predictionCol=value)

    def setUseVectorOut(self, value):
        return self._set(useVectorOut=value)

    def setDevice(self, value):
        return self._set(device=value)

    def setVerbose(self, value):
        return self._set(verbose=value)

    def setThreads(self, value):
        return self._set(threads=value)

    def setBinary(self, value):
        return self._set(binary=value)

    def setOnBadRow(self, value):
        return self._set(onBadRow=value)

    def param_values(self):
        """{name: value} of every Param in NAMES, None for an unset optional one."""
        return {name: self._optional(self.getParam(name)) for name in self.NAMES}


class TrainingParams(PredictionParams, HasLabelCol):
    """Everything a training job takes (options.TRAIN_OPTIONS)."""

    NAMES = tuple(TRAIN_OPTIONS)

    torchObj = _param("torchObj")
    trainConfig = _param("trainConfig")
    iters = _param("iters")
    miniBatch = _param("miniBatch")
    stepsPerEpoch = _param("stepsPerEpoch")
    validationPct = _param("validationPct")
    earlyStopPatience = _param("earlyStopPatience")
    mode = _param("mode")
    acquireLock = _param("acquireLock")
    pullEvery = _param("pullEvery")
    partitionShuffles = _param("partitionShuffles")
    useBarrier = _param("useBarrier")
    port = _param("port")
    loss = _param("loss")
    optimizer = _param("optimizer")
    lr = _param("lr")
    lrSchedule = _param("lrSchedule")
    lrScaling = _param("lrScaling")
    allreduceDtype = _param("allreduceDtype")
    allreduceOverlap = _param("allreduceOverlap")
    clipGradNorm = _param("clipGradNorm")
    clipGradValue = _param("clipGradValue")
    seed = _param("seed")
    inputShape = _param("inputShape")
    partitions = _param("partitions")
    driverBinary = _param("driverBinary")
    timeout = _param("timeout")
    retries = _param("retries")
    readParquet = _param("readParquet")
    rowMemory = _param("rowMemory")
    spillDir = _param("spillDir")
    minPartitions = _param("minPartitions")
    checkpointEvery = _param("checkpointEvery")
    checkpointDir = _param("checkpointDir")

    def getLabelCol(self):
        return self.getOrDefault(self.labelCol)

    def getTorchObj(self):
        return self._optional(self.torchObj)

    def getTrainConfig(self):
        return self._optional(self.trainConfig)

    def getIters(self):
        return self.getOrDefault(self.iters)

    def getMiniBatch(self):
        return self.getOrDefault(self.miniBatch)

    def getStepsPerEpoch(self):
        return self._optional(self.stepsPerEpoch)

    def getValidationPct(self):
        return self.getOrDefault(self.validationPct)

    def getEarlyStopPatience(self):
        return self.getOrDefault(self.earlyStopPatience)

    def getMode(self):
        return self.getOrDefault(self.mode)

    def getAcquireLock(self):
        return self.getOrDefault(self.acquireLock)

    def getPullEvery(self):
        return self.getOrDefault(self.pullEvery)

    def getPartitionShuffles(self):
        return self.getOrDefault(self.partitionShuffles)

    def getUseBarrier(self):
        return self.getOrDefault(self.useBarrier)

    def getPort(self):
        return self.getOrDefault(self.port)

    def getLoss(self):
        return self._optional(self.loss)

    def getOptimizer(self):
        return self._optional(self.optimizer)

    def getLr(self):
        return self._optional(self.lr)

    def getLrSchedule(self):
        return self._optional(self.lrSchedule)

    def getLrScaling(self):
        return self.getOrDefault(self.lrScaling)

    def getAllreduceDtype(self):
        return self.getOrDefault(self.allreduceDtype)

    def getAllreduceOverlap(self):
        return self.getOrDefault(self.allreduceOverlap)

    def getClipGradNorm(self):
        return self._optional(self.clipGradNorm)

    def getClipGradValue(self):
        return self._optional(self.clipGradValue)

    def getSeed(self):
        return self.getOrDefault(self.seed)

    def getInputShape(self):
        return self._optional(self.inputShape)

    def getPartitions(self):
        return self._optional(self.partitions)

    def getDriverBinary(self):
        return self._optional(self.driverBinary)

    def getTimeout(self):
        return self.getOrDefault(self.timeout)

    def getRetries(self):
        return self.getOrDefault(self.retries)

    def getReadParquet(self):
        return self.getOrDefault(self.readParquet)

    def getRowMemory(self):
        return self._optional(self.rowMemory)

    def getSpillDir(self):
        return self._optional(self.spillDir)

    def getMinPartitions(self):
        return self._optional(self.minPartitions)

    def getCheckpointEvery(self):
        return self.getOrDefault(self.checkpointEvery)

    def getCheckpointDir(self):
        return self._optional(self.checkpointDir)

"""The options of a Spark training or prediction job, under SparkTorch's names, and the
sparktorch command lines they make.

SparkTorch users know `inputCol`, `labelCol`, `predictionCol`, `iters`, `miniBatch`,
`validationPct`, `earlyStopPatience`, `mode`, `acquireLock`, `partitionShuffles`, `useBarrier`,
`useVectorOut`, `device`, `port` and `verbose`; here they keep sparktorch's own defaults and
meanings (`iters` epochs, `miniBatch` 64, ...), which sparktorch-spark(7), OPTIONS, sets beside
SparkTorch 0.2.0's; sparktorch_spark.compat has SparkTorch's. sparktorch adds the model
(`torchObj`: a JSON spec or a TorchScript `.pt`), the optimizer settings, the learning-rate
schedule and gradient clipping, `stepsPerEpoch`, `threads` per task and the binary's path. `TrainOptions.check` refuses a bad combination before
any Spark work starts. Standard library only.
"""

import re

MODES = {"sync": "sync", "synchronous": "sync", "hogwild": "hogwild", "async": "hogwild",
         "asynchronous": "hogwild"}
LOSSES = ("cross_entropy", "nll", "mse", "l1", "smooth_l1", "bce", "bce_with_logits")
OPTIMIZERS = ("sgd", "adam", "adamw", "rmsprop", "adagrad")

# name: (default, type, what it is). The table sparktorch-spark(7), OPTIONS, and the entry points show.
TRAIN_OPTIONS = {
    "torchObj": (None, str, "the model: a JSON spec (.json) or a TorchScript model (.pt), a "
                 "path on the driver"),
    "trainConfig": (None, str, "JSON with loss and optimizer for a TorchScript model (default: "
                    "MODEL.json beside it)"),
    "inputCol": ("features", str, "features: a Spark ML vector column or one numeric column"),
    "inputCols": (None, list, "numeric columns assembled into the features, in order "
                  "(instead of inputCol)"),
    "labelCol": ("label", str, "label column: a number (class index or value) or a vector; "
                 "None or \"\" trains an autoencoder"),
    "predictionCol": ("predictions", str, "column the model's transform adds"),
    "iters": (10, int, "epochs: passes over each partition's rows"),
    "miniBatch": (64, int, "rows per step and task; -1 for the whole partition"),
    "stepsPerEpoch": (None, int, "steps an epoch, each of miniBatch rows drawn on from shuffled "
                      "passes over the partition (default: one pass over it)"),
    "validationPct": (0.0, float, "fraction of each partition held out for validation"),
    "earlyStopPatience": (0, int, "stop after this many epochs without a better (validation) "
                          "loss; 0 or -1: never"),
    "mode": ("sync", str, "sync (synchronous: all-reduce every step) or hogwild (parameter "
             "server on the driver)"),
    "acquireLock": (False, bool, "hogwild: serialise pull, compute and push across tasks"),
    "pullEvery": (1, int, "hogwild: steps a task takes on its own copy between pulls"),
    "partitionShuffles": (1, int, "rounds of iters epochs, each from a fresh shuffle"),
    "useBarrier": (True, bool, "run the tasks as a barrier stage (sync always does)"),
    "useVectorOut": (False, bool, "predictions as a vector of outputs instead of the class"),
    "device": ("cpu", str, "cpu, cuda, cuda:N or auto (cuda where there is one) on the "
               "executors; cuda and auto train on the GPU Spark gave the task when "
               "spark.task.resource.gpu.amount is set"),
    "port": (0, int, "port of the driver's tracker or parameter server; 0: any free port"),
    "verbose": (0, int, "1: more log lines in the task logs; -1: warnings and errors only"),
    "loss": (None, str, "loss (default: the spec's, else cross_entropy)"),
    "optimizer": (None, str, "optimizer (default: the spec's, else adam)"),
    "lr": (None, float, "learning rate (default: the spec's, else the optimizer's)"),
    "lrSchedule": (None, str, "learning-rate schedule: step, multistep, exponential, cosine, "
                   "one_cycle, reduce_on_plateau, none, or a JSON object with its options "
                   "(default: the spec's, else none)"),
    "lrScaling": ("none", str, "sync: the lr for N tasks: none, linear (times N) or sqrt "
                  "(times the square root of N)"),
    "allreduceDtype": ("fp32", str, "sync: how the tasks send their gradients: fp32, or bf16 or "
                       "fp16 (half the bytes, summed in float32)"),
    "allreduceOverlap": (False, bool, "sync: sum the gradients in buckets while the backward "
                         "pass runs (on the CPU)"),
    "clipGradNorm": (None, float, "clip the gradient's L2 norm to this before each step"),
    "clipGradValue": (None, float, "clip each gradient element to [-this, this] before each step"),
    "seed": (0, int, "seed for the initial weights, dropout and shuffling"),
    "inputShape": (None, str, "shape of one row for the model, e.g. 1,28,28"),
    "partitions": (None, int, "tasks (ranks or workers); default (or -1): the input's "
                   "partitions, at most the slots a barrier stage can get"),
    "threads": (None, int, "CPU threads per task (default: spark.task.cpus)"),
    "binary": (None, str, "the sparktorch binary on the executors (default: "
               "sparktorch/sparktorch from --archives, else sparktorch on PATH)"),
    "driverBinary": (None, str, "the sparktorch binary on the driver (default: as binary)"),
    "timeout": (600.0, float, "seconds for every task to reach the driver's serve"),
    "retries": (1, int, "times a job whose task was lost is run again, with a new job id, "
                "from the last checkpoint (sync)"),
    "minPartitions": (None, int, "the fewest tasks a job run again after a lost task may go on "
                      "with when fewer slots are free than it had (an executor gone for good), "
                      "the rows re-split among them; default: the same number or fail"),
    "checkpointEvery": (1, int, "sync: epochs between the checkpoints rank 0 sends to the "
                        "driver, which a job run again after a lost task resumes from; 0: none "
                        "(a retry starts from the initial model)"),
    "checkpointDir": (None, str, "sync: a directory on the driver that keeps the job's last "
                      "checkpoint beyond the fit: a fit of the same job (model, settings) "
                      "started again after the driver died resumes from it; removed when the "
                      "fit finishes (default: a temporary directory)"),
    "onBadRow": ("fail", str, "fail on the first bad row, or skip (and count) bad rows"),
    "readParquet": (True, bool, "when the DataFrame is a plain read of Parquet files on a local "
                    "or shared file system (file:), the tasks' binaries read the files "
                    "themselves, each its share of the rows; False: the rows always go through "
                    "Spark"),
    "rowMemory": (None, str, "memory a task's rows may take before the rest go to a spill file "
                  "in the executor's local directory, e.g. 512M or 2G (default: the binary's, "
                  "128M or an eighth of the container's memory limit)"),
    "spillDir": (None, str, "directory of the spill file on the executors (default: the "
                 "executor's first local directory, as Spark finds its own)"),
}


class OptionError(ValueError):
    """An option's value, or a combination of options, that no job could run with."""


class TrainOptions:
    """Every option of TRAIN_OPTIONS as an attribute, its default unless given."""

    def __init__(self, **given):
        unknown = sorted(set(given) - set(TRAIN_OPTIONS))
        if unknown:
            raise OptionError("unknown option%s: %s" % ("s" if len(unknown) > 1 else "",
                                                        ", ".join(unknown)))
        for name, (default, kind, _) in TRAIN_OPTIONS.items():
            value = given.get(name, default)
            if value is not None and kind is float and isinstance(value, int):
                value = float(value)
            if name == "partitions" and value == -1:  # SparkTorch's "keep the input's"
                value = None
            if value is not None and (not isinstance(value, kind) or
                                      (kind is not bool and isinstance(value, bool))):
                raise OptionError("%s must be %s, not %r" % (name, kind.__name__, value))
            setattr(self, name, value)

    def as_dict(self):
        return {name: getattr(self, name) for name in TRAIN_OPTIONS}

    def check(self):
        """Raises OptionError for values no job can run with; returns the mode (sync|hogwild)."""
        mode = MODES.get(self.mode)
        if mode is None:
            raise OptionError("mode must be sync (or synchronous) or hogwild, not %r" % self.mode)
        if not self.torchObj:
            raise OptionError("torchObj (the model: a JSON spec or a TorchScript .pt) is required")
        if self.iters < 1:
            raise OptionError("iters must be at least 1, not %d" % self.iters)
        if self.miniBatch == 0 or self.miniBatch < -1:
            raise OptionError("miniBatch must be positive, or -1 for the whole partition")
        if self.stepsPerEpoch is not None and self.stepsPerEpoch < 1:
            raise OptionError("stepsPerEpoch must be at least 1 (unset: one pass over the rows), "
                              "not %d" % self.stepsPerEpoch)
        if not 0.0 <= self.validationPct < 1.0:
            raise OptionError("validationPct must be in [0, 1), not %g" % self.validationPct)
        if self.earlyStopPatience < -1:
            raise OptionError("earlyStopPatience must be 0 (or -1) to never stop, or positive")
        if self.rowMemory is not None and not re.fullmatch(
                r"[0-9]+(\.[0-9]+)?([KMGTkmgt](i?[Bb])?)?", self.rowMemory):
            raise OptionError("rowMemory must be a size such as 512M or 2G (bytes, or a number "
                              "with K, M, G or T), not %r" % self.rowMemory)
        if self.partitionShuffles < 1 or self.pullEvery < 1:
            raise OptionError("partitionShuffles and pullEvery must be at least 1")
        if self.loss is not None and self.loss not in LOSSES:
            raise OptionError("loss must be one of %s, not %r" % (", ".join(LOSSES), self.loss))
        if self.optimizer is not None and self.optimizer not in OPTIMIZERS:
            raise OptionError("optimizer must be one of %s, not %r"
                              % (", ".join(OPTIMIZERS), self.optimizer))
        if self.lrScaling not in ("none", "linear", "sqrt"):
            raise OptionError("lrScaling must be none, linear or sqrt, not %r" % self.lrScaling)
        if mode == "hogwild" and self.lrScaling != "none":
            raise OptionError("lrScaling is for synchronous training (mode=sync)")
        if self.allreduceDtype not in ("fp32", "bf16", "fp16"):
            raise OptionError("allreduceDtype must be fp32, bf16 or fp16, not %r"
                              % self.allreduceDtype)
        if mode == "hogwild" and self.allreduceDtype != "fp32":
            raise OptionError("allreduceDtype is for synchronous training (mode=sync)")
        if mode == "hogwild" and self.allreduceOverlap:
            raise OptionError("allreduceOverlap is for synchronous training (mode=sync)")
        for name in ("clipGradNorm", "clipGradValue"):
            if getattr(self, name) is not None and getattr(self, name) < 0:
                raise OptionError("%s must be 0 (off) or more, not %g" % (name, getattr(self, name)))
        if self.partitions is not None and self.partitions < 1:
            raise OptionError("partitions must be at least 1, not %d" % self.partitions)
        if self.threads is not None and self.threads < 1:
            raise OptionError("threads must be at least 1, not %d" % self.threads)
        if not 0 <= self.port <= 65535:
            raise OptionError("port must be in 0..65535, not %d" % self.port)
        if self.onBadRow not in ("fail", "skip"):
            raise OptionError("onBadRow must be fail or skip, not %r" % self.onBadRow)
        if self.minPartitions is not None and self.minPartitions < 1:
            raise OptionError("minPartitions must be at least 1, not %d" % self.minPartitions)
        if self.checkpointEvery < 0:
            raise OptionError("checkpointEvery must be 0 (none) or more, not %d"
                              % self.checkpointEvery)
        if mode == "hogwild" and self.checkpointDir:
            raise OptionError("checkpointDir is for synchronous training (mode=sync): the "
                              "parameter server keeps the hogwild model across a lost worker")
        if self.retries < 0 or self.timeout <= 0:
            raise OptionError("retries must be 0 or more and timeout positive")
        if mode == "sync" and not self.useBarrier:
            raise OptionError("useBarrier=False: synchronous training needs every task running "
                              "at once, which only a barrier stage guarantees; use mode=hogwild")
        if mode == "sync" and (self.acquireLock or self.pullEvery != 1):
            raise OptionError("acquireLock and pullEvery are hogwild options (mode=hogwild)")
        return mode


def verbosity_flags(verbose):
    """sparktorch's global flags for SparkTorch's `verbose`."""
    return ["-v"] if verbose > 0 else ["-q"] if verbose < 0 else []


def model_flags(options, model_path, config_path):
    """The flags that say what to train: the model file, its loss, optimizer, schedule and seed.
    `train` takes them in sync mode, `serve --mode hogwild` in hogwild mode."""
    args = ["--model", model_path, "--seed", str(options.seed)]
    if config_path:
        args += ["--train-config", config_path]
    if options.loss:
        args += ["--loss", options.loss]
    if options.optimizer:
        args += ["--optimizer", options.optimizer]
    if options.lr is not None:
        args += ["--lr", repr(options.lr)]
    if options.lrSchedule:
        args += ["--lr-schedule", options.lrSchedule]
    if options.inputShape:
        args += ["--input-shape", options.inputShape]
    return args


def parquet_input_flags(paths, features, label):
    """The flags that name Parquet files and their columns (`sparktorch train`, `predict` and
    `inspect`): the files `paths`, the feature columns `features` (joined in order), the `label`
    column (None: no label, an autoencoder)."""
    args = ["--format", "parquet", "--features-field", ",".join(features)]
    args += ["--label-field", label] if label else ["--no-label"]
    for path in paths:
        args += ["--input", path]
    return args


def parquet_row_flags(paths, features, label, on_bad_row="fail"):
    """Row flags for tasks that read Parquet files themselves (`--format parquet`,
    parquet_input_flags). With --rank-from-stdin each task reads its share of the rows."""
    return parquet_input_flags(paths, features, label) + ["--on-bad-row", on_bad_row]


def row_flags(has_label, on_bad_row="fail"):
    """Row flags for the rows sparktorch_spark.rows makes: the `vector` format, a label (a
    number or a vector) before the features unless `has_label` is false (an autoencoder)."""
    args = ["--format", "vector", "--on-bad-row", on_bad_row]
    if not has_label:
        args.append("--no-label")
    return args


def train_flags(options, mode, threads):
    """A task's `sparktorch train` flags for how to train, in either mode."""
    args = ["--epochs", str(options.iters), "--batch-size", str(options.miniBatch),
            "--partition-shuffles", str(options.partitionShuffles),
            "--threads", str(threads), "--device", options.device,
            "--timeout", repr(float(options.timeout))]
    if options.stepsPerEpoch:
        args += ["--steps-per-epoch", str(options.stepsPerEpoch)]
    if options.validationPct > 0:
        args += ["--validation-pct", repr(options.validationPct)]
    if options.clipGradNorm:
        args += ["--clip-grad-norm", repr(options.clipGradNorm)]
    if options.clipGradValue:
        args += ["--clip-grad-value", repr(options.clipGradValue)]
    if mode == "sync" and options.earlyStopPatience > 0:
        args += ["--early-stop-patience", str(options.earlyStopPatience)]
    if mode == "sync" and options.lrScaling != "none":
        args += ["--lr-scaling", options.lrScaling]
    if mode == "sync" and options.allreduceDtype != "fp32":
        args += ["--allreduce-dtype", options.allreduceDtype]
    if mode == "sync" and options.allreduceOverlap:
        args += ["--allreduce-overlap"]
    if options.rowMemory is not None:
        args += ["--row-memory", str(options.rowMemory)]
    if options.spillDir:
        args += ["--spill-dir", options.spillDir]
    if mode == "hogwild":
        args += ["--seed", str(options.seed)]  # shuffling and dropout; weights come from serve
    else:
        # Rank 0's trained model goes to serve over its tracker link, and serve writes it to
        # the file serve.Serve names (-o): not as text through the tasks' stdout and Spark.
        args.append("--send-model")
    return args


def serve_flags(options, mode, world_size):
    """`sparktorch serve`'s flags (without --listen-fd, --port-file and -o, which serve.Serve
    adds: it binds the socket, at `options.port`)."""
    args = ["serve", "--mode", mode, "--world-size", str(world_size),
            "--timeout", repr(float(options.timeout))]
    if mode == "hogwild":
        if options.acquireLock:
            args.append("--lock")
        if options.pullEvery != 1:
            args += ["--pull-every", str(options.pullEvery)]
        if options.earlyStopPatience > 0:
            args += ["--early-stop-patience", str(options.earlyStopPatience)]
    return args

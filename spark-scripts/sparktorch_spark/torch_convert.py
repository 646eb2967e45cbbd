"""What a SparkTorch 0.2.0 user hands the estimator (a torch nn.Module, a criterion, an
optimizer class and its keyword arguments) as what the sparktorch binary runs: a TorchScript
file and a train config (sparktorch(1), TorchScript models from Python: {"loss": ...,
"optimizer": ...}, the fields of core/train/loss.cc and core/train/optimizer.cc).

Runs on the Spark driver only (the executors have no Python), which has torch. Whatever the
binary cannot run exactly as PyTorch would is refused here with an OptionError of one line, so
no job starts that would train something else than the user wrote. The optimizer spec names
every field with torch's own default where a keyword is not given, because the binary's
defaults are not always torch's (SGD's lr: 0.01 in the binary, 0.001 in PyTorch 2.x).
"""
import contextlib
import inspect
import io
import warnings

import torch

from sparktorch_spark.options import OptionError

# torch.nn loss class name: (the binary's loss type, the attributes it takes).
_LOSSES = {
    "CrossEntropyLoss": ("cross_entropy", ("label_smoothing", "weight")),
    "NLLLoss": ("nll", ("weight",)),
    "MSELoss": ("mse", ()),
    "L1Loss": ("l1", ()),
    "SmoothL1Loss": ("smooth_l1", ("beta",)),
    "BCELoss": ("bce", ()),
    "BCEWithLogitsLoss": ("bce_with_logits", ("pos_weight",)),
}
# torch.optim class name: (the binary's optimizer type, the keywords it takes).
_OPTIMIZERS = {
    "SGD": ("sgd", ("lr", "momentum", "dampening", "weight_decay", "nesterov")),
    "Adam": ("adam", ("lr", "betas", "eps", "weight_decay", "amsgrad")),
    "AdamW": ("adamw", ("lr", "betas", "eps", "weight_decay", "amsgrad")),
    "RMSprop": ("rmsprop", ("lr", "alpha", "eps", "weight_decay", "momentum", "centered")),
    "Adagrad": ("adagrad", ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")),
}
# Keywords that choose how torch computes a step, not what the step is.
_IMPLEMENTATION = ("foreach", "fused", "capturable", "differentiable")


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@contextlib.contextmanager
def _jit_quietly():
    """Hides PyTorch 2.x's warning, on every torch.jit call, that torch.jit is deprecated (the
    binary runs only TorchScript) and the tracer's warnings (the one log line says what tracing
    fixes)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit", category=FutureWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        yield


def script_module(module, example_features=None, log=print):
    """The bytes of a TorchScript file of `module` (an nn.Module), for `sparktorch train
    --model`: torch.jit.script of it, or, where that fails and `example_features` (the number
    of features of one row) is given, torch.jit.trace of it in eval mode on a float32 batch of
    zeros of shape [2, example_features], said in one line to `log`. A ScriptModule is saved as
    it is. Saved with torch.jit.save, as `torch.jit.script(net).save("net.pt")` would, which
    the binary's LibTorch 1.13 loads when the model uses only operators 1.13 has. Raises
    OptionError when neither works."""
    with _jit_quietly():
        scripted = module if isinstance(module, torch.jit.ScriptModule) else \
            _script_or_trace(module, example_features, log)
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer)
    return buffer.getvalue()


def _script_or_trace(module, example_features, log):
    name = type(module).__name__
    try:
        return torch.jit.script(module)
    except Exception as e:  # pylint: disable=broad-except
        script_error = _first_line(e)
    instead = ("make forward scriptable (type annotations, no **kwargs, torch calls only) or "
               "give torchObj as a TorchScript .pt")
    if example_features is None:
        raise OptionError("torch.jit.script failed on %s (%s) and no example row was given to "
                          "trace it with; %s" % (name, script_error, instead))
    features = int(example_features)
    was_training = module.training
    module.eval()
    try:
        traced = torch.jit.trace(module, torch.zeros(2, features, dtype=torch.float32))
    except Exception as e:  # pylint: disable=broad-except
        raise OptionError("torch.jit.script failed on %s (%s) and so did torch.jit.trace with "
                          "an example row of %d features (%s); %s"
                          % (name, script_error, features, _first_line(e), instead)) from None
    finally:
        module.train(was_training)
    log("sparktorch: torch.jit.script failed on %s (%s); traced it with an example row of %d "
        "features in eval mode: control flow that depends on the input is fixed to this row's "
        "path, and dropout and batch norm to eval" % (name, script_error, features))
    return traced


def _floats(tensor):
    return [float(v) for v in tensor.detach().reshape(-1).tolist()]


def loss_spec(criterion):
    """The binary's loss spec ({"type": "cross_entropy", "label_smoothing": 0.0, ...}) of a
    torch.nn loss, an instance or its class (SparkTorch's lazy form: made with no arguments).
    Raises OptionError for a loss, or an argument of one, that the binary does not run."""
    cls = type(criterion) if isinstance(criterion, torch.nn.Module) else criterion
    name = getattr(cls, "__name__", repr(cls))  # a class, or a function such as F.mse_loss
    if name not in _LOSSES or cls is not getattr(torch.nn, name, None):
        raise OptionError("criterion %s is not one the sparktorch binary runs; it runs %s"
                          % (name, ", ".join(_LOSSES)))
    if isinstance(criterion, type):
        criterion = criterion()
    kind, fields = _LOSSES[name]

    def refuse(argument, works):
        raise OptionError("criterion %s: %s is not one the sparktorch binary runs; it runs %s"
                          % (name, argument, works))

    if criterion.reduction != "mean":
        refuse("reduction=%r" % criterion.reduction, "reduction='mean'")
    if getattr(criterion, "ignore_index", -100) != -100:
        refuse("ignore_index=%r" % criterion.ignore_index, "ignore_index=-100 (the default)")
    if "weight" not in fields and getattr(criterion, "weight", None) is not None:
        refuse("weight", "weight=None")
    spec = {"type": kind}
    for field in fields:
        value = getattr(criterion, field, None)
        if isinstance(value, torch.Tensor):
            spec[field] = _floats(value)
        elif value is not None:
            spec[field] = float(value)
    return spec


def optimizer_spec(optimizer, params=None):
    """The binary's optimizer spec, every field named ({"type": "sgd", "lr": 0.001, ...}), of a
    torch.optim class and its keyword arguments `params` (a dict; None: none), with the class's
    own defaults (inspect.signature) for the rest; or of an optimizer instance, from its first
    param group. Adam(decoupled_weight_decay=True) is AdamW. Raises OptionError for an
    optimizer, a keyword or a value that the binary does not run as torch would."""
    cls = optimizer if isinstance(optimizer, type) else type(optimizer)
    name = getattr(cls, "__name__", repr(cls))
    if name not in _OPTIMIZERS or cls is not getattr(torch.optim, name, None):
        raise OptionError("optimizer %s is not one the sparktorch binary runs; it runs %s"
                          % (name, ", ".join(_OPTIMIZERS)))
    signature = inspect.signature(cls.__init__).parameters
    if isinstance(optimizer, type):
        given = dict(params or {})
    else:  # an instance: its settings, less the keys torch keeps beside them (params, initial_lr)
        given = {k: v for k, v in optimizer.param_groups[0].items()
                 if k in signature and k != "params"}
        given.update(params or {})
    kind, fields = _OPTIMIZERS[name]
    if name == "Adam" and given.pop("decoupled_weight_decay", False):
        kind = "adamw"
    if given.get("maximize"):
        raise OptionError("optimizer %s: maximize=True is not one the sparktorch binary runs; "
                          "it minimizes the loss" % name)
    unknown = sorted(set(given) - set(fields) - set(_IMPLEMENTATION) - {"maximize"})
    if unknown:
        raise OptionError("optimizer %s: unknown argument%s %s; it takes %s"
                          % (name, "s" if len(unknown) > 1 else "", ", ".join(unknown),
                             ", ".join(fields)))
    try:  # torch's own checks of the values (a negative lr, nesterov without momentum)
        cls([torch.zeros(1, requires_grad=True)],
            **{k: v for k, v in given.items() if k not in _IMPLEMENTATION})
    except (ValueError, TypeError, RuntimeError) as e:
        raise OptionError("optimizer %s: %s" % (name, _first_line(e))) from None
    spec = {"type": kind}
    for field in fields:
        value = given.get(field, signature[field].default)
        if field == "betas":
            spec[field] = [float(b) for b in value]
        elif isinstance(signature[field].default, bool):
            spec[field] = bool(value)
        elif isinstance(value, (int, float, torch.Tensor)):
            spec[field] = float(value)
        else:  # torch's `required` marker (SGD's lr before PyTorch 2.1)
            raise OptionError("optimizer %s: %s is required" % (name, field))
    return spec


def train_config(criterion, optimizer, params=None):
    """The train config (the JSON beside a TorchScript model, or --train-config) of a
    criterion and an optimizer with its keyword arguments: {"loss": ..., "optimizer": ...}."""
    return {"loss": loss_spec(criterion), "optimizer": optimizer_spec(optimizer, params)}

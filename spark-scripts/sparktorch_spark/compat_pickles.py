"""SparkTorch 0.2.0's pickles, written and read on the driver without SparkTorch installed.

Two kinds: the `torchObj` string of serialize_torch_obj and serialize_torch_obj_lazy (JSON
holding a base64 dill of a TorchObj namedtuple: the model or its class, the criterion or its
class, the optimizer's class and keywords, and the shapes of the parameters); and a stage that
SparkTorch's PysparkReaderWriter saved in a Pipeline: a StopWordsRemover whose first stop word
is the zlib-compressed dill of the Python stage, its bytes as decimal numbers each followed by a
comma, and whose last is SparkTorch's id. Reading maps SparkTorch's own classes onto stand-ins
here (TorchObj; OldStage for its SparkTorch and SparkTorchModel), so only the user's model
classes must be importable, as they had to be for SparkTorch. Needs dill (SparkTorch's).
"""
import codecs
import collections
import json
import pickle
import zlib

from .options import OptionError

TorchObj = collections.namedtuple(
    "TorchObj", ["model", "criterion", "optimizer", "optimizer_params", "is_lazy",
                 "model_parameters"])

CARRIER_ID = "4c1740b00d3c4ff6806a1402321572cb"  # SparkTorch's, after a carrier's stop words
CARRIER_CLASS = "org.apache.spark.ml.feature.StopWordsRemover"


class OldStage:
    """A SparkTorch 0.2.0 stage (SparkTorch or SparkTorchModel) as its pickle holds it:
    `class_name`, and `params()`, its Params' values by name (defaults, then those set)."""

    class_name = "?"

    def params(self):
        values = {}
        for name in ("_defaultParamMap", "_paramMap"):
            for param, value in (self.__dict__.get(name) or {}).items():
                values[getattr(param, "name", str(param))] = value
        return values


def _stand_in(module, name):
    """The class to build for SparkTorch's `module`.`name`."""
    if name == "TorchObj":
        return TorchObj
    return type(name, (OldStage,), {"class_name": name, "__module__": __name__})


def _script_main():
    """The __main__ that functions dill pickled by value from a script's __main__ (a network
    class defined in the script or notebook that saved it) see as their globals here: dill
    stores them as "__main__'s", whatever that is where they are loaded, so they get the
    names such scripts import: torch, nn, F, np, math."""
    import math  # pylint: disable=import-outside-toplevel
    import types  # pylint: disable=import-outside-toplevel
    import torch  # pylint: disable=import-outside-toplevel
    main = types.ModuleType("__main__")
    main.__dict__.update(torch=torch, nn=torch.nn, F=torch.nn.functional, math=math)
    try:
        import numpy  # pylint: disable=import-outside-toplevel
        main.np = main.numpy = numpy
    except ImportError:
        pass
    return main


def _unpickler():
    import dill  # pylint: disable=import-outside-toplevel

    class Unpickler(dill.Unpickler):  # pylint: disable=too-few-public-methods
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._main = _script_main()

        def find_class(self, module, name):
            if module == "sparktorch" or module.startswith("sparktorch."):
                return _stand_in(module, name)
            return super().find_class(module, name)
    return Unpickler


def loads(data, what):
    """Unpickles SparkTorch's dill `data` (bytes); OptionError in one line saying `what` it
    was and why it does not load."""
    import io  # pylint: disable=import-outside-toplevel
    try:
        return _unpickler()(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, ImportError, AttributeError, EOFError, TypeError,
            ValueError) as e:
        raise OptionError("cannot read %s: %s: %s (the model's classes must be importable on "
                          "the driver, as they were for SparkTorch)"
                          % (what, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


def _bind_submodules(obj):
    """Makes each class in `obj` (a TorchObj's fields) findable as package.submodule.Name. dill
    pickles a class by reference only when getattr(package, submodule) is the module its
    __module__ names; torch 2.15's torch.optim no longer binds its submodules (torch.optim.adam),
    so dill would pickle torch.optim.Adam by value and fail ("Can't pickle sentinel")."""
    import sys  # pylint: disable=import-outside-toplevel
    for value in obj if isinstance(obj, tuple) else (obj,):
        cls = value if isinstance(value, type) else type(value)
        package, _, submodule = cls.__module__.rpartition(".")
        module = sys.modules.get(cls.__module__)
        parent = sys.modules.get(package)
        if module is not None and parent is not None and getattr(parent, submodule, None) is None:
            setattr(parent, submodule, module)


def dumps_base64(obj):
    """SparkTorch's text of a pickled object: base64 of its dill, with line breaks."""
    import dill  # pylint: disable=import-outside-toplevel
    _bind_submodules(obj)
    return codecs.encode(dill.dumps(obj), "base64").decode()


def loads_base64(text, what):
    return loads(codecs.decode(text.encode(), "base64"), what)


def torch_obj_string(torch_obj, shapes):
    """serialize_torch_obj's JSON: the TorchObj pickled, and the parameters' shapes."""
    return json.dumps({"torch_obj": dumps_base64(torch_obj), "shapes": shapes})


def load_torch_obj(text):
    """The TorchObj of a `torchObj` string (serialize_torch_obj's or SparkTorch 0.2.0's)."""
    try:
        inner = json.loads(text)["torch_obj"]
    except (ValueError, KeyError, TypeError):
        raise OptionError("torchObj is not a serialize_torch_obj string (JSON with torch_obj); "
                          "for a JSON spec or a TorchScript file use sparktorch_spark.ml.SparkTorch")
    obj = loads_base64(inner, "torchObj's pickle")
    if not isinstance(obj, tuple) or len(obj) != len(TorchObj._fields):
        raise OptionError("torchObj's pickle holds %s, not serialize_torch_obj's TorchObj"
                          % type(obj).__name__)
    return TorchObj(*obj)


def is_carrier(stage):
    """Whether a loaded Pipeline stage is a SparkTorch 0.2.0 stage in its StopWordsRemover."""
    if type(stage).__name__ != "StopWordsRemover":
        return False
    words = stage.getStopWords()
    return bool(words) and words[-1] == CARRIER_ID


def carrier_stage(stop_words):
    """The OldStage a carrier's stop words hold."""
    numbers = stop_words[0].split(",")[:-1]
    try:
        data = zlib.decompress(bytes(int(n) for n in numbers))
    except (ValueError, zlib.error) as e:
        raise OptionError("a SparkTorch 0.2.0 stage's stop words do not hold its pickle: %s" % e)
    stage = loads(data, "a SparkTorch 0.2.0 stage's pickle")
    if not isinstance(stage, OldStage):
        raise OptionError("a SparkTorch 0.2.0 stage's pickle holds %s, not SparkTorch's "
                          "SparkTorch or SparkTorchModel" % type(stage).__name__)
    return stage

"""Converts a Pipeline, PipelineModel or stage that SparkTorch 0.2.0 saved into one of
sparktorch_spark.compat's stages, which loads with plain `PipelineModel.load` and holds the
model as TorchScript (model.pt) instead of a pickle:

    python -m sparktorch_spark.convert OLD NEW [--example-features N] [--master local[1]]

Run it where the model's classes are importable, as they were where SparkTorch saved it (the
pickle names them). A network that does not script (a class that dill pickled by value, from a
notebook or a script's __main__, has no source to script) is traced on a row of N features
(--example-features). Starts a local SparkSession unless one is active. Prints a line per
converted stage; exits 2 with one line when OLD cannot be read or converted.
"""
import argparse
import sys

from . import compat, compat_pickles
from .options import OptionError


def _load(spark, path):
    """What SparkTorch saved at `path`: a PipelineModel, a Pipeline, or one stage."""
    from pyspark.ml import Pipeline, PipelineModel  # pylint: disable=import-outside-toplevel
    from pyspark.ml.feature import StopWordsRemover  # pylint: disable=import-outside-toplevel
    errors = []
    for kind in (PipelineModel, Pipeline, StopWordsRemover):
        try:
            return kind.load(path)
        except Exception as e:  # pylint: disable=broad-except
            errors.append("%s: %s" % (kind.__name__, str(e).strip().splitlines()[0]))
    raise OptionError("%s is not a Pipeline, PipelineModel or stage Spark can load (%s)"
                      % (path, "; ".join(errors)))


def convert(spark, old, new, features=None, out=sys.stdout):
    """Loads `old`, turns SparkTorch's stages into compat's (tracing on rows of `features`
    features a network that does not script), saves the result at `new`."""
    from pyspark.ml import Pipeline, PipelineModel  # pylint: disable=import-outside-toplevel
    loaded = _load(spark, old)
    if isinstance(loaded, (Pipeline, PipelineModel)):
        before = list(loaded.getStages() if isinstance(loaded, Pipeline) else loaded.stages)
        converted = compat.unwrap_stages(loaded)
        after = converted.getStages() if isinstance(converted, Pipeline) else converted.stages
        changed = [i for i, stage in enumerate(after) if stage is not before[i]]
    elif compat_pickles.is_carrier(loaded):
        converted = compat.from_old_stage(compat_pickles.carrier_stage(loaded.getStopWords()))
        after, changed = [converted], [0]
    else:
        raise OptionError("%s holds a %s, not a SparkTorch 0.2.0 stage" % (old,
                                                                         type(loaded).__name__))
    if not changed:
        raise OptionError("%s holds no SparkTorch 0.2.0 stage to convert" % old)
    for i in changed:
        if isinstance(after[i], compat.SparkTorchModel):
            try:
                after[i].traced(features)
            except OptionError as e:
                raise OptionError("stage %d: %s%s" % (i, e, "" if features else
                                                      "; --example-features N traces it"))
    converted.write().save(new)
    for i in changed:
        out.write("convert: stage %d: SparkTorch 0.2.0's %s -> sparktorch_spark.compat.%s\n"
                  % (i, type(after[i]).__name__, type(after[i]).__name__))
    out.write("convert: wrote %s\n" % new)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m sparktorch_spark.convert",
                                description="Converts what SparkTorch 0.2.0 saved (a Pipeline, "
                                "PipelineModel or stage) for sparktorch_spark.compat.")
    p.add_argument("old", help="the folder SparkTorch's save wrote")
    p.add_argument("new", help="the folder to write (must not exist)")
    p.add_argument("--example-features", type=int, metavar="N",
                   help="trace a network that does not script on a row of N features")
    p.add_argument("--master", default="local[1]",
                   help="Spark master of the session it starts (default local[1])")
    args = p.parse_args(argv)
    from pyspark.sql import SparkSession  # pylint: disable=import-outside-toplevel
    active = SparkSession.getActiveSession()
    spark = active or SparkSession.builder.master(args.master).appName(
        "sparktorch-convert").getOrCreate()
    try:
        convert(spark, args.old, args.new, args.example_features)
    except OptionError as e:
        sys.stderr.write("convert: error: %s\n" % e)
        return 2
    finally:
        if active is None:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

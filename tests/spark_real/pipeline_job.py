"""The PySpark job of spark-real.pipeline: the Spark ML API of sparktorch_spark.ml, run twice
by spark-submit. It asserts nothing: it writes what it saw to a JSON file (FACTS), which the
test (pipeline_test.py) checks.

  fit   Pipeline([SparkTorch(...)]).fit(train) (with --filter: train.where("label < 10"),
        which keeps every row but is no plain read of the files), saved to SAVED; the fitted
        pipeline's predictions for the test rows; the stage's model file (saveModelFile)
        attached again with create_spark_torch_model and its predictions; getPytorchModel()'s
        classes for the first rows.
  load  a fresh session: PipelineModel.load(SAVED) and its predictions for the test rows.

  spark-submit pipeline_job.py fit --train TRAIN.parquet --test TEST.parquet --spec SPEC
      --binary B --saved DIR --model-file M.pt --facts F.json [--filter]
  spark-submit pipeline_job.py load --test TEST.parquet --saved DIR --facts F.json
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "spark-scripts"))

from pyspark.ml import Pipeline, PipelineModel  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from sparktorch_spark.ml import SparkTorch, create_spark_torch_model  # noqa: E402

FIRST_ROWS = 16  # rows getPytorchModel() predicts on the driver


def predictions(df, column="predictions"):
    """[(id, label, prediction)] of a transformed test set, in the order Spark gives them."""
    return [(r["id"], r["label"], r[column]) for r in df.select("id", "label", column).collect()]


def fit(spark, args):
    train = spark.read.parquet(args.train)
    if args.filter:
        train = train.where("label < 10")
    test = spark.read.parquet(args.test)
    stage = SparkTorch(torchObj=args.spec, inputCol="features", labelCol="label", iters=2,
                       partitions=2, binary=args.binary)
    fitted = Pipeline(stages=[stage]).fit(train)
    fitted.write().overwrite().save(args.saved)
    torch_stage = fitted.stages[-1]
    predicted = fitted.transform(test).cache()
    facts = {"predictions": predictions(predicted), "stage": type(torch_stage).__name__,
             "summaries": torch_stage.summaries, "job_id": torch_stage.jobId}

    torch_stage.saveModelFile(args.model_file)
    import torch  # pylint: disable=import-outside-toplevel  # /usr/bin/python3's python3-torch
    module = torch_stage.getPytorchModel()
    rows = test.orderBy("id").limit(FIRST_ROWS).collect()
    with torch.no_grad():
        outputs = module(torch.tensor([r["features"].toArray().tolist() for r in rows],
                                      dtype=torch.float32))
    facts["pytorch"] = {"type": type(module).__name__, "ids": [r["id"] for r in rows],
                        "classes": [float(c) for c in outputs.argmax(dim=1).tolist()]}

    # The same model again, in the same session: its failure is a fact too, checked last.
    try:
        attached = create_spark_torch_model(args.model_file, inputCol="features",
                                            binary=args.binary, predictionCol="attached")
        facts["attached"] = predictions(attached.transform(test), "attached")
    except Exception as e:  # pylint: disable=broad-except
        facts["attached_error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0])
    with open(args.facts, "w") as f:
        json.dump(facts, f)
    print("pipeline_job: fitted, saved to %s; facts in %s" % (args.saved, args.facts))
    sys.stdout.flush()


def load(spark, args):
    test = spark.read.parquet(args.test)
    loaded = PipelineModel.load(args.saved)
    facts = {"stages": [type(s).__name__ for s in loaded.stages],
             "predictions": predictions(loaded.transform(test))}
    with open(args.facts, "w") as f:
        json.dump(facts, f)
    print("pipeline_job: loaded %s; facts in %s" % (args.saved, args.facts))
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("fit", "load"))
    parser.add_argument("--train")
    parser.add_argument("--test", required=True)
    parser.add_argument("--spec")
    parser.add_argument("--binary")
    parser.add_argument("--saved", required=True)
    parser.add_argument("--model-file")
    parser.add_argument("--facts", required=True)
    parser.add_argument("--filter", action="store_true")
    args = parser.parse_args()
    spark = SparkSession.builder.appName("sparktorch spark-real pipeline " + args.command) \
        .getOrCreate()
    (fit if args.command == "fit" else load)(spark, args)
    spark.stop()


if __name__ == "__main__":
    main()

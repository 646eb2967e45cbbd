"""Fashion-MNIST on Spark with sparktorch: the PySpark half of examples/spark_fashion_mnist.sh.

  prepare   reads the CSV rows examples/prepare_fashion_mnist.py wrote (label, 784 pixels, no
            header) and writes them as Parquet, with a Spark ML `features` vector assembled by
            VectorAssembler, or as CSV with a header (label, p0..p783: numeric columns that
            sparktorch assembles itself).
  pipeline  the Spark ML way: Pipeline([SparkTorch(...)]).fit(train), save the PipelineModel,
            load it back with PipelineModel.load, transform the test set and print accuracy;
            then attach the trained .pt for inference only (create_spark_torch_model) and
            check it predicts the same.

  spark-submit examples/spark_fashion_mnist.py prepare --format parquet --out out/spark
  spark-submit --archives sparktorch-VERSION-linux-x86_64.tar.gz#sparktorch \
      examples/spark_fashion_mnist.py pipeline --data out/spark --format parquet
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "spark-scripts"))

from pyspark.ml import Pipeline, PipelineModel  # noqa: E402
from pyspark.ml.feature import VectorAssembler  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.types import DoubleType, StructField, StructType  # noqa: E402

PIXELS = ["p%d" % i for i in range(784)]


def prepare(spark, args):
    for split in ("train", "test"):
        # A schema given, not inferred: inferring reads the 785 columns once more.
        schema = StructType([StructField(name, DoubleType()) for name in ["label"] + PIXELS])
        df = spark.read.csv(os.path.abspath(os.path.join(args.csv, "fashion_%s.csv" % split)),
                            schema=schema)
        out = os.path.abspath(os.path.join(args.out, "fashion_%s.%s" % (split, args.format)))
        if args.format == "parquet":
            df = VectorAssembler(inputCols=PIXELS, outputCol="features").transform(df)
            df.select("label", "features").write.mode("overwrite").parquet(out)
        else:
            df.write.mode("overwrite").option("header", "true").csv(out)
        print("wrote %s (%d rows)" % (out, df.count()))


def accuracy(df, prediction_col="predictions"):
    right = df.filter(df["label"] == df[prediction_col]).count()
    return right / df.count()


def pipeline(spark, args):
    from sparktorch_spark.ml import SparkTorch, create_spark_torch_model  # noqa: E501 pylint: disable=import-outside-toplevel
    from sparktorch_spark.columns import read_source  # pylint: disable=import-outside-toplevel
    path = lambda split: os.path.abspath(os.path.join(args.data, "fashion_%s.%s"  # noqa: E731
                                                      % (split, args.format)))
    train, test = read_source(spark, path("train")), read_source(spark, path("test"))
    stage = SparkTorch(torchObj=os.path.join(HERE, "fashion_mnist_mlp.json"), labelCol="label",
                       inputCol="features", iters=args.epochs, mode=args.mode,
                       partitions=args.partitions, binary=args.binary, verbose=-1)
    started = time.monotonic()
    fitted = Pipeline(stages=[stage]).fit(train)
    fit_seconds = time.monotonic() - started
    saved = os.path.abspath(os.path.join(args.data, "pipeline_%s" % args.mode))
    fitted.write().overwrite().save(saved)
    loaded = PipelineModel.load(saved)
    started = time.monotonic()
    predicted = loaded.transform(test).cache()
    rows = predicted.count()
    transform_seconds = time.monotonic() - started
    print("%s: fit of %d rows x %d epochs on %s in %.1f s; transform of %d rows in %.1f s "
          "(Spark %s)" % (args.mode, train.count(), args.epochs, spark.sparkContext.master,
                          fit_seconds, rows, transform_seconds, spark.version))
    print("%s: test accuracy after %d epochs: %.4f (pipeline saved to %s and loaded back)"
          % (args.mode, args.epochs, accuracy(predicted), saved))
    for epoch in loaded.stages[-1].getHistory():  # kept in the model file: loaded back too
        print("%s: epoch %d: train loss %.4f, %s samples/s"
              % (args.mode, epoch["epoch"], epoch["train_loss"],
                 int(epoch.get("samples_per_second", 0))))
    model_file = os.path.join(args.data, "mlp_%s_pipeline.pt" % args.mode)
    loaded.stages[-1].saveModelFile(model_file)  # SparkTorch's getPytorchModel, as a file
    attached = create_spark_torch_model(model_file, inputCol="features",
                                        predictionCol="again", binary=args.binary)
    both = attached.transform(predicted)
    differ = both.filter(both["again"] != both["predictions"]).count()
    print("%s: the .pt attached with create_spark_torch_model predicts the same: %s (%s; "
          "torch.jit.load reads it)" % (args.mode, differ == 0, model_file))
    if differ:
        sys.exit("%d predictions differ" % differ)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--csv", default="out", help="folder of fashion_{train,test}.csv")
    p.add_argument("--out", default="out/spark")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    p = sub.add_parser("pipeline")
    p.add_argument("--data", default="out/spark")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    p.add_argument("--mode", choices=("sync", "hogwild"), default="sync")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--partitions", type=int, default=2)
    p.add_argument("--binary", help="sparktorch on the executors (default: the bundle)")
    args = parser.parse_args()
    spark = SparkSession.builder.appName("sparktorch fashion-mnist " + args.command).getOrCreate()
    if args.command == "prepare":
        prepare(spark, args)
    else:
        if args.format == "csv":
            sys.exit("pipeline reads the Parquet data (its features column); for CSV use "
                     "spark-scripts/train.py, as spark_fashion_mnist.sh does")
        pipeline(spark, args)
    spark.stop()


if __name__ == "__main__":
    main()

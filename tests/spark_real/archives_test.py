"""spark-real.LINE.archives.cluster: the README's quick start exactly: the bundle shipped with
`spark-submit --archives BUNDLE#sparktorch` and no --binary, on local-cluster[2,1,1024]. The
executors find the binary where Spark unpacked the archive (./sparktorch/sparktorch in their
working directories), the driver finds its own copy (Spark unpacks archives for the driver too)
and sparktorch-spark.jar beside it; nothing comes from the build tree: SPARKTORCH is unset and
no sparktorch is on PATH. train.py trains (sync, the rows through Spark: the jar's encoder),
predict.py predicts with the same flags, and the accuracy is a model's.

The bundle comes from `cmake --build BUILD --target bundle` (up to date when bundle.run made it).

  archives_test.py cluster
"""
import glob
import os

from lib import (ACCURACY, CLOSING, REPO, SPARK_DATA, SPEC, build_bundle, check, done, expect,
                 expect_in, expect_success, expect_torch_model, fail, setup, submit, test_rows)

THRESHOLD = 0.70  # 12,000 rows, 3 epochs: ~0.80 (train_test.py)


def main():
    where, master = setup("archives")
    if where != "cluster":
        fail("archives_test.py runs on local-cluster only (executors with their own folders)")
    bundle = build_bundle()
    # Nothing of the build tree: no SPARKTORCH, no sparktorch on PATH, no SPARKTORCH_JAR.
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "sparktorch")))
    env = {"SPARKTORCH": None, "SPARKTORCH_JAR": None, "PATH": path}
    ship = ["--archives", bundle + "#sparktorch"]

    check("train.py with --archives BUNDLE#sparktorch and no --binary")
    model = os.path.abspath("model.pt")
    run = submit("train", master, ship + [
        os.path.join(REPO, "spark-scripts", "train.py"),
        "--source", os.path.join(SPARK_DATA, "train.parquet"), "--torchObj", SPEC,
        "--labelCol", "label", "--mode", "sync", "--iters", "3", "--partitions", "2",
        "--readParquet", "false", "--output", model], timeout=400, env=env)
    expect_success(run, "train.py")
    expect_in(CLOSING, run.out, "train.py's closing line")
    expect("rows go to the binary as Spark's decimal text" not in run.text,
           "the driver found sparktorch-spark.jar in the shipped bundle (no decimal text)")
    executors = sorted(glob.glob(os.path.join(run.app_folder() or "/nonexistent", "*",
                                              "sparktorch", "sparktorch")))
    expect(len(executors) == 2, "both executors unpacked the bundle into ./sparktorch/",
           executors)
    expect_torch_model(model, "the model", test_rows(4))

    check("predict.py with --archives BUNDLE#sparktorch and no --binary")
    run = submit("predict", master, ship + [
        os.path.join(REPO, "spark-scripts", "predict.py"),
        "--source", os.path.join(SPARK_DATA, "test.parquet"), "--model", model,
        "--labelCol", "label"], timeout=300, env=env)
    expect_success(run, "predict.py")
    found = expect_in(ACCURACY, run.out, "predict.py's accuracy line")
    expect(float(found.group(1)) > THRESHOLD and int(found.group(3)) == 2000,
           "accuracy > %.2f on the 2000 test rows" % THRESHOLD, found.group(0))
    done()


if __name__ == "__main__":
    main()

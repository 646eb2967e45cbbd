"""spark-real.pipeline.{local,cluster}: the Spark ML API (sparktorch_spark.ml) through two
spark-submit runs of pipeline_job.py.

The first fits Pipeline([SparkTorch(torchObj=MLP, inputCol="features", labelCol="label",
iters=2, partitions=2, binary=B)]) on the 12,000 training rows and saves the PipelineModel;
the second, a fresh driver, loads it with PipelineModel.load and transforms the test rows.
Checks: the loaded pipeline's accuracy is above THRESHOLD and its predictions equal the first
job's, row by row; they equal `sparktorch predict` on the stage's model file
(stage.saveModelFile), which torch.jit.load reads; create_spark_torch_model(that file,
inputCol="features", binary=B) predicts the same; stage.getPytorchModel() is a module whose
classes for the first 16 rows are sparktorch's; the stage's summaries count 12,000 rows;
spark-submit exits promptly after the fit (a local master: a barrier stage ran in it).

Where the rows come from: on local[2] the fit's DataFrame is the plain read of train.parquet, so
the tasks read their rows from its 2 files themselves (readParquet, the default): the driver
says so, and the summaries have 6,000 rows per task. On local-cluster the fit is given
train.where("label < 10") (pipeline_job.py --filter: every row, but no plain read of the files),
which falls back to the rows through Spark: no such line, and the tasks' rows are Spark's
partitions.

  pipeline_test.py local|cluster
"""
import glob
import json
import os

from lib import (READS_PARQUET, SPARK_DATA, SPARKTORCH, SPEC, binary_predictions, blame, check,
                 done, expect, expect_in, expect_prompt_exit, expect_success, expect_torch_model,
                 reads_parquet, setup, submit, test_labels, test_rows)

# Test accuracy after 2 epochs (sync, seed 0: the same on every run): 0.8220 with readParquet
# (local[2]: 6,000 rows per task), 0.8045 through Spark (local-cluster, filtered: 6,371 and
# 5,629).
THRESHOLD = 0.75
JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipeline_job.py")


def main():
    where, master = setup("pipeline")
    saved = os.path.abspath("pipeline")
    model_file = os.path.abspath("stage.pt")
    test = os.path.join(SPARK_DATA, "test.parquet")

    filtered = where == "cluster"
    check("fit Pipeline([SparkTorch(iters=2, partitions=2)]) on %s (train.parquet%s), save it"
          % (master, ", filtered" if filtered else ""))
    fit_run = run = submit("fit", master, [
        JOB, "fit", "--train", os.path.join(SPARK_DATA, "train.parquet"), "--test", test,
        "--spec", SPEC, "--binary", SPARKTORCH, "--saved", saved, "--model-file", model_file,
        "--facts", "fit.json"] + (["--filter"] if filtered else []), timeout=300)
    expect_success(run, "the fit")
    expect_in(r"^pipeline_job: fitted", run.out, "the fit's last line")
    if where == "local":
        expect_prompt_exit(run, r"^pipeline_job: fitted", "the fit")
    with open("fit.json") as f:
        fitted = json.load(f)
    expect(fitted["stage"] == "SparkTorchModel", "the fitted stage is a SparkTorchModel",
           fitted["stage"])
    tasks = [s for s in fitted["summaries"] if "rank" in s]
    expect(sum(s["partition_rows"] for s in tasks) == 12000 and len(tasks) == 2,
           "its summaries: 2 tasks, 12000 rows", [s.get("partition_rows") for s in tasks])
    rows = [s["partition_rows"] for s in sorted(tasks, key=lambda s: s["rank"])]
    if filtered:
        expect(not reads_parquet(run), "a filtered DataFrame: the rows go through Spark (no line "
               "says the tasks read the files themselves)",
               reads_parquet(run) and reads_parquet(run).group(0))
        expect(min(rows) > 0, "each task has rows of Spark's partitions", rows)
    else:
        found = expect_in(READS_PARQUET, run.text,
                          "a plain read: the tasks read their rows from the files themselves")
        expect(found.groups() == ("2", "2"), "2 tasks, 2 files", found.groups())
        expect(rows == [6000, 6000], "each task its half: 6000 rows", rows)
    # Spark 3.5 writes metadata/part-00000, Spark 4 metadata/part-00000-UUID-c000.txt.
    expect(glob.glob(os.path.join(saved, "metadata", "part-00000*")),
           "the PipelineModel is saved in %s" % saved)

    ids = [p[0] for p in fitted["predictions"]]
    expect(ids == list(range(2000)), "the fitted pipeline predicts the 2000 test rows in order")
    expected = binary_predictions(model_file)
    mine = [p[2] for p in fitted["predictions"]]
    differ = [i for i in range(2000) if mine[i] != expected[i]]
    expect(not differ, "its predictions equal `sparktorch predict` on saveModelFile's file",
           "%d differ, first ids %s" % (len(differ), differ[:5]))
    pytorch = fitted["pytorch"]
    expect(pytorch["ids"] == list(range(16)) and pytorch["classes"] == mine[:16],
           "getPytorchModel() (%s): its classes for the first 16 rows are sparktorch's"
           % pytorch["type"], "%s against %s" % (pytorch["classes"], mine[:16]))
    expect(expect_torch_model(model_file, "saveModelFile's file", test_rows(16)) == mine[:16],
           "torch.jit.load of that file agrees on the first 16 rows")

    check("a fresh spark-submit loads it with PipelineModel.load and transforms the test rows")
    run = submit("load", master, [JOB, "load", "--test", test, "--saved", saved,
                                  "--facts", "load.json"], timeout=300)
    expect_success(run, "the load")
    with open("load.json") as f:
        loaded = json.load(f)
    expect(loaded["stages"] == ["SparkTorchModel"], "the loaded stages", loaded["stages"])
    again = loaded["predictions"]
    expect([p[0] for p in again] == ids and [p[2] for p in again] == mine,
           "the loaded pipeline predicts every row as the fitted one did")
    labels = test_labels()
    expect(all(p[1] == labels[p[0]] for p in again), "each prediction beside its own row")
    accuracy = sum(1 for p in again if p[2] == p[1]) / len(again)
    print("  accuracy %.4f (pipeline, %s, 2 epochs)" % (accuracy, where), flush=True)
    expect(accuracy > THRESHOLD, "accuracy %.4f > %.2f" % (accuracy, THRESHOLD), accuracy)

    check("create_spark_torch_model(saveModelFile's file), in the fit's session, after the "
          "stage's own transform")
    blame(fit_run)
    expect("attached_error" not in fitted, "its transform ran",
           fitted.get("attached_error"))
    attached = {p[0]: p[2] for p in fitted["attached"]}
    expect(sorted(attached) == ids and all(attached[i] == mine[i] for i in ids),
           "it predicts the same as the stage for every row")
    done()


if __name__ == "__main__":
    main()

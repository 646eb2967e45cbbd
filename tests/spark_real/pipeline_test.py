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

  pipeline_test.py local|cluster
"""
import json
import os

from lib import (SPARK_DATA, SPARKTORCH, SPEC, binary_predictions, blame, check, done, expect,
                 expect_in, expect_prompt_exit, expect_success, expect_torch_model, setup,
                 submit, test_labels, test_rows)

# Test accuracy after 2 epochs (sync, seed 0: the same on every run and master): 0.8065.
THRESHOLD = 0.75
JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pipeline_job.py")


def main():
    where, master = setup("pipeline")
    saved = os.path.abspath("pipeline")
    model_file = os.path.abspath("stage.pt")
    test = os.path.join(SPARK_DATA, "test.parquet")

    check("fit Pipeline([SparkTorch(iters=2, partitions=2)]) on %s, save it" % master)
    fit_run = run = submit("fit", master, [
        JOB, "fit", "--train", os.path.join(SPARK_DATA, "train.parquet"), "--test", test,
        "--spec", SPEC, "--binary", SPARKTORCH, "--saved", saved, "--model-file", model_file,
        "--facts", "fit.json"], timeout=300)
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
    expect(os.path.isfile(os.path.join(saved, "metadata", "part-00000")),
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

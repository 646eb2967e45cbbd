"""spark-real.{sync,hogwild}.{local,cluster}: spark-scripts/train.py trains the MLP on the
12,000 training rows with 2 tasks for 3 epochs, then spark-scripts/predict.py predicts the 2,000
test rows (test.parquet: a `features` vector, in order, with an id). The training rows are
train.parquet's `features` vectors, except for hogwild on local[2]: train.csv's numeric
columns label,p0..p783, which train.py assembles itself; a good accuracy on test.parquet's
vectors then also says that it assembles them in VectorAssembler's order.

train.parquet is a plain read of Parquet files, so by default (readParquet) the tasks read their
rows from its 2 files themselves, each its contiguous half: the driver says so, and the summary
has 6,000 rows per task. train.csv's rows go through Spark: no such line.

Checks: train.py's closing line counts the job's rows (12,000, every task's, not one task's);
spark-submit exits promptly after it (a local master: Spark 2.4's barrier timers once kept it
alive forever); the summary has one record per task, their rows add up to 12,000 and (sync)
every rank ended with the same weights; the model loads with torch.jit.load; predict.py prints
an accuracy above THRESHOLD for all 2,000 rows, and writes one prediction per row, each equal
to what `sparktorch predict --model` says for that row: in the input's order (sync: the rows
stay in their one partition), or paired by id (hogwild: predict.py --partitions 2 shuffles the
rows, which then read back in no fixed order: each waits in the JVM for its own prediction).

sync on local-cluster also trains once more with --readParquet false, the rows of train.parquet
through Spark (the JVM's pipe) as before readParquet: no line says the tasks read the files, the
summary's rows are Spark's partitions (add up to 12,000, none empty), and `sparktorch predict`
(no Spark job) gives an accuracy above THRESHOLD. (empty_partition_test.py does the same on
local[2].)

  train_test.py sync|hogwild local|cluster
"""
import json
import os
import sys

from lib import (ACCURACY, CLOSING, READS_PARQUET, SPARK_DATA, binary_predictions, check,
                 done, expect, expect_in, expect_prompt_exit, expect_success, expect_torch_model,
                 fail, read_csv_dir, reads_parquet, REPO, setup, submit, test_labels, test_rows,
                 train_args, SPARKTORCH)

# Test accuracy after 3 epochs on 12,000 rows, measured: sync 0.8465 on every run and master
# with readParquet (seed 0: 6,000 rows per task), 0.8385 through Spark (--readParquet false:
# Spark's partitions of 6,371 and 5,629 rows); hogwild 0.815-0.854 over 13 runs, through
# Spark (local[2] from train.csv 0.815-0.850, from train.parquet 0.831; local-cluster
# 0.830-0.854), and 0.845 on local-cluster with readParquet. The threshold leaves a wide margin
# for hogwild's run-to-run variation and still fails a model that did not learn (0.10).
THRESHOLD = 0.75
ROWS = 12000


def main():
    mode = sys.argv[1] if len(sys.argv) == 3 else ""
    if mode not in ("sync", "hogwild"):
        fail("usage: train_test.py sync|hogwild local|cluster")
    where, master = setup(mode)
    model = os.path.abspath("mlp.pt")
    summary = os.path.abspath("summary.jsonl")

    source = "train.csv" if (mode, where) == ("hogwild", "local") else "train.parquet"
    check("train.py --mode %s on %s: %s, 2 tasks, 3 epochs, %d rows"
          % (mode, master, source, ROWS))
    run = submit("train", master, train_args(os.path.join(SPARK_DATA, source), mode, 3, model,
                                             more=["--summary", summary]), timeout=300)
    expect_success(run, "train.py")
    closing = expect_in(CLOSING, run.out, "train.py's closing line")
    expect(int(closing.group(2)) == ROWS, "the closing line counts the job's %d rows" % ROWS,
           closing.group(2))
    expect(closing.group(3) == model, "the closing line names the model file", closing.group(3))
    if where == "local":
        expect_prompt_exit(run, CLOSING, "train.py")
    with open(summary) as f:
        records = [json.loads(line) for line in f if line.strip()]
    tasks = [r for r in records if "rank" in r]
    expect(sorted(r["rank"] for r in tasks) == [0, 1], "the summary has one record per task",
           [r.get("rank") for r in tasks])
    expect(sum(r["partition_rows"] for r in tasks) == ROWS,
           "the tasks' partition_rows add up to %d" % ROWS,
           [r["partition_rows"] for r in tasks])
    if source.endswith(".parquet"):
        found = expect_in(READS_PARQUET, run.text,
                          "the driver says the tasks read their rows from the files themselves")
        expect(found.groups() == ("2", "2"), "2 tasks, 2 files", found.groups())
        expect([r["partition_rows"] for r in sorted(tasks, key=lambda r: r["rank"])] ==
               [6000, 6000], "each task trained on its half: 6000 rows",
               [r["partition_rows"] for r in tasks])
    else:
        expect(not reads_parquet(run), "the rows of %s go through Spark (no line says the tasks "
               "read files)" % source)
        expect(all(r["partition_rows"] > 0 for r in tasks), "every task trained on rows",
               [r["partition_rows"] for r in tasks])
    if mode == "sync":
        expect(len({r["weights_crc32"] for r in tasks}) == 1,
               "every rank ended with the same weights", [r["weights_crc32"] for r in tasks])
    first = test_rows(16)
    torch_classes = expect_torch_model(model, "the trained model", first)

    check("predict.py on the 2,000 test rows: accuracy, and one prediction per row equal to "
          "`sparktorch predict`'s")
    out_csv = os.path.abspath("predicted.csv")
    args = [os.path.join(REPO, "spark-scripts", "predict.py"), "--source",
            os.path.join(SPARK_DATA, "test.parquet"), "--model", model, "--labelCol", "label",
            "--binary", SPARKTORCH, "--output", out_csv]
    if mode == "hogwild":
        args += ["--partitions", "2"]
    run = submit("predict", master, args, timeout=300)
    expect_success(run, "predict.py")
    found = expect_in(ACCURACY, run.out, "predict.py's accuracy line")
    accuracy, correct, rows = float(found.group(1)), int(found.group(2)), int(found.group(3))
    print("  accuracy %.4f (%s, %s, %d epochs)" % (accuracy, mode, where, 3), flush=True)
    expect(rows == 2000, "the accuracy counts 2000 rows", rows)
    expect(accuracy > THRESHOLD, "accuracy %.4f > %.2f" % (accuracy, THRESHOLD), accuracy)

    predicted = read_csv_dir(out_csv)
    expect(len(predicted) == 2000, "predict.py wrote 2000 rows", len(predicted))
    ids = [int(r["id"]) for r in predicted]
    expect(sorted(ids) == list(range(2000)), "every test row once (ids 0..1999)")
    if mode == "sync":
        expect(ids == list(range(2000)), "the rows in the input's order")
    expected = binary_predictions(model)
    labels = test_labels()
    by_id = {int(r["id"]): r for r in predicted}
    differ = [i for i in range(2000) if float(by_id[i]["predictions"]) != expected[i]]
    expect(not differ, "each row's prediction equals `sparktorch predict --model`'s",
           "%d differ, first ids %s" % (len(differ), differ[:5]))
    expect(all(float(by_id[i]["label"]) == labels[i] for i in range(2000)),
           "each prediction is beside its own row (the labels match test2k.csv's)")
    right = sum(1 for i in range(2000) if expected[i] == labels[i])
    expect(right == correct, "the printed accuracy is that of these predictions (%d right)"
           % right, correct)
    expect(torch_classes == expected[:16],
           "torch.jit.load's model predicts the first 16 rows as sparktorch does",
           "%s against %s" % (torch_classes, expected[:16]))
    if (mode, where) == ("sync", "local"):
        vector_accuracy(master, model, correct)
    if (mode, where) == ("sync", "cluster"):
        spark_rows(master, labels)
    done()


def vector_accuracy(master, model, correct):
    """predict.py --labelCol with --useVectorOut (Spark 4) or --probabilities (3.5; one a line,
    for time): the accuracy of each vector's largest entry, the same as that of the class
    predictions."""
    import pyspark  # pylint: disable=import-outside-toplevel  # this line's, from its venv
    for flag in ("--probabilities" if pyspark.__version__.startswith("3.") else "--useVectorOut",):
        check("predict.py %s --labelCol label: the accuracy of the vectors' argmax" % flag)
        run = submit("predict_vector", master, [
            os.path.join(REPO, "spark-scripts", "predict.py"), "--source",
            os.path.join(SPARK_DATA, "test.parquet"), "--model", model, "--labelCol", "label",
            "--binary", SPARKTORCH, flag], timeout=300)
        expect_success(run, "predict.py %s" % flag)
        found = expect_in(ACCURACY, run.out, "predict.py's accuracy line")
        expect(int(found.group(2)) == correct and int(found.group(3)) == 2000,
               "%d of 2000 right, as the class predictions" % correct, found.group(0))


def spark_rows(master, labels):
    """train.py --readParquet false on train.parquet: the rows through Spark."""
    check("train.py --mode sync --readParquet false on %s: train.parquet's rows through Spark"
          % master)
    model = os.path.abspath("spark_rows.pt")
    summary = os.path.abspath("spark_rows.jsonl")
    run = submit("spark_rows", master, train_args(
        os.path.join(SPARK_DATA, "train.parquet"), "sync", 3, model,
        more=["--summary", summary, "--readParquet", "false"]), timeout=300)
    expect_success(run, "train.py --readParquet false")
    expect(not reads_parquet(run), "no line says the tasks read the files themselves",
           reads_parquet(run) and reads_parquet(run).group(0))
    closing = expect_in(CLOSING, run.out, "train.py's closing line")
    expect(int(closing.group(2)) == ROWS, "the closing line counts the job's %d rows" % ROWS,
           closing.group(2))
    with open(summary) as f:
        rows = [r["partition_rows"] for r in map(json.loads, f) if "rank" in r]
    expect(len(rows) == 2 and sum(rows) == ROWS and min(rows) > 0,
           "2 tasks, each with rows of Spark's partitions, %d in all" % ROWS, rows)
    predicted = binary_predictions(model)
    accuracy = sum(1 for p, l in zip(predicted, labels) if p == l) / len(labels)
    print("  accuracy %.4f (sync, --readParquet false, 3 epochs)" % accuracy, flush=True)
    expect(accuracy > THRESHOLD, "`sparktorch predict`'s accuracy %.4f > %.2f on the 2000 test "
           "rows" % (accuracy, THRESHOLD), accuracy)


if __name__ == "__main__":
    main()

"""spark-real.rows.local: every kind of column becomes the rows the binary reads, through real
Spark SQL (rows_job.py): a dense and a sparse vector, numeric columns of four types, an array
column with a number, vector labels dense and sparse, no label, and a null cell.

Checks, per case: the exact text Spark made of each row (Spark's own number and vector
formatting: `1.0E-5`, `(4,[1,3],[0.5,1.0E-5])`); `sparktorch train` reads the rows (their count
and 4 features); and for the feature cases spark.predict gives, both on the JVM's zipped path
and through Python workers, the prediction `sparktorch predict` gives each row's features; the
null cell fails both paths naming the line and column, with `expected a number, got "null"`.
With sparktorch-spark.jar (built beside the binary), each row's features are `<BASE64>` of their
float32 values, but for a row with a null and a sparse vector with fewer nonzeros than 1 in 8 of
its size, which keep their text; the binary reads those rows, predicts the same for them, and
spark.predict gives the same with the jar and without it (SPARKTORCH_JAR=""). A vector
column's float32 record, which PipeRows writes from the vector's cell (VectorRecords), holds what
the float32 row format says for seven vectors: dense, sparse as a sparse record and as a dense
one, empty, null.

  rows_test.py local
"""
import base64
import json
import os
import re
import struct
import subprocess

from lib import (SPARKTORCH, REPO, check, done, expect, expect_in, expect_success, fail, setup,
                 submit)

# The four features of the three rows (ids 0, 1, 2) as each case writes them.
DENSE = ["[0.0,0.5,-2.0,1.0E-5]", "[1.0,-1.0,0.25,3.0]", "[2.0,2.0,2.0,2.0]"]
SPARSE = ["(4,[1,3],[0.5,1.0E-5])", "(4,[],[])", "(4,[0,2],[-1.0,4.0])"]
EXPECTED = {
    "dense vector, class label": ["0," + DENSE[0], "2," + DENSE[1], "1," + DENSE[2]],
    "sparse vector, class label": ["0," + SPARSE[0], "2," + SPARSE[1], "1," + SPARSE[2]],
    "numeric columns (int, double, float, long), double label":
        ["1.5,[1,0.5,2.5,7]", "-0.25,[-3,1.0E-7,-0.5,12345678901]", "0.0,[0,-2.0,0.125,-1]"],
    "an array column and a number, no label":
        ["[0.25,-1.0,3.0,1]", "[0.0,1.5,-2.0,-3]", "[1.0,1.0,1.0,0]"],
    "dense vector label, dense vector":
        ["[1.0,0.0]," + DENSE[0], "[0.0,1.0]," + DENSE[1], "[0.5,0.5]," + DENSE[2]],
    "sparse vector label, sparse vector":
        ["(2,[0],[1.0])," + SPARSE[0], "(2,[1],[1.0])," + SPARSE[1],
         "(2,[0,1],[0.5,0.5])," + SPARSE[2]],
    "a null cell among numeric columns":
        ["0,[1,1.0,0.5,2.5]", "2,[-3,null,1.0E-7,-0.5]", "1,[0,2.0,-2.0,0.125]"],
}
# What `sparktorch train` is given for each labelled case: the loss and the model's outputs.
TRAIN = {
    "dense vector, class label": ("cross_entropy", 3),
    "sparse vector, class label": ("cross_entropy", 3),
    "numeric columns (int, double, float, long), double label": ("mse", 1),
    "an array column and a number, no label": ("mse", 4),
    "dense vector label, dense vector": ("mse", 2),
    "sparse vector label, sparse vector": ("mse", 2),
}
NULL_CASE = "a null cell among numeric columns"


def _values(vector):
    """The numbers of a vector's text: dense `[a,b]` or sparse `(n,[i,j],[a,b])`; None for a
    text with a null."""
    if "null" in vector:
        return None
    sparse = re.fullmatch(r"\((\d+),\[(.*)\],\[(.*)\]\)", vector)
    if not sparse:
        return [float(v) for v in vector[1:-1].split(",")]
    values = [0.0] * int(sparse.group(1))
    indices = [int(i) for i in sparse.group(2).split(",") if i]
    for i, v in zip(indices, [float(v) for v in sparse.group(3).split(",") if v]):
        values[i] = v
    if len(indices) * 8 < len(values):
        return None  # few nonzeros: stays text
    return values


def encoded(line, has_label):
    """What FeaturesText makes of the row whose text is `line`: its features `<BASE64>` of
    float32 little-endian, or the text where it keeps the text."""
    label, vector = line.split(",", 1) if has_label else ("", line)
    if has_label and line[0] in "[(":  # a vector label: to its "]", or its values' "])"
        close = (line.index("]") if line[0] == "[" else
                 line.index(")", line.index("]", line.index("]") + 1)))
        label, vector = line[:close + 1], line[close + 2:]
    values = _values(vector)
    if values is None:
        return line
    data = base64.b64encode(struct.pack("<%df" % len(values), *values)).decode()
    return (label + "," if has_label else "") + "<" + data + ">"


def spec(outputs, loss):
    path = os.path.abspath("linear_%d_%s.json" % (outputs, loss))
    with open(path, "w") as f:
        json.dump({"name": "rows_linear", "loss": loss,
                   "layers": [{"type": "linear", "in_features": 4, "out_features": outputs}],
                   "optimizer": {"type": "adam", "lr": 0.01}}, f)
    return path


def sparktorch(args, text):
    return subprocess.run([SPARKTORCH] + args, input=text.encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, check=False)


def main():
    setup("rows")
    model = os.path.abspath("linear.pt")
    trained = sparktorch(["train", "--model", spec(3, "cross_entropy"), "--format", "vector",
                          "--epochs", "3", "-o", model], "\n".join(EXPECTED[
                              "dense vector, class label"]) + "\n")
    if trained.returncode != 0:
        fail("sparktorch train of the test's model: %s" % trained.stderr.decode()[-400:])
    run = submit("rows", "local[2]", [os.path.join(REPO, "tests", "spark_real", "rows_job.py"),
                                      "--model", model, "--binary", SPARKTORCH,
                                      "--work", os.getcwd(), "--facts", "facts.jsonl"],
                 timeout=400)
    expect_success(run, "rows_job.py")
    with open("facts.jsonl") as f:
        facts = [json.loads(line) for line in f]
    check("a vector column's float32 records, from its cells (VectorRecords)")
    records = facts.pop()["vector_records"] if facts and "vector_records" in facts[-1] else []
    expect(len(records) == 7, "seven vectors' records", records)
    for wanted, piped in records:
        expect(piped == wanted, "PipeRows writes the record the float32 format says",
               [wanted, piped])
    expect([piped.split(" ")[0] for _, piped in records] ==
           ["dense", "sparse", "sparse", "sparse", "null", "dense", "dense"],
           "dense, sparse as sparse records, empty, null, a sparse one as dense", records)
    expect([f["case"] for f in facts] == list(EXPECTED), "every case ran",
           [f["case"] for f in facts])
    for fact in facts:
        case = fact["case"]
        check(case)
        expect(fact["lines"] == EXPECTED[case], "the rows' text", fact["lines"])
        has_label = "no label" not in case
        expect(fact["encoder"] == "sparktorch_features_text", "sparktorch-spark.jar is used",
               fact["encoder"])
        expect(fact["encoded"] == [encoded(line, has_label) for line in EXPECTED[case]],
               "the rows with sparktorch-spark.jar: float32 features where it gives them",
               fact["encoded"])
        if case in TRAIN:
            loss, outputs = TRAIN[case]
            label = [] if "no label" not in case else ["--no-label"]
            for key in ("lines", "encoded"):
                done_ = sparktorch(["train", "--model", spec(outputs, loss), "--format",
                                    "vector", "--epochs", "1", "-o", os.path.abspath("case.pt")]
                                   + label, "\n".join(fact[key]) + "\n")
                expect(done_.returncode == 0 and
                       b"read 3 rows of 4 features" in done_.stderr,
                       "sparktorch train reads 3 rows of 4 features (%s)" % key,
                       done_.stderr.decode()[-400:])
        if "zip_path" not in fact:
            continue
        expect(fact["zip_path"] and fact["python_path"],
               "without the jar, Parquet's rows take the zipped path, a nondeterministic filter "
               "the Python one")
        if case == NULL_CASE:
            # The JVM's pipe says only the status; the binary's message goes to the task's
            # log, which on a local master is the driver's stderr. PipeRows and a Python
            # worker quote it.
            message = 'stdin:2:5: expected a number, got "null"'
            expect("exited with status 3" in fact.get("zipped_text_error", ""),
                   "zipped: predict fails with the bad row's status",
                   fact.get("zipped_text_error", "no error")[-600:])
            expect_in(message, run.err, "the binary's message in the task's log")
            for key in ("one_pass", "one_pass_shuffled", "through_python_text"):
                error = fact.get(key + "_error", "")
                expect("sparktorch predict (its stdin: this partition's rows, line or record N "
                       "the Nth) exited with status 3:" in error and message in error,
                       "%s: predict fails with the status, naming the row, the column and the "
                       "null" % key, error[-600:] or "no error")
            continue
        if "first" in fact:
            expect(fact["first"] == 0, "predict(...).limit(1) gives the first row", fact["first"])
            expect(fact["left_running"] == 0,
                   "no sparktorch predict left running after limit(1) stopped reading",
                   fact["left_running"])
            (first, first_pids), (second, second_pids) = fact["kept"]
            expect(first == second, "two predictions of 8 partitions agree", fact["kept"])
            expect(0 < len(first_pids) <= 2 and first_pids == second_pids,
                   "at most one predict process per slot, kept for the second prediction",
                   fact["kept"])
            expect(fact["kept_after"] == 0, "kept processes end after their keep time",
                   fact["kept_after"])
        outputs = {}
        for key in ("lines", "encoded"):
            features = [line if "no label" in case else line.split(",", 1)[1]
                        for line in fact[key]]
            predicted = sparktorch(["predict", "--model", model, "--format", "vector"],
                                   "\n".join(features) + "\n")
            expect(predicted.returncode == 0, "sparktorch predict on the rows' features (%s)" % key,
                   predicted.stderr.decode()[-400:])
            outputs[key] = predicted.stdout.decode().split()
        expect(outputs["encoded"] == outputs["lines"],
               "float32 features predict as their text does", outputs)
        wanted = [[i, float(v)] for i, v in enumerate(outputs["lines"])]
        for key in ("one_pass", "one_pass_shuffled", "zipped_text", "through_python_text"):
            expect(fact.get(key) == wanted, "%s: the binary's prediction for every row" % key,
                   fact.get(key, fact.get(key + "_error")))
    done()


if __name__ == "__main__":
    main()

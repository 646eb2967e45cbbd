"""spark-real.LINE.connect.local: the Spark layer from a Spark Connect client, against a Connect
server this test starts (SparkConnectServer on local[2], on a free loopback port; Spark 4's
wheel carries it, 3.5's jars/ get it from Maven Central through examples/install_python.sh)
and stops at its end.

Checks, from connect_job.py's facts (a client process: `SparkSession.builder.remote`): sync and
hogwild fits of 12,000 rows reach 0.7 on the 2,000 test rows (2 epochs), every row trained;
the transform's predictions are PyTorch 2.x's argmax of the fitted model on the same rows
(all 2,000) and useVectorOut's outputs its outputs (within 1e-4); a Pipeline saved and loaded
predicts the same (on 3.5, whose own Pipeline persistence needs a JVM on the client, the model
stage saved and loaded alone); a bad label, a null vector, a missing binary, more partitions than slots
and a transform without its binary each fail with one line that says why. train.py and
predict.py with --remote: the closing line, the accuracy line, and predict.py's one-line error
for a missing binary (exit status 1). No client or server process hangs: each run has a time
limit.

spark-real.LINE.connect_lost.local (`lost`): a sync job whose rank is killed mid-training runs
again with a new job id and trains every row (attempt 2). The kill comes when the job's first
epoch line reaches the server's log (the tasks' stderr), with the ranks frozen first
(lib.RankKiller), so the job cannot end before it however fast the machine.

  connect_test.py [lost] local
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

from lib import (ACCURACY, CLOSING, PYTHON, REPO, SPARK_DATA, SPARK_HOME, SPARKTORCH, RankKiller,
                 blame, build_bundle, check, done, expect, expect_in, fail, ok, run_python, setup)

SEED = "7919"  # marks the lost-rank job's processes
LOST_EPOCH_LINE = re.compile(r"epoch 1/8\b")  # connect_job.py's LOST_EPOCHS


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A Spark Connect server (SparkConnectServer through spark-submit, in the foreground) on
    `master` (default local[2]) with the spark-submit arguments `more`: its Python workers run
    PYTHON."""

    def __init__(self, master="local[2]", more=(), env=None):
        self.port = free_port()
        command = [os.path.join(SPARK_HOME, "bin", "spark-submit"), "--class",
                   "org.apache.spark.sql.connect.service.SparkConnectServer", "--master",
                   master, "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
                   "--conf", "spark.connect.grpc.binding.port=%d" % self.port,
                   "--conf", "spark.ui.enabled=false"] + list(more)
        self.log = open("server.log", "w")
        env = dict(env or os.environ, PYSPARK_PYTHON=PYTHON)
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True)
        deadline = time.monotonic() + 180
        while "Spark Connect server started" not in self.text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                fail("the Spark Connect server did not start: %s"
                     % "\n".join(self.text().splitlines()[-30:]))
            time.sleep(0.5)
        self.url = "sc://127.0.0.1:%d" % self.port
        ok("a Spark Connect server at %s" % self.url)

    def text(self):
        with open("server.log", errors="replace") as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


def job(server, phase, timeout, env=None):
    facts = os.path.abspath("facts-%s.jsonl" % phase)
    binary = [] if phase == "bundle" else ["--binary", SPARKTORCH]
    run = run_python("connect-" + phase, [
        os.path.join(REPO, "tests", "spark_real", "connect_job.py"), "--remote", server.url,
        "--data", SPARK_DATA, "--work", os.getcwd(), "--facts", facts,
        "--phase", phase] + binary, timeout=timeout, env=dict(env or {}, REPO=REPO))
    expect(run.rc == 0, "connect_job.py --phase %s exits 0" % phase, "exit status %s" % run.rc)
    with open(facts) as f:
        return run, [json.loads(line) for line in f]


def one_line(error, what, pattern):
    """`error` ([class, message]) is `what`'s one-line error matching `pattern`."""
    expect(error is not None, "%s fails" % what)
    name, message = error
    expect("\n" not in message.strip(), "%s: one line" % what, message[:800])
    expect(re.search(pattern, message), "%s: %s: /%s/" % (what, name, pattern), message[:800])


class FirstEpoch:
    """Whether the lost-rank job's first epoch line is in the server's log (its tasks' stderr)
    after `offset`."""

    def __init__(self, server):
        self.server = server
        self.offset = len(server.text())

    def __call__(self):
        return bool(LOST_EPOCH_LINE.search(self.server.text()[self.offset:]))


def lost(server):
    check("a rank killed mid-training: the job runs again")
    killer = RankKiller(SEED, FirstEpoch(server)).start()
    run, facts = job(server, "lost", 600)
    killer.stop()
    expect(killer.killed is not None, "one rank was killed after the first epoch", killer.why)
    print("  killed pid %d, %.1f s after the job started" % killer.killed, flush=True)
    expect_in(r"^sparktorch: job \d+ failed and runs again with a new job id: sparktorch "
              r"rank [01] failed", run.text, "the client says why it runs again")
    expect(facts[0] == {"attempts": 2, "rows": 12000}, "attempt 2 trained every row",
           facts[0])


def everything_else(server):
    """The checks of spark-real.LINE.connect.local, against `server`."""
    run, facts = job(server, "all", 900)
    for fact in facts[:3]:
        check("a %s fit on Spark Connect, %s" % (
            fact["mode"], "the tasks reading the Parquet files" if fact["readParquet"] else
            "the rows through Spark"))
        expect(fact["rows"] == 12000, "every row trained", fact["rows"])
        expect(fact["attempts"] == 1, "in one attempt", fact["attempts"])
        expect(fact["accuracy"] >= 0.7, "test accuracy >= 0.7", fact["accuracy"])
        expect(fact["torch_agrees"] == fact["count"] == 2000,
               "the transform's predictions are PyTorch 2.x's argmax of the model",
               "%s of %s" % (fact["torch_agrees"], fact["count"]))
        if "vector_gap" in fact:
            expect(fact["vector_gap"] < 1e-4, "useVectorOut: PyTorch's outputs",
                   fact["vector_gap"])
    expect_in(r"^sparktorch: job \d+ \(attempt 1 of 2\) on Spark Connect: 2 sync tasks, "
              r"serve in task 0", run.text, "the client says how the job runs")
    expect_in(r"^sparktorch: the 2 tasks read their rows from the \d+ Parquet files? "
              r"themselves \(readParquet\)", run.text, "and that the tasks read the Parquet files")
    secrets(server, facts[-1])
    check("a Pipeline (on 3.5 the model stage) saved and loaded through Spark Connect")
    expect(facts[3]["pipeline_sums"][0] == facts[3]["pipeline_sums"][1],
           "the loaded pipeline predicts the same", facts[3]["pipeline_sums"])
    check("failures, from the client: one line each")
    failures = facts[4]["failures"]
    one_line(failures["bad_label"], "a label 42",
             r"^sparktorch job \d+ failed \(attempt 1 of 2\): sparktorch rank [01] failed "
             r"\(exit status (?:3 \(a row that cannot be read\)|76 \(another task "
             r"failed\))\): .*(?:\.parquet: row \d+|stdin:\d+): label 42 is not a class "
             r"index")
    one_line(failures["null_vector"], "a null vector",
             r"sparktorch rank [01] failed \(a bad row\): column features is null in row "
             r"\d+ of this batch")
    one_line(failures["no_binary"], "no binary on the executors",
             r"^sparktorch serve failed: no sparktorch binary on \S+: tried "
             r"/nonexistent/sparktorch")
    expect(failures["no_binary"][0] == "BinaryMissing", "BinaryMissing",
           failures["no_binary"][0])
    one_line(failures["partitions"], "partitions=3 on local[2]",
             r"^partitions=3, but a barrier stage can get 2 slots on local\[2\]")
    expect(failures["transform_no_binary"] is not None and
           "no sparktorch binary on" in failures["transform_no_binary"][1],
           "a transform without its binary says so", failures["transform_no_binary"])

    check("train.py and predict.py --remote")
    model = os.path.abspath("cli.pt")
    run = run_python("train-remote", [
        os.path.join(REPO, "spark-scripts", "train.py"), "--remote", server.url, "--source",
        os.path.join(SPARK_DATA, "train.parquet"), "--torchObj",
        os.path.join(REPO, "examples", "fashion_mnist_mlp.json"), "--labelCol", "label",
        "--iters", "1", "--binary", SPARKTORCH, "--output", model], timeout=300)
    expect(run.rc == 0, "train.py --remote exits 0", run.rc)
    closing = expect_in(CLOSING, run.text, "train.py's closing line")
    expect(closing.group(2) == "12000" and os.path.getsize(model) > 0,
           "12,000 rows, the model written on the client", closing.group(0))
    predict = [os.path.join(REPO, "spark-scripts", "predict.py"), "--remote", server.url,
               "--source", os.path.join(SPARK_DATA, "test.parquet"), "--model", model,
               "--labelCol", "label"]
    run = run_python("predict-remote", predict + ["--binary", SPARKTORCH], timeout=300)
    expect(run.rc == 0, "predict.py --remote exits 0", run.rc)
    accuracy = expect_in(ACCURACY, run.text, "predict.py's accuracy line")
    expect(float(accuracy.group(1)) >= 0.7 and accuracy.group(3) == "2000",
           "accuracy >= 0.7 on the 2,000 rows", accuracy.group(0))
    run = run_python("predict-remote-no-binary",
                     predict + ["--binary", "/nonexistent/sparktorch"], timeout=300)
    blame(run)
    expect(run.rc == 1, "predict.py without its binary exits 1", run.rc)
    expect_in(r"^predict.py: error: a task found no sparktorch binary: no sparktorch binary "
              r"on \S+: tried /nonexistent/sparktorch", run.text, "its one-line error")
    expect("Traceback" not in run.text, "and no traceback", run.text[-800:])



def secrets(server, fact):
    """The job secrets the sparktorch processes had (`fact`, from connect_job.py's SecretWatch)
    are in no plan the client sent and nowhere in the server's log."""
    check("the job's secret: made in the stage, not in the plan or the server's log")
    expect(len(fact["secrets"]) >= 1, "the sparktorch processes had secrets", fact)
    expect(not fact["secret_in_plan"], "no plan the client sent holds one (%d plans)"
           % fact["plans"])
    log = server.text()
    expect(not any(secret in log for secret in fact["secrets"]),
           "the server's log holds none of them")


def bundle():
    """spark-real.LINE.connect_bundle.cluster: no binary on the executors, no binary= : the
    bundle (SPARKTORCH_BUNDLE on the client) reaches them as an archive artifact."""
    bundle_path = build_bundle()
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if not os.access(os.path.join(d, "sparktorch"), os.X_OK))
    work = os.path.join(SPARK_HOME, "work")  # the executors' folders of local-cluster's apps
    before = set(glob.glob(os.path.join(work, "app-*")))
    server = Server("local-cluster[2,1,1024]", env=dict(os.environ, PATH=path))
    try:
        check("a sync fit and its transform with SPARKTORCH_BUNDLE and no binary=")
        run, facts = job(server, "bundle", 900, env={"SPARKTORCH_BUNDLE": bundle_path})
        fact = facts[0]
        expect(fact["rows"] == 12000 and fact["accuracy"] >= 0.7,
               "every row trained, test accuracy >= 0.7", fact)
        expect(fact["torch_agrees"] == fact["count"] == 2000,
               "the transform's predictions are PyTorch 2.x's argmax of the model", fact)
        one_line(fact["too_many"], "partitions=3 on local-cluster[2,1,1024]",
                 r"^partitions=3, but a barrier stage can get 2 slots on "
                 r"local-cluster\[2,1,1024\]")
        shipped = expect_in(r"^sparktorch: the bundle \S+ reached the Spark Connect server as "
                            r"the archive artifact (sparktorch-[0-9a-f]{16}) in [\d.]+ s",
                            run.text, "the client says it shipped the bundle")
        expect(len(re.findall(r"reached the Spark Connect server", run.text)) == 1,
               "once for the session (the fit and the transform)", run.text[-800:])
        unpacked = glob.glob(os.path.join(work, "app-*", "*", "*", shipped.group(1),
                                          "sparktorch"))
        expect(len(unpacked) == 2, "both executors unpacked it into their session's folder",
               unpacked)
        secrets(server, facts[-1])
    finally:
        server.stop()
        for app in set(glob.glob(os.path.join(work, "app-*"))) - before:
            shutil.rmtree(app, ignore_errors=True)  # two unpacked bundles: 1 GB


def main():
    phase = sys.argv[1] if len(sys.argv) > 2 else "all"
    setup({"lost": "connect_lost", "bundle": "connect_bundle"}.get(phase, "connect"))
    if phase == "bundle":
        bundle()
        done()
        return
    server = Server()
    try:
        if phase == "lost":
            lost(server)
        else:
            everything_else(server)
    finally:
        server.stop()
    done()

if __name__ == "__main__":
    main()

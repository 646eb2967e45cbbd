"""spark-real.LINE.gpus.{classic,connect}: Spark's GPU scheduling reaches the tasks. On
local-cluster[1,2,1024] whose worker has two fake GPUs (a discovery script that reports
addresses 0 and 1; this machine has no GPU), an executor takes both and each task one
(spark.task.resource.gpu.amount=1), so the two tasks of a fit run at once with different GPUs.
The classic fits send the rows through Spark (device=auto) and let the tasks read the Parquet
files (device=cuda): both prefixes carry the GPUs.

Checks, from the executor's log (the tasks' stderr), for a sync fit of 2 tasks through
train.py, classic (spark-submit; the rows piped by the JVM, the GPUs in their rank prefix from
sparktorch-spark.jar's TaskGpus) or from a Spark Connect client (train.py --remote; the GPUs from
the task's TaskContext in Python, as --task-gpus):
- device=auto: each task says `Spark gave this task GPU N; --device auto, but CUDA is not
  available ...: training on the CPU`, one with 0 and one with 1, and the fit succeeds;
- device=cuda: each task resolves cuda:N for its own N and fails, as a task without CUDA does,
  naming that device; the fit fails.

  gpu_test.py classic|connect
"""
import os
import re
import sys

from lib import (CLOSING, SPARK_DATA, WORK, check, done, expect, expect_in, expect_success,
                 fail, need_environment, ok, run_python, submit, train_args)

MASTER = "local-cluster[1,2,1024]"
GIVEN = re.compile(r"Spark gave this task GPU (\d)(?:; --device auto, but CUDA is not available "
                   r"to this process: training on the CPU|: --device cuda:(\d))")
NO_CUDA = re.compile(r"--device cuda:(\d): this LibTorch was built without CUDA")


def gpu_conf(script):
    conf = {"spark.worker.resource.gpu.amount": "2",
            "spark.worker.resource.gpu.discoveryScript": script,
            "spark.executor.resource.gpu.amount": "2",
            "spark.task.resource.gpu.amount": "1",
            "spark.executor.cores": "2"}
    out = []
    for name, value in conf.items():
        out += ["--conf", "%s=%s" % (name, value)]
    return out


def executor_text(folders, since=None):
    """The executors' stderr in `folders`, after the sizes `since` ({path: bytes}) of an earlier
    look; and the sizes now."""
    text, sizes = "", {}
    for folder in folders:
        for root, _, files in os.walk(folder):
            if "stderr" in files:
                path = os.path.join(root, "stderr")
                with open(path, "rb") as f:
                    f.seek((since or {}).get(path, 0))
                    text += f.read().decode(errors="replace")
                    sizes[path] = f.tell()
    return text, sizes


def app_folders(text):
    spark_home = os.environ["SPARK_HOME"]
    return [os.path.join(spark_home, "work", a)
            for a in sorted(set(re.findall(r"app ID (app-[\w-]+)", text)))]


def check_tasks(text, device, what):
    given = GIVEN.findall(text)
    addresses = sorted(g[0] for g in given)
    expect(addresses == ["0", "1"], "%s: one task was given GPU 0 and the other GPU 1" % what,
           given)
    if device == "cuda":
        expect(all(g[0] == g[1] for g in given), "%s: each trains on cuda:N of its own GPU N"
               % what, given)
        # (on Connect the task's Python quotes the binary's line again in its error)
        expect(sorted(set(NO_CUDA.findall(text))) == ["0", "1"],
               "%s: each fails on its own device, as a task without CUDA does" % what,
               NO_CUDA.findall(text))


def classic(script):
    for device in ("auto", "cuda"):
        check("classic: device=%s on %s with 2 fake GPUs" % (device, MASTER))
        model = os.path.abspath("classic-%s.pt" % device)
        run = submit("classic-" + device, MASTER, gpu_conf(script) + train_args(
            os.path.join(SPARK_DATA, "train.parquet"), "sync", 1, model,
            more=["--device", device] + (["--readParquet", "false"] if device == "auto" else [])),
            timeout=300)
        text, _ = executor_text(app_folders(run.err))
        if device == "auto":
            expect_success(run, "the fit")
            expect_in(CLOSING, run.out, "train.py's closing line")
        else:
            expect(run.rc != 0, "the fit fails without CUDA", run.rc)
        check_tasks(text, device, "classic, device=%s" % device)


def connect(script):
    from connect_test import Server  # pylint: disable=import-outside-toplevel
    server = Server(MASTER, gpu_conf(script))
    try:
        sizes = {}
        for device in ("auto", "cuda"):
            check("Spark Connect: device=%s on %s with 2 fake GPUs" % (device, MASTER))
            model = os.path.abspath("connect-%s.pt" % device)
            run = run_python("connect-" + device, train_args(
                os.path.join(SPARK_DATA, "train.parquet"), "sync", 1, model,
                more=["--device", device, "--remote", server.url]), timeout=300)
            # One application for both fits: only what its executors wrote during this one.
            text, sizes = executor_text(app_folders(server.text()), sizes)
            if device == "auto":
                expect(run.rc == 0, "the fit succeeds", run.rc)
                expect_in(CLOSING, run.out, "train.py's closing line")
            else:
                expect(run.rc != 0, "the fit fails without CUDA", run.rc)
            check_tasks(text, device, "Spark Connect, device=%s" % device)
    finally:
        server.stop()


def main():
    where = sys.argv[-1] if len(sys.argv) > 1 else ""
    if where not in ("classic", "connect"):
        fail("usage: gpu_test.py classic|connect")
    need_environment()
    folder = os.path.join(WORK, "gpus." + where)
    os.makedirs(folder, exist_ok=True)
    os.chdir(folder)
    script = os.path.abspath("gpus.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho '{\"name\": \"gpu\", \"addresses\": [\"0\", \"1\"]}'\n")
    os.chmod(script, 0o755)
    ok("a discovery script that reports GPUs 0 and 1: %s" % script)
    (classic if where == "classic" else connect)(script)
    done()


if __name__ == "__main__":
    main()

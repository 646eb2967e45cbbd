"""spark-real.rank_lost.{local,cluster}: a sync job whose rank is killed (SIGKILL) mid-training
runs again with a new job id and finishes with a model.

The test starts train.py (2 tasks, EPOCHS epochs; --seed 7919 marks its processes) and watches
the driver's output and, on local-cluster, the executors' logs, for rank 0's first epoch line;
then it kills one of this job's `sparktorch train` processes, once, found by their command
lines in /proc. Checks: the driver says `failed and runs again with a new job id`, and its
closing line says 12,000 rows in 2 attempts under another job id; the model loads with
torch.jit.load; spark-submit exits promptly (local). Should the job fail instead, the test
still requires the output to name the lost rank, and fails.

  rank_lost_test.py local|cluster
"""
import os
import re
import signal
import threading
import time

from lib import (CLOSING, SPARK_DATA, check, done, expect, expect_in, expect_prompt_exit,
                 expect_success, expect_torch_model, fail, ok, setup, submit, train_args,
                 train_processes)

EPOCHS = 8  # ~0.4 s each on 2 idle cores: the kill after epoch 1 leaves 7 to spare
SEED = "7919"  # marks this test's sparktorch train processes
EPOCH_LINE = re.compile(r"epoch 1/%d\b" % EPOCHS)


class Killer:
    """Kills one of the job's rank processes, once, after the first epoch line appears in the
    driver's output or in an executor's log."""

    def __init__(self):
        self.seen = threading.Event()
        self.killed = None  # (pid, seconds after spark-submit started)
        self.run = None
        self.stop = False

    def on_line(self, run, stream, line):
        self.run = run
        if EPOCH_LINE.search(line):
            self.seen.set()

    def executor_epoch(self):
        if self.run is None:
            return False
        for log in self.run.executor_logs():
            try:
                with open(log, errors="replace") as f:
                    if EPOCH_LINE.search(f.read()):
                        return True
            except OSError:
                continue
        return False

    def watch(self):
        while not self.stop:
            if self.seen.is_set() or self.executor_epoch():
                pids = train_processes(SEED)
                if pids:
                    os.kill(pids[-1], signal.SIGKILL)
                    self.killed = (pids[-1], time.monotonic() - self.run.started)
                    return
            time.sleep(0.05)


def main():
    where, master = setup("rank_lost")
    model = os.path.abspath("mlp.pt")
    check("a sync job on %s, one rank killed after its first epoch" % master)
    killer = Killer()
    watcher = threading.Thread(target=killer.watch, daemon=True)
    watcher.start()
    run = submit("train", master, train_args(os.path.join(SPARK_DATA, "train.parquet"), "sync",
                                             EPOCHS, model, more=["--seed", SEED]),
                 timeout=400, on_line=killer.on_line)
    killer.stop = True
    expect(killer.killed is not None, "a rank process was killed after the first epoch",
           "no epoch line, or no process to kill")
    print("  killed pid %d, %.1f s after spark-submit started" % killer.killed, flush=True)
    if run.rc != 0:
        expect_in(r"rank \d+ (on \S+ was lost|never arrived)", run.text, "the failure names the rank")
        fail("the job failed instead of running again (exit status %d)" % run.rc)
    expect_success(run, "the job")
    again = expect_in(r"job (\d+) failed and runs again with a new job id", run.text,
                      "the driver runs the job again")
    expect_in(r"rank \d+ on \S+ was lost", run.text, "the lost rank and its host are named")
    closing = expect_in(CLOSING, run.out, "train.py's closing line")
    expect(closing.group(1) != again.group(1), "under a new job id (%s, not %s)"
           % (closing.group(1), again.group(1)))
    expect(int(closing.group(2)) == 12000, "the closing line counts 12000 rows",
           closing.group(2))
    expect_in(r"in 2 attempt", closing.group(0), "the closing line says 2 attempts")
    expect_torch_model(model, "the model")
    if where == "local":
        expect_prompt_exit(run, CLOSING, "train.py")
    ok("the job took %.1f s" % run.seconds)
    done()


if __name__ == "__main__":
    main()

"""spark-real.LINE.rank_lost.{local,cluster}: a sync job whose rank is killed (SIGKILL)
mid-training runs again with a new job id and finishes with a model.

The test starts train.py (2 tasks, EPOCHS epochs; --seed 7919 marks its processes) and watches
the driver's output and, on local-cluster, the executors' logs, for the first epoch line; then
lib.RankKiller freezes the job's `sparktorch train` processes (SIGSTOP), so the kill cannot come
after the job ended however fast the machine, kills one and lets the other go on. Checks: the
driver says `failed and runs again with a new job id`, and its closing line says 12,000 rows in
2 attempts under another job id; the model loads with torch.jit.load; spark-submit exits
promptly (local). Should the job fail instead, the test still requires the output to name the
lost rank, and fails.

  rank_lost_test.py local|cluster
"""
import os
import re

from lib import (CLOSING, SPARK_DATA, RankKiller, check, done, expect, expect_in,
                 expect_prompt_exit, expect_success, expect_torch_model, fail, ok, setup, submit,
                 train_args)

EPOCHS = 8  # ~0.4 s each on 2 idle cores
SEED = "7919"  # marks this test's sparktorch train processes
EPOCH_LINE = re.compile(r"epoch 1/%d\b" % EPOCHS)


class FirstEpoch:
    """Whether the job's first epoch line has appeared, in the driver's output (on_line) or in
    an executor's log (local-cluster, where the tasks' stderr goes)."""

    def __init__(self):
        self.seen = False
        self.run = None
        self.killer = None

    def on_line(self, run, stream, line):
        self.run = run
        if EPOCH_LINE.search(line):
            self.seen = True
            self.killer.poke()

    def __call__(self):
        if self.seen or self.run is None:
            return self.seen
        for log in self.run.executor_logs():
            try:
                with open(log, errors="replace") as f:
                    if EPOCH_LINE.search(f.read()):
                        return True
            except OSError:
                continue
        return False


def main():
    where, master = setup("rank_lost")
    model = os.path.abspath("mlp.pt")
    check("a sync job on %s, one rank killed after its first epoch" % master)
    first_epoch = FirstEpoch()
    killer = first_epoch.killer = RankKiller(SEED, first_epoch).start()
    run = submit("train", master, train_args(os.path.join(SPARK_DATA, "train.parquet"), "sync",
                                             EPOCHS, model, more=["--seed", SEED]),
                 timeout=400, on_line=first_epoch.on_line)
    killer.stop()
    expect(killer.killed is not None, "a rank process was killed after the first epoch",
           killer.why)
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

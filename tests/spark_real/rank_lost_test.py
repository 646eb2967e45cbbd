"""spark-real.LINE.rank_lost.{local,cluster}: a sync job whose rank is killed (SIGKILL) in its
middle epoch runs again with a new job id from rank 0's last checkpoint and ends where an
uninterrupted run ends.

The test first trains without a kill (2 tasks, EPOCHS epochs, --seed 7919), then starts the same
train.py again and watches the driver's output for serve's line of epoch KILL_AFTER; then
lib.RankKiller freezes the job's `sparktorch train` processes (SIGSTOP; the seed marks them), so
the kill cannot come after the job ended however fast the machine, kills one and lets the other
go on. Checks: the driver says `failed and runs again with a new job id, from its last
checkpoint`, the second attempt resumes at epoch KILL_AFTER + 1 (rank 0 sends an epoch's
checkpoint before the epoch's line), and train.py's closing line says 12,000 rows in 2 attempts
(from epochs 1 and that epoch) under another job id; the model loads with torch.jit.load, and
its accuracy on test2k is within 0.01 of the uninterrupted run's; spark-submit exits promptly
(local). Should the job fail instead, the test still requires the output to name the lost rank,
and fails.

  rank_lost_test.py local|cluster
"""
import os
import re

from lib import (CLOSING, SPARK_DATA, RankKiller, binary_predictions, check, done, expect,
                 expect_in, expect_prompt_exit, expect_success, expect_torch_model, fail, ok,
                 setup, submit, test_labels, train_args)

EPOCHS = 8  # ~0.4 s each on 2 idle cores
KILL_AFTER = 4  # the middle epoch's line
SEED = "7919"  # marks this test's sparktorch train processes
EPOCH_LINE = re.compile(r"sparktorch info: epoch %d/%d\b" % (KILL_AFTER, EPOCHS))  # serve's


def accuracy(model):
    labels = test_labels()
    return sum(p == y for p, y in zip(binary_predictions(model), labels)) / len(labels)


class FirstEpoch:
    """Whether the driver's serve has logged epoch KILL_AFTER (on_line): it does once it has
    that epoch's checkpoint. (Rank 0's own line, `sparktorch[rank 0] info: epoch ...`, in the
    driver's output on local[2] and in an executor's log on local-cluster, comes before.)"""

    def __init__(self):
        self.seen = False
        self.killer = None

    def on_line(self, _run, _stream, line):
        if EPOCH_LINE.search(line):
            self.seen = True
            self.killer.poke()

    def __call__(self):
        return self.seen


def main():
    where, master = setup("rank_lost")
    model = os.path.abspath("mlp.pt")
    whole = os.path.abspath("whole.pt")
    source = os.path.join(SPARK_DATA, "train.parquet")
    check("a sync job on %s without a kill, for the accuracy to end at" % master)
    expect_success(submit("whole", master, train_args(source, "sync", EPOCHS, whole,
                                                       more=["--seed", SEED]), timeout=400),
                   "the uninterrupted job")
    uninterrupted = accuracy(whole)
    check("the same job, one rank killed after epoch %d of %d" % (KILL_AFTER, EPOCHS))
    first_epoch = FirstEpoch()
    killer = first_epoch.killer = RankKiller(SEED, first_epoch).start()
    run = submit("train", master, train_args(source, "sync", EPOCHS, model, more=["--seed", SEED]),
                 timeout=400, on_line=first_epoch.on_line)
    killer.stop()
    expect(killer.killed is not None, "a rank process was killed after epoch %d" % KILL_AFTER,
           killer.why)
    print("  killed pid %d, %.1f s after spark-submit started" % killer.killed, flush=True)
    if run.rc != 0:
        expect_in(r"rank \d+ (on \S+ was lost|never arrived)", run.text, "the failure names the rank")
        fail("the job failed instead of running again (exit status %d)" % run.rc)
    expect_success(run, "the job")
    again = expect_in(r"job (\d+) failed and runs again with a new job id, from its last "
                      r"checkpoint", run.text, "the driver runs the job again from a checkpoint")
    expect_in(r"rank \d+ on \S+ was lost", run.text, "the lost rank and its host are named")
    resumed = expect_in(r"\(attempt 2 of 2\): 2 sync tasks, serve at \S+, resuming at epoch "
                        r"(\d+) from the checkpoint", run.text, "the second attempt resumes")
    start = int(resumed.group(1))
    expect(start == KILL_AFTER + 1, "it resumes at epoch %d: rank 0 sends an epoch's checkpoint "
           "before its line" % (KILL_AFTER + 1), start)
    closing = expect_in(CLOSING, run.out, "train.py's closing line")
    expect(closing.group(1) != again.group(1), "under a new job id (%s, not %s)"
           % (closing.group(1), again.group(1)))
    expect(int(closing.group(2)) == 12000, "the closing line counts 12000 rows",
           closing.group(2))
    expect_in(r"in 2 attempts \(from epochs 1 and %d\)" % start, closing.group(0),
              "the closing line names the attempts and their first epochs")
    expect_torch_model(model, "the model")
    resumed_accuracy = accuracy(model)
    expect(abs(resumed_accuracy - uninterrupted) < 0.01, "test accuracy %.4f, within 0.01 of the "
           "uninterrupted run's %.4f" % (resumed_accuracy, uninterrupted))
    if where == "local":
        expect_prompt_exit(run, CLOSING, "train.py")
    ok("the job took %.1f s" % run.seconds)
    done()


if __name__ == "__main__":
    main()

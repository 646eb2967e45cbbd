"""spark-real.empty_partition.local: a sync job whose input has an empty partition trains.

train1.parquet is the 12,000 training rows in one file of one Parquet row group; Spark 2.4
splits the file in two (it is larger than the split size, total bytes / default parallelism),
and the split without the row group's start reads no rows. So with --partitions 2 (the input's
own count, kept as it is) rank 1 gets an empty stdin. DESIGN.md: "uneven and empty partitions
train correctly". Checks: the job succeeds; its summary has ranks 0 and 1 with 12,000 and 0
rows; the closing line counts 12,000 rows.

  empty_partition_test.py local
"""
import json
import os

from lib import (CLOSING, SPARK_DATA, check, done, expect, expect_in, expect_success, setup,
                 submit, train_args)


def main():
    _, master = setup("empty_partition")
    model = os.path.abspath("mlp.pt")
    check("train.py --mode sync --partitions 2 on one Parquet file read as 12,000 + 0 rows")
    run = submit("train", master, train_args(os.path.join(SPARK_DATA, "train1.parquet"), "sync",
                                             1, model, more=["--summary", "summary.jsonl"]),
                 timeout=300)
    expect_success(run, "train.py")
    closing = expect_in(CLOSING, run.out, "train.py's closing line")
    expect(int(closing.group(2)) == 12000, "it counts 12000 rows", closing.group(2))
    with open("summary.jsonl") as f:
        tasks = sorted((r["rank"], r["partition_rows"]) for r in map(json.loads, f) if "rank" in r)
    expect(tasks == [(0, 12000), (1, 0)], "rank 0 trained on 12000 rows and rank 1 on none",
           tasks)
    done()


if __name__ == "__main__":
    main()

"""spark-real.data, the fixture of the spark-real tests: prepare_data.py, run once by
spark-submit on local[2], writes the Spark sources they read into $SPARK_DATA from the
integration fixture's CSV rows ($DATA/train12k.csv, test2k.csv). It does nothing when they are
there already, made by this prepare_data.py from these inputs (a stamp file says so).

Checks: every source has its rows, in the partitions the tests rely on: train.parquet and
train.csv two non-empty ones, train1.parquet 12,000 and 0, test.parquet one, bad.csv 300 (rank
0, with the bad row) and 100, bad.parquet 300 and 100 in two files (part-00001 with the bad row),
decimal.parquet 4,000 rows in two files.
"""
import glob
import hashlib
import json
import os
import re
import shutil

from lib import DATA, SPARK_DATA, check, done, expect, expect_success, need_environment, submit

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "prepare_data.py")


def stamp():
    """What the sources are made from: the script's text and the inputs' sizes."""
    with open(SCRIPT, "rb") as f:
        made_by = hashlib.sha256(f.read()).hexdigest()
    inputs = {name: os.path.getsize(os.path.join(DATA, name))
              for name in ("train12k.csv", "test2k.csv")}
    return json.dumps({"script": made_by, "inputs": inputs}, sort_keys=True)


def main():
    need_environment()
    for name in ("train12k.csv", "test2k.csv"):
        expect(os.path.isfile(os.path.join(DATA, name)), "%s/%s is there (integration.data)"
               % (DATA, name))
    stamp_file = os.path.join(SPARK_DATA, "stamp.json")
    if os.path.isfile(stamp_file):
        with open(stamp_file) as f:
            if f.read() == stamp():
                print("the sources in %s are up to date" % SPARK_DATA)
                done()
                return
    shutil.rmtree(SPARK_DATA, ignore_errors=True)
    os.makedirs(SPARK_DATA)
    os.chdir(SPARK_DATA)
    check("prepare_data.py writes the sources into %s" % SPARK_DATA)
    run = submit("prepare", "local[2]", [SCRIPT, "--train", os.path.join(DATA, "train12k.csv"),
                                         "--test", os.path.join(DATA, "test2k.csv"),
                                         "--out", SPARK_DATA], timeout=400)
    expect_success(run, "prepare_data.py")
    wrote = dict(re.findall(r"^wrote \S+/([\w.]+): \d+ rows, partitions of (\[[\d, ]*\])",
                            run.out, re.MULTILINE))
    parts = {name: json.loads(counts) for name, counts in wrote.items()}
    train = parts.get("train.parquet", [])
    expect(len(train) == 2 and sum(train) == 12000 and min(train) > 0,
           "train.parquet: 12000 rows in 2 partitions", train)
    train = parts.get("train.csv", [])
    expect(len(train) == 2 and sum(train) == 12000 and min(train) > 0,
           "train.csv: 12000 rows in 2 partitions", train)
    expect(parts.get("train1.parquet") == [12000, 0],
           "train1.parquet: 12000 rows read as partitions of 12000 and 0",
           parts.get("train1.parquet"))
    expect(parts.get("test.parquet") == [2000], "test.parquet: 2000 rows in 1 partition",
           parts.get("test.parquet"))
    expect(parts.get("bad.csv") == [300, 100], "bad.csv: partitions of 300 and 100 rows",
           parts.get("bad.csv"))
    expect(parts.get("bad.parquet") == [300, 100],
           "bad.parquet: partitions of 300 and 100 rows", parts.get("bad.parquet"))
    files = sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(SPARK_DATA, "bad.parquet", "part-*.parquet")))
    expect(len(files) == 2 and files[1].startswith("part-00001-"),
           "bad.parquet: two files, part-00000 and part-00001", files)
    decimal = parts.get("decimal.parquet", [])
    expect(len(decimal) == 2 and sum(decimal) == 4000 and min(decimal) > 0,
           "decimal.parquet: 4000 rows in 2 partitions", decimal)
    with open(stamp_file, "w") as f:
        f.write(stamp())
    done()


if __name__ == "__main__":
    main()

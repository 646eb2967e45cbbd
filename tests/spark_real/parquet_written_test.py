"""spark-real.LINE.parquet_written.local: the Parquet files this Spark writes are read by
sparktorch's reader as pyarrow reads them (issue 26; sparktorch-formats(7), PARQUET).

parquet_written_job.py writes one small DataFrame (numbers of each type with nulls, an array of
doubles, a dense and a sparse vector) once per codec this Spark's writer has (none, snappy,
gzip, zstd, lz4, lz4_raw), with the v1 and v2 writers (data page v2, DELTA_BINARY_PACKED
integers, RLE booleans), with and without dictionaries: 24 files. Checks: Spark wrote every
case; tests/formats/parquet_conformance.py --files (parquet_dump, the reader's view of each
column, against pyarrow) reads every numeric column of every file, equal to pyarrow's values.

  parquet_written_test.py local
"""
import os
import subprocess
import sys

from lib import REPO, check, done, expect, expect_in, expect_success, setup, submit

CASES = 24  # 2 writer versions x 2 dictionary settings x 6 codecs


def main():
    _, master = setup("parquet_written")
    out = os.path.abspath("files")
    check("Spark writes the 24 cases")
    run = submit("write", master, [os.path.join(REPO, "tests", "spark_real",
                                                "parquet_written_job.py"), out], timeout=300)
    expect_success(run, "parquet_written_job.py")
    wrote = expect_in(r"^parquet_written: Spark \S+ wrote (\d+) files, refused (\d+) cases",
                      run.out, "the job's closing line")
    with open(os.path.join(out, "refused.txt")) as f:
        refused = f.read().strip()
    expect(int(wrote.group(1)) == CASES and not refused, "every case written", refused)

    check("every numeric column of every file read as pyarrow reads it")
    # This line's venv Python sees the base venv's pyarrow (examples/install_python.sh).
    done_check = subprocess.run(
        [sys.executable, os.path.join(REPO, "tests", "formats", "parquet_conformance.py"),
         "--dump", os.path.join(os.environ["BUILD"], "tests", "parquet_dump"), "--files", out],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, check=False)
    text = done_check.stdout.decode()
    sys.stdout.write(text)
    expect(done_check.returncode == 0, "parquet_conformance.py --files passed", text[-800:])
    read = expect_in(r"^\S+: (\d+) files; (\d+) column chunks read, (\d+) equal to pyarrow's.*; "
                     r"(\d+) refused$", text, "its summary")
    expect(read.group(1) == str(CASES) and read.group(2) == read.group(3) != "0"
           and read.group(4) == "0",
           "24 files, every column chunk read and equal, none refused", read.group(0))
    done()


if __name__ == "__main__":
    main()

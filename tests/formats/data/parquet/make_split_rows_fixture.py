"""Writes split_rows_v1.parquet with pyarrow: rows of a list column that DATA_PAGE (v1) pages
split, a row's first values at the end of one page and the rest at the start of the next, as
Arrow C++ writes them (a page ends after a write batch of levels, not at a row's end).

Regenerate (from the repository root; pyarrow 18.1.0 wrote the committed file):

    /opt/sparktorch-python/base/bin/python tests/formats/data/parquet/make_split_rows_fixture.py

50 rows in one row group, UNCOMPRESSED, PLAIN, no dictionary, no statistics; write batches of 3
levels and a 32-byte page size limit make pages of at most 6 levels (59 for `e`'s 350, 50 of
which start inside a row):

    label  int32 required   the row number
    e      list<double>     7 values a row: row * 10 + k, k = 0..6
    f      list<double>     3 values a row: -(row * 10 + k), k = 0..2; in row 4 the second null
"""

import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = 50


def e_values(row):
    return [float(row * 10 + k) for k in range(7)]


def f_values(row):
    return [None if (row == 4 and k == 1) else -float(row * 10 + k) for k in range(3)]


def main():
    table = pa.table({
        "label": pa.array(range(ROWS), pa.int32()),
        "e": pa.array([e_values(r) for r in range(ROWS)], pa.list_(pa.float64())),
        "f": pa.array([f_values(r) for r in range(ROWS)], pa.list_(pa.float64())),
    }).cast(pa.schema([pa.field("label", pa.int32(), nullable=False),
                       pa.field("e", pa.list_(pa.float64())),
                       pa.field("f", pa.list_(pa.float64()))]))
    path = os.path.join(HERE, "split_rows_v1.parquet")
    pq.write_table(table, path, compression="NONE", use_dictionary=False,
                   write_statistics=False, data_page_version="1.0", data_page_size=32,
                   write_batch_size=3, row_group_size=ROWS)
    meta = pq.ParquetFile(path).metadata
    print("%s: %d rows, %d row group(s), %d bytes" % (path, meta.num_rows, meta.num_row_groups,
                                                     os.path.getsize(path)))


if __name__ == "__main__":
    main()

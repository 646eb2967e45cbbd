"""Writes brotli_arrow.parquet beside itself: 12 rows of BROTLI pages from Arrow C++'s writer.

Run with a Python that has pyarrow (examples/install_python.sh's base environment has 18.1.0):

    /opt/sparktorch-python/base/bin/python tests/formats/data/parquet_codecs/make_brotli_fixture.py

Row i (0-based): label i % 3, x i / 2, e [i, -i / 4], id "rII" (two digits). No dictionary and
64-byte data pages, so that each column chunk holds several BROTLI data pages.
"""

import os

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 12
table = pa.table({
    "label": pa.array([float(i % 3) for i in range(ROWS)]),
    "x": pa.array([i / 2 for i in range(ROWS)]),
    "e": pa.array([[float(i), -i / 4] for i in range(ROWS)], type=pa.list_(pa.float64())),
    "id": pa.array(["r%02d" % i for i in range(ROWS)]),
})
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "brotli_arrow.parquet")
pq.write_table(table, path, compression="brotli", use_dictionary=False, data_page_size=64,
               write_batch_size=4)
metadata = pq.ParquetFile(path).metadata
print(path, metadata.created_by, metadata.num_rows, "rows,",
      {metadata.row_group(0).column(i).compression for i in range(metadata.num_columns)})

"""Writes encodings_v1.parquet and encodings_v2.parquet with pyarrow: the value encodings besides
PLAIN and dictionaries that sparktorch reads, in data pages v1 and v2.

Regenerate (from the repository root; pyarrow 18.1.0 wrote the committed files):

    /opt/sparktorch-python/base/bin/python tests/formats/data/parquet/make_encodings_fixtures.py

Both files hold the same 300 rows in 3 row groups (128, 128, 44), in pages of about 256 bytes,
SNAPPY-compressed, with these columns (README.md lists them too):

    label     int32 required     DELTA_BINARY_PACKED (row number * 3 - 100)
    i64       int64 optional     DELTA_BINARY_PACKED, with nulls and both extremes, whose deltas
                                 wrap and need 64-bit miniblocks
    i32s      int32 optional     BYTE_STREAM_SPLIT, with nulls and both extremes
    i64s      int64 optional     BYTE_STREAM_SPLIT
    u32       uint32 optional    DELTA_BINARY_PACKED (UINT_32 on INT32), values past 2^31
    u64       uint64 required    BYTE_STREAM_SPLIT (UINT_64 on INT64), values past 2^63
    f32       float optional     BYTE_STREAM_SPLIT, with nulls
    f64       double required    BYTE_STREAM_SPLIT
    b         bool optional      RLE, with nulls
    e         list<double>       BYTE_STREAM_SPLIT elements, 0 to 3 a row, never null
    features  Spark ML vector    struct<type: int8, size: int32, indices: list<int32>,
                                 values: list<double>>: type and size DELTA_BINARY_PACKED,
                                 indices DELTA_BINARY_PACKED, values BYTE_STREAM_SPLIT; every
                                 third row sparse (size 5)
    id        string             DELTA_BYTE_ARRAY, which sparktorch does not read

Beside each, NAME.expected.jsonl has one JSON object a row (pyarrow's to_pylist, vectors
expanded to {"dense": [...]}).
"""

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = 300


def rows():
    out = []
    for r in range(ROWS):
        null = r % 7 == 3
        extremes = [-2 ** 63, 2 ** 63 - 1, 0, -1]
        i64 = extremes[r % 4] if r % 10 < 4 else r * 1_000_003 - 7 * r * r
        i32 = [-2 ** 31, 2 ** 31 - 1][r % 2] if r % 9 == 0 else r * 37 - 5000
        if r % 3 == 0:
            indices = [k for k in range(5) if (r + k) % 2 == 0]
            vector = {"type": 0, "size": 5, "indices": indices,
                      "values": [r + k * 0.25 for k in indices]}
            dense = [0.0] * 5
            for k in indices:
                dense[k] = r + k * 0.25
        else:
            dense = [r * 0.5, -r / 8.0, 1.0, 0.0, r % 5 * 1.5]
            vector = {"type": 1, "size": None, "indices": None, "values": dense}
        out.append({
            "label": r * 3 - 100,
            "i64": None if null else i64,
            "i32s": None if null else i32,
            "i64s": i64,
            "u32": None if null else (i32 + 2 ** 31),
            "u64": i64 + 2 ** 63,
            "f32": None if r % 5 == 1 else (r - 150) / 16.0,
            "f64": r * 0.1 - 3.0,
            "b": None if r % 6 == 5 else (r * 7) % 3 == 0,
            "e": [r + k / 4.0 for k in range(r % 4)],
            "features": vector,
            "id": f"row-{r:04d}",
            "_dense": dense,
        })
    return out


SCHEMA = pa.schema([
    pa.field("label", pa.int32(), nullable=False),
    pa.field("i64", pa.int64()),
    pa.field("i32s", pa.int32()),
    pa.field("i64s", pa.int64()),
    pa.field("u32", pa.uint32()),
    pa.field("u64", pa.uint64(), nullable=False),
    pa.field("f32", pa.float32()),
    pa.field("f64", pa.float64(), nullable=False),
    pa.field("b", pa.bool_()),
    pa.field("e", pa.list_(pa.float64())),
    pa.field("features", pa.struct([
        pa.field("type", pa.int8(), nullable=False),
        pa.field("size", pa.int32()),
        pa.field("indices", pa.list_(pa.field("element", pa.int32(), nullable=False))),
        pa.field("values", pa.list_(pa.field("element", pa.float64(), nullable=False))),
    ])),
    pa.field("id", pa.string()),
])

ENCODINGS = {
    "label": "DELTA_BINARY_PACKED",
    "i64": "DELTA_BINARY_PACKED",
    "i32s": "BYTE_STREAM_SPLIT",
    "i64s": "BYTE_STREAM_SPLIT",
    "u32": "DELTA_BINARY_PACKED",
    "u64": "BYTE_STREAM_SPLIT",
    "f32": "BYTE_STREAM_SPLIT",
    "f64": "BYTE_STREAM_SPLIT",
    "b": "RLE",
    "e.list.element": "BYTE_STREAM_SPLIT",
    "features.type": "DELTA_BINARY_PACKED",
    "features.size": "DELTA_BINARY_PACKED",
    "features.indices.list.element": "DELTA_BINARY_PACKED",
    "features.values.list.element": "BYTE_STREAM_SPLIT",
    "id": "DELTA_BYTE_ARRAY",
}


def main():
    data = rows()
    table = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "_dense"} for r in data],
                                 schema=SCHEMA)
    for version in ("1", "2"):
        name = f"encodings_v{version}"
        path = os.path.join(HERE, name + ".parquet")
        pq.write_table(table, path, compression="snappy", data_page_version=f"{version}.0",
                       use_dictionary=False, column_encoding=ENCODINGS, row_group_size=128,
                       data_page_size=256, write_statistics=False)
        back = pq.read_table(path).to_pylist()
        with open(os.path.join(HERE, name + ".expected.jsonl"), "w") as out:
            for row, written in zip(back, data):
                row["features"] = {"dense": written["_dense"]}
                out.write(json.dumps(row, separators=(",", ":")) + "\n")
        m = pq.ParquetFile(path).metadata
        print(f"{name}.parquet: {os.path.getsize(path)} bytes, {m.num_row_groups} row groups")
        for i in range(m.num_columns):
            c = m.row_group(0).column(i)
            print(f"  {c.path_in_schema}: {c.physical_type} {c.encodings}")


if __name__ == "__main__":
    main()

"""Arrow record batches (what Spark Connect's `mapInArrow` gives a task) as the binary's rows,
and its answers back as Arrow arrays, with numpy over the batches' buffers: no Python loop over
rows.

The rows are records of the `float32` format (sparktorch-formats(7)): each row's numbers, label
first where there is one, as a little-endian uint32 count and the numbers as little-endian
float32: a batch's records are one numpy array, with no text and no base64.
"""
import numpy as np
import pyarrow as pa


class BadRows(ValueError):
    """A batch holds a row the binary cannot be given (a null, vectors of different sizes)."""


def float32_records(values):
    """The float32 records of `values` (a 2-D array: a row of numbers a record), a bytes-like
    object (a memoryview: no copy into a bytes object)."""
    n, width = np.shape(values)
    records = np.empty((n, width + 1), dtype="<f4")
    records.view("<u4")[:, 0] = width
    records[:, 1:] = values
    return records.reshape(-1).view(np.uint8).data


def _first_null(array):
    return int(np.flatnonzero(np.asarray(array.is_null()))[0])


def _equal_lists(array, name, what):
    """(values, length) of a list array whose lists are all `length` long; raises BadRows."""
    offsets = np.asarray(array.offsets)
    lengths = np.diff(offsets)
    if len(lengths) and (lengths != lengths[0]).any():
        row = int(np.flatnonzero(lengths != lengths[0])[0])
        raise BadRows("column %s: row %d of this batch has %d %s, row 1 has %d"
                      % (name, row + 1, lengths[row], what, lengths[0]))
    values = array.values.slice(offsets[0], offsets[-1] - offsets[0]) if len(offsets) else \
        array.values
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float32), \
        int(lengths[0]) if len(lengths) else 0


def _vectors(array, name):
    """A Spark ML vector column (VectorUDT's struct: type, size, indices, values) as a dense
    2-D float32 array."""
    n = len(array)
    kinds = np.asarray(array.field("type").to_numpy(zero_copy_only=False))
    sparse = kinds == 0
    values_list = array.field("values")
    if not sparse.any():
        values, length = _equal_lists(values_list, name, "values")
        return values.reshape(n, length)
    sizes = np.asarray(array.field("size").fill_null(0).to_numpy(zero_copy_only=False))
    dense_lengths = np.diff(np.asarray(values_list.offsets))
    widths = np.where(sparse, sizes, dense_lengths)
    if (widths != widths[0]).any():
        row = int(np.flatnonzero(widths != widths[0])[0])
        raise BadRows("column %s: row %d of this batch is a vector of size %d, row 1 of size %d"
                      % (name, row + 1, widths[row], widths[0]))
    out = np.zeros((n, int(widths[0])), dtype=np.float32)
    offsets = np.asarray(values_list.offsets)
    flat = np.asarray(values_list.values.to_numpy(zero_copy_only=False), dtype=np.float32)
    counts = np.diff(offsets)
    rows = np.repeat(np.arange(n), counts)
    at = np.arange(offsets[-1] - offsets[0]) - np.repeat(offsets[:-1] - offsets[0], counts)
    index_list = array.field("indices")
    index_offsets = np.asarray(index_list.offsets)
    indices = np.asarray(index_list.values.to_numpy(zero_copy_only=False))
    # A sparse row's k-th value goes to its k-th index; a dense row's to k.
    column = at.copy()
    sparse_values = np.repeat(sparse, counts)
    index_at = np.repeat(index_offsets[:-1], counts) + at
    column[sparse_values] = indices[index_at[sparse_values]]
    out[rows, column] = flat[offsets[0]:offsets[-1]]
    return out


def column_matrix(array, name, kind):
    """One column of a batch (a pyarrow array of the column's `kind`: 'vector', 'number' or
    'array') as a 2-D float32 array, a row a row. Raises BadRows for a null."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count:
        raise BadRows("column %s is null in row %d of this batch" % (name, _first_null(array) + 1))
    if kind == "vector":
        return _vectors(array, name)
    if kind == "array":
        if array.values.null_count:
            raise BadRows("column %s holds a null number" % name)
        values, length = _equal_lists(array, name, "numbers")
        return values.reshape(len(array), length)
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, 1)


def batch_matrix(batch, columns):
    """The numbers of `columns` ([(name, kind)], in order) of `batch`, side by side."""
    parts = [column_matrix(batch.column(batch.schema.get_field_index(name)), name, kind)
             for name, kind in columns]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def answers_array(text, count, vector_out):
    """The binary's answers to `count` rows (`text`: its stdout lines for them, bytes) as a
    pyarrow array, as the classic path's SQL makes them: with `vector_out` Spark ML dense
    vectors (VectorUDT's struct); else doubles, the output itself where the model has one, the
    index of the largest (the class) where it has several. An empty line (a row skipped under
    on_bad_row="skip") is a null."""
    if text and not text.endswith(b"\n"):
        raise BadRows("the binary's answers end inside a line")
    lines = np.array(text[:-1].split(b"\n") if text else [], dtype=bytes)
    if len(lines) != count:
        raise BadRows("the binary answered %d rows of %d" % (len(lines), count))
    empty = lines == b""
    given = lines[~empty]
    width = int(np.char.count(given[:1], b",")[0]) + 1 if len(given) else 1
    if (np.char.count(given, b",") != width - 1).any():
        raise BadRows("the binary's answers have different numbers of outputs")
    values = np.zeros((count, width))
    if len(given):
        values[~empty] = np.array(b",".join(given).split(b","),
                                  dtype=np.float64).reshape(len(given), width)
    if vector_out:
        return dense_vectors(values, empty)
    single = values[:, 0] if width == 1 else values.argmax(axis=1).astype(np.float64)
    return pa.array(single, type=pa.float64(), mask=empty)


def dense_vectors(values, nulls):
    """Spark ML dense vectors (VectorUDT's struct) from the rows of `values` (2-D), null where
    `nulls` (a boolean array) is true."""
    n, width = values.shape
    offsets = np.arange(n + 1, dtype=np.int32) * width
    lists = pa.ListArray.from_arrays(pa.array(offsets),
                                     pa.array(values.reshape(-1), type=pa.float64()))
    return pa.StructArray.from_arrays(
        [pa.array(np.ones(n, dtype=np.int8)), pa.nulls(n, pa.int32()),
         pa.nulls(n, pa.list_(pa.int32())), lists],
        names=["type", "size", "indices", "values"], mask=pa.array(nulls))

"""Spark rows as sparktorch's compact rows (formats/README.md, section 1).

A compact row is `[ID<TAB>]BASE64`: base64 of the row's columns as little-endian float32, here
the label first (none, one number, or a vector's values) and then the features. Features come
from one Spark ML vector column (dense or sparse: anything with `toArray()`), from one numeric
column, or from several numeric columns assembled in order. Rows are exact (no decimal text) and
sparktorch reads them without parsing a number.

`RowEncoder` works on plain tuples, the rows of `df.select(label, *features)`, so it needs no
Spark; vectors are duck-typed.
"""
import base64
import struct

try:
    import numpy
except ImportError:  # PySpark's ML vectors need numpy; plain numeric columns do not
    numpy = None


class RowError(ValueError):
    """A row sparktorch could not be given: a null, a value that is not a number, a vector of
    another size than the first row's."""


def _values(value, what):
    """A cell as a list (or numpy array) of floats."""
    if value is None:
        raise RowError("%s is null" % what)
    if hasattr(value, "toArray"):
        return value.toArray()
    if isinstance(value, (list, tuple)) or (numpy is not None and isinstance(value, numpy.ndarray)):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RowError("%s is %r, not a number or a vector" % (what, value))
    return (value,)


_NUMBERS = (float, int)  # exact types: a bool is not a feature


def pack(values):
    """base64 text of `values` (floats) as little-endian float32."""
    if numpy is not None and not isinstance(values, (list, tuple)):
        raw = numpy.asarray(values, dtype="<f4").tobytes()
    else:
        raw = struct.pack("<%df" % len(values), *values)
    return base64.b64encode(raw).decode("ascii")


class RowEncoder:
    """Encodes tuples `(label, feature, feature, ...)` (or `(feature, ...)` without a label) as
    compact rows. `label_width` is 0 (no label), 1, or a vector label's size; `feature_names`
    name the feature cells in errors. The first row fixes the number of features, and later
    rows must have as many."""

    def __init__(self, label_width, feature_names):
        self.label_width = label_width
        self.feature_names = list(feature_names)
        self.num_features = None

    def _parts(self, cells):
        """The cells as sequences of floats, label first; RowError names a bad cell."""
        parts = []
        for n, cell in enumerate(cells):
            k = n - (1 if self.label_width else 0)
            what = ("the label" if k < 0 else "column %s" % (
                self.feature_names[k] if k < len(self.feature_names) else k))
            values = _values(cell, what)
            if isinstance(cell, (list, tuple)):  # an array column: check what it holds
                for v in cell:
                    if type(v) not in _NUMBERS:
                        raise RowError("%s holds %r, not a number" % (what, v))
            parts.append(values)
        if self.label_width and len(parts[0]) != self.label_width:
            raise RowError("the label has %d values, not %d" % (len(parts[0]), self.label_width))
        return parts

    def encode(self, row, row_id=None):
        """The compact line for `row` (with `row_id` before a tab when given). Raises RowError
        naming the column at fault."""
        cells = tuple(row)
        if self.label_width <= 1 and all(type(c) in _NUMBERS for c in cells):
            values = cells  # numeric columns (and a number label): packed in one call
        else:
            parts = self._parts(cells)
            if numpy is not None:
                values = numpy.concatenate([numpy.asarray(p, dtype="<f4").ravel() for p in parts])
            else:
                values = [float(v) for p in parts for v in p]
        features = len(values) - self.label_width
        if self.num_features is None:
            self.num_features = features
        elif features != self.num_features:
            raise RowError("the row has %d features; the first row had %d"
                           % (features, self.num_features))
        try:
            line = pack(values)
        except OverflowError:
            raise RowError("a value is too large for float32") from None
        return line if row_id is None else "%s\t%s" % (row_id, line)


def parse_prediction(text):
    """A prediction record's value (`--prediction vector` or `probabilities`) as floats."""
    return [float(v) for v in text.split(",")]

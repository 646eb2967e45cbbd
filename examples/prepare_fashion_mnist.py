#!/usr/bin/env python3
"""Write Fashion-MNIST as rows that `sparktorch train` and `sparktorch predict` read.

Reads the idx files of Debian's `dataset-fashion-mnist` package and writes one row per
image, label first. Pixels are written as p/255; the text formats round to at most 4
decimals with trailing zeros stripped (`0`, `1`, `0.502`, `0.0039`). With --raw they are the
bytes as stored, the integers 0-255, unscaled (as SparkTorch's own example feeds them).

Formats (--format):
  csv      label,p1,...,p784
  libsvm   label i:v ...          (1-based indices, non-zero pixels only)
  vector   label,[v1,...,v784]    (Spark ML's dense vector toString, after the label)
  jsonl    {"label": 3, "features": [v1,...,v784]}
  compact  base64 of struct.pack('<785f', label, *pixels), pixels as float32 of p/255

Python 3.8+ standard library only, so it runs wherever Spark's Python does.

  python3 examples/prepare_fashion_mnist.py --split train --out out/fashion_train.csv
  python3 examples/prepare_fashion_mnist.py --split test --limit 100 --format libsvm
"""

import argparse
import base64
import gzip
import operator
import os
import struct
import sys
from itertools import compress

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049
FORMATS = ("csv", "libsvm", "vector", "jsonl", "compact")


def pixel_text(p):
    """p/255 with at most 4 decimals, trailing zeros stripped: 0 -> '0', 128 -> '0.502'."""
    return ("%.4f" % (p / 255.0)).rstrip("0").rstrip(".")


PIXEL = [pixel_text(p) for p in range(256)]
PIXEL_F32 = [struct.pack("<f", p / 255.0) for p in range(256)]


def read_idx(path, magic):
    """Returns (count, dims, payload) of a gzip'd idx file; raises SystemExit naming the file."""
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit("prepare_fashion_mnist: cannot read %s: %s "
                 "(install Debian's dataset-fashion-mnist or pass --data-dir)" % (path, e))
    if len(data) < 8 or struct.unpack(">I", data[:4])[0] != magic:
        sys.exit("prepare_fashion_mnist: %s: not an idx file with magic %d" % (path, magic))
    ndims = data[3]
    dims = struct.unpack(">%dI" % ndims, data[4:4 + 4 * ndims])
    payload = memoryview(data)[4 + 4 * ndims:]
    size = 1
    for d in dims:
        size *= d
    if len(payload) != size:
        sys.exit("prepare_fashion_mnist: %s: expected %d bytes of data, found %d"
                 % (path, size, len(payload)))
    return dims[0], dims[1:], payload


def load(data_dir, split, limit):
    """Returns (labels, images, features): labels and images as bytes, one image per `features` bytes."""
    images_file, labels_file = FILES[split]
    n_images, shape, images = read_idx(os.path.join(data_dir, images_file), IMAGES_MAGIC)
    n_labels, _, labels = read_idx(os.path.join(data_dir, labels_file), LABELS_MAGIC)
    if n_images != n_labels:
        sys.exit("prepare_fashion_mnist: %d images but %d labels" % (n_images, n_labels))
    features = 1
    for d in shape:
        features *= d
    n = n_images if limit is None else min(limit, n_images)
    return bytes(labels[:n]), bytes(images[:n * features]), features


def row_csv(label, pixels):
    return "%d,%s\n" % (label, ",".join([PIXEL[p] for p in pixels]))


INDEX_COLON = ["%d:" % i for i in range(1, 785)]


def row_libsvm(label, pixels):
    # compress() keeps the non-zero pixels and their "i:" prefixes; the rest are C loops,
    # twice as fast as formatting each term.
    terms = " ".join(map(operator.add, compress(INDEX_COLON, pixels),
                         map(PIXEL.__getitem__, compress(pixels, pixels))))
    return "%d %s\n" % (label, terms) if terms else "%d\n" % label


def row_vector(label, pixels):
    return "%d,[%s]\n" % (label, ",".join([PIXEL[p] for p in pixels]))


def row_jsonl(label, pixels):
    return '{"label": %d, "features": [%s]}\n' % (label, ",".join([PIXEL[p] for p in pixels]))


def row_compact(label, pixels):
    raw = struct.pack("<f", float(label)) + b"".join(map(PIXEL_F32.__getitem__, pixels))
    return base64.b64encode(raw).decode("ascii") + "\n"


ROW_WRITERS = {
    "csv": row_csv,
    "libsvm": row_libsvm,
    "vector": row_vector,
    "jsonl": row_jsonl,
    "compact": row_compact,
}


def open_out(path):
    """Returns a text stream for `path` ('-' or None: stdout; a .gz suffix: gzip)."""
    if path in (None, "-"):
        return sys.stdout
    if path.endswith(".gz"):
        return gzip.open(path, "wt", encoding="ascii", newline="\n", compresslevel=6)
    return open(path, "w", encoding="ascii", newline="\n", buffering=1 << 20)


def write_rows(out, labels, images, features, fmt):
    row = ROW_WRITERS[fmt]
    INDEX_COLON.extend("%d:" % i for i in range(len(INDEX_COLON) + 1, features + 1))
    chunk = []
    for i, label in enumerate(labels):
        chunk.append(row(label, images[i * features:(i + 1) * features]))
        if len(chunk) == 1000:
            out.write("".join(chunk))
            chunk = []
    out.write("".join(chunk))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write Fashion-MNIST rows for sparktorch "
                    "(label first, pixels as p/255, or 0-255 with --raw).")
    parser.add_argument("--split", choices=sorted(FILES), default="train")
    parser.add_argument("--format", choices=FORMATS, default="csv")
    parser.add_argument("--limit", type=int, metavar="N", help="write only the first N rows")
    parser.add_argument("--out", metavar="FILE",
                        help="output file (default: stdout; a .gz suffix writes gzip)")
    parser.add_argument("--labels-out", metavar="FILE", help="also write one label per line here")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                        help="folder holding the idx .gz files (default: %(default)s)")
    parser.add_argument("--raw", action="store_true",
                        help="write pixels unscaled, as the integers 0-255")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 0:
        parser.error("--limit must be >= 0")

    if args.raw:
        PIXEL[:] = [str(p) for p in range(256)]
        PIXEL_F32[:] = [struct.pack("<f", float(p)) for p in range(256)]
    labels, images, features = load(args.data_dir, args.split, args.limit)
    try:
        out = open_out(args.out)
        try:
            write_rows(out, labels, images, features, args.format)
            out.flush()
        finally:
            if out is not sys.stdout:
                out.close()
        if args.labels_out:
            with open(args.labels_out, "w", encoding="ascii", newline="\n") as f:
                f.write("".join("%d\n" % label for label in labels))
    except BrokenPipeError:
        # A reader such as `head` closed the pipe: stop quietly, as cat would.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

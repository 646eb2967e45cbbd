"""sparktorch's stdout records (sparktorch-formats(7), RECORDS): split them, reassemble the model.

Every line sparktorch writes on stdout is a record: P (a prediction), M (a model chunk), E (the
end of the model) or S (a summary). `read_records` splits a stream of them and verifies the
model's chunks and checksum, so that a model assembled from the records of a Spark job is the
model the binary wrote, or an error.
"""
import base64
import json
import zlib

CHUNK = 786384  # raw model bytes per M record


class Records:
    """What a record stream held: predictions [(id or None, value)], the model (bytes) or None,
    and the summaries (dicts), each in stream order."""

    def __init__(self, predictions, model, summaries):
        self.predictions = predictions
        self.model = model
        self.summaries = summaries


def read_records(lines):
    """Splits sparktorch records (lines with or without their newline). Raises ValueError naming
    the line for anything malformed: an unknown record, chunks out of sequence, a chunk or a
    model whose CRC-32 does not match, a model without its end record, a second model."""
    predictions, chunks, summaries, model, count = [], [], [], None, None
    for n, line in enumerate(lines, 1):
        tag, _, rest = line.rstrip("\n").partition("\t")
        f = rest.split("\t")
        if tag in ("M", "E") and model is not None:
            raise ValueError("line %d: a second model" % n)
        if tag == "P" and len(f) in (1, 2):
            predictions.append((f[0], f[1]) if len(f) == 2 else (None, f[0]))
        elif tag == "M" and len(f) == 4:
            if count not in (None, f[1]) or int(f[0]) != len(chunks):
                raise ValueError("line %d: model chunk %s out of sequence" % (n, f[0]))
            count, chunk = f[1], base64.b64decode(f[3], validate=True)
            if "%08x" % zlib.crc32(chunk) != f[2]:
                raise ValueError("line %d: model chunk %s is corrupt (CRC-32 %08x, the record "
                                 "says %s)" % (n, f[0], zlib.crc32(chunk), f[2]))
            chunks.append(chunk)
        elif tag == "E" and len(f) == 3:
            model = b"".join(chunks)
            if f != [count or "0", str(len(model)), "%08x" % zlib.crc32(model)] \
                    or f[0] != str(len(chunks)):
                raise ValueError("line %d: model incomplete or corrupt: %d chunks, %d bytes, "
                                 "CRC-32 %08x; the end record says %s"
                                 % (n, len(chunks), len(model), zlib.crc32(model), " ".join(f)))
        elif tag == "S":
            summaries.append(json.loads(rest))
        else:
            raise ValueError("line %d: not a sparktorch record: %r" % (n, line[:40]))
    if chunks and model is None:
        raise ValueError("model has %d of %s chunks and no end record" % (len(chunks), count))
    return Records(predictions, model, summaries)


def write_model(model, out):
    """Writes `model` (bytes) to the text stream `out` as M records and one E record."""
    count = (len(model) + CHUNK - 1) // CHUNK
    for seq in range(count):
        chunk = model[seq * CHUNK:(seq + 1) * CHUNK]
        out.write("M\t%d\t%d\t%08x\t%s\n" % (seq, count, zlib.crc32(chunk),
                                            base64.b64encode(chunk).decode("ascii")))
    out.write("E\t%d\t%d\t%08x\n" % (count, len(model), zlib.crc32(model)))

#!/usr/bin/env python3
"""PyTorch baseline for tests/bench/compare_python.sh: the same work as `sparktorch train`
and `sparktorch predict`, done the way a PyTorch user would do it in Python.

  torch_baseline.py train   [--input FILE] --output MODEL.pt [--epochs 1] [--batch-size 64]
                            [--lr 0.001] [--threads 1] [--seed 0]
  torch_baseline.py predict --model MODEL.pt [--input FILE] [--batch-size 1024] [--threads 1]

Rows are CSV, label in column 0 then the features (as examples/prepare_fashion_mnist.py
writes them); --input defaults to stdin. `train` fits a 784-256-256-10 MLP
(nn.Sequential of Linear/ReLU) with Adam and cross-entropy, reshuffling every epoch, and saves
it as TorchScript. `predict` runs any TorchScript model (for example one sparktorch trained)
and writes the argmax of each row's output, one line per row, on stdout. Progress and timings
go to stderr; `train` writes a one-line JSON summary on stdout.

Needs PyTorch and NumPy: run it with /usr/bin/python3 on Debian (python3-torch).
"""

import argparse
import json
import sys
import time

START = time.perf_counter()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402


def log(message):
    print("torch_baseline: %s" % message, file=sys.stderr, flush=True)


def read_csv(path):
    """Returns (float32 array rows x columns, reader name) with the fastest reader at hand.

    Measured on the 60,000-row Fashion-MNIST CSV (NumPy 1.24, 2 cores): np.loadtxt 3.5 s (its
    parser is C since NumPy 1.23), np.fromstring 7.6 s, np.array(bytes.split()) 16.7 s.
    pandas' C engine is in the same class as loadtxt and is preferred when installed.
    """
    source = sys.stdin.buffer if path in (None, "-") else path
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        frame = pandas.read_csv(source, header=None, dtype=np.float32, engine="c")
        return frame.to_numpy(), "pandas.read_csv"
    if tuple(int(x) for x in np.__version__.split(".")[:2]) >= (1, 23):
        return np.loadtxt(source, delimiter=",", dtype=np.float32, ndmin=2), "np.loadtxt"
    if source is sys.stdin.buffer:
        text = source.read()
    else:
        with open(source, "rb") as f:
            text = f.read()
    columns = text[:text.find(b"\n")].count(b",") + 1
    flat = np.fromstring(text.replace(b"\n", b","), dtype=np.float32, sep=",")
    return flat.reshape(-1, columns), "np.fromstring"


def load_rows(path, has_label):
    started = time.perf_counter()
    data, reader = read_csv(path)
    if data.shape[0] == 0:
        sys.exit("torch_baseline: no rows in %s" % (path or "stdin"))
    if has_label:
        features = torch.from_numpy(np.ascontiguousarray(data[:, 1:]))
        labels = torch.from_numpy(data[:, 0].astype(np.int64))
    else:
        features, labels = torch.from_numpy(data), None
    seconds = time.perf_counter() - started
    log("read %d rows x %d features with %s in %.2f s"
        % (features.shape[0], features.shape[1], reader, seconds))
    return features, labels, seconds


def build_mlp(inputs, hidden, classes):
    layers, width = [], inputs
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    layers.append(nn.Linear(width, classes))
    return nn.Sequential(*layers)


def train(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    features, labels, read_seconds = load_rows(args.input, has_label=True)
    rows = features.shape[0]
    model = build_mlp(features.shape[1], args.hidden, args.classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()

    train_started = time.perf_counter()
    model.train()
    for epoch in range(1, args.epochs + 1):
        epoch_started = time.perf_counter()
        order = torch.randperm(rows)
        total, batches = 0.0, 0
        for begin in range(0, rows, args.batch_size):
            index = order[begin:begin + args.batch_size]
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(features[index]), labels[index])
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        seconds = time.perf_counter() - epoch_started
        log("epoch %d/%d loss %.4f %.0f rows/s" % (epoch, args.epochs, total / batches, rows / seconds))
    train_seconds = time.perf_counter() - train_started

    torch.jit.script(model).save(args.output)
    summary = {
        "rows": rows,
        "epochs": args.epochs,
        "train_loss": total / batches,
        "read_seconds": round(read_seconds, 3),
        "train_seconds": round(train_seconds, 3),
        "samples_per_second": round(rows * args.epochs / train_seconds, 1),
        "seconds_since_start": round(time.perf_counter() - START, 3),
    }
    print(json.dumps(summary), flush=True)


def predict(args):
    torch.set_num_threads(args.threads)
    model = torch.jit.load(args.model, map_location="cpu")
    model.eval()
    features, _, read_seconds = load_rows(args.input, has_label=not args.no_label)
    if args.input_shape:
        features = features.reshape([-1] + args.input_shape)
    started = time.perf_counter()
    predictions = []
    with torch.inference_mode():
        for begin in range(0, features.shape[0], args.batch_size):
            output = model(features[begin:begin + args.batch_size])
            if isinstance(output, (tuple, list)):
                output = output[0]
            predictions.append(output.argmax(dim=1))
    predicted = torch.cat(predictions).tolist()
    seconds = time.perf_counter() - started
    sys.stdout.write("".join("%d\n" % p for p in predicted))
    sys.stdout.flush()
    log("predicted %d rows in %.2f s (%.0f rows/s without the read; read %.2f s)"
        % (len(predicted), seconds, len(predicted) / seconds, read_seconds))


def int_list(text):
    return [int(x) for x in text.split(",") if x]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    t = commands.add_parser("train", help="train the MLP on CSV rows and save it as TorchScript")
    t.add_argument("--input", default="-", help="CSV file, label first (default: stdin)")
    t.add_argument("--output", required=True, help="where to save the TorchScript model")
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=0.001)
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--hidden", type=int_list, default=[256, 256],
                   help="hidden layer widths (default: 256,256)")
    t.add_argument("--classes", type=int, default=10)

    p = commands.add_parser("predict", help="write the argmax of a TorchScript model per row")
    p.add_argument("--model", required=True)
    p.add_argument("--input", default="-", help="CSV file (default: stdin)")
    p.add_argument("--no-label", action="store_true", help="rows have no label in column 0")
    p.add_argument("--input-shape", type=int_list, help="reshape each row, e.g. 1,28,28")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--threads", type=int, default=1)

    args = parser.parse_args()
    train(args) if args.command == "train" else predict(args)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A Fashion-MNIST model written in plain torch.nn, for `sparktorch train --model net.pt`.

The network is a small residual CNN: it takes the 784 pixels of a row (or rows already shaped
1x28x28, with --input-shape 1,28,28), and its residual block adds its input to its output, which
the layer list of a JSON spec cannot express. Runs with Debian's python3-torch (/usr/bin/python3).

Write the untrained model and its training config (loss and optimizer) into DIR:

  /usr/bin/python3 examples/torchscript_model.py --out DIR      # DIR/net.pt, DIR/net.json
  build/sparktorch train --model DIR/net.pt --input out/fashion_train.csv --output trained.pt

Check what sparktorch trained: load it with torch.jit.load, read its manifest, load its weights
into a fresh FashionResNet with load_state_dict, and compare the two on rows of a csv (label
first); with --predictions, also compare the argmax with `sparktorch predict` row for row:

  /usr/bin/python3 examples/torchscript_model.py --check trained.pt --rows out/fashion_test.csv \
      --predictions test.predictions

Exits 1 with a line on stderr when a check fails.
"""

import argparse
import itertools
import json
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

NET_CONFIG = {"loss": "cross_entropy", "optimizer": {"type": "adam", "lr": 0.001}}


class ResidualBlock(nn.Module):
    """conv-bn-relu-conv-bn, plus the block's input, then relu (a ResNet basic block)."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class FashionResNet(nn.Module):
    """784 pixels (or 1x28x28) -> 10 class logits."""

    def __init__(self, channels: int = 16, hidden: int = 64, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(1, channels, 3, padding=1)
        self.block = ResidualBlock(channels)
        self.fc1 = nn.Linear(channels * 7 * 7, hidden)
        self.dropout = nn.Dropout(0.2)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # sparktorch hands flat rows unless told --input-shape 1,28,28: accept both.
        if x.dim() == 2:
            x = x.reshape(x.size(0), 1, 28, 28)
        x = F.max_pool2d(F.relu(self.stem(x)), 2)  # 16x14x14
        x = F.max_pool2d(self.block(x), 2)  # 16x7x7
        x = self.dropout(F.relu(self.fc1(torch.flatten(x, 1))))
        return self.fc2(x)


def write_model(out_dir, seed):
    """Writes out_dir/net.pt (the scripted, untrained FashionResNet) and out_dir/net.json."""
    torch.manual_seed(seed)
    os.makedirs(out_dir, exist_ok=True)
    scripted = torch.jit.script(FashionResNet())
    scripted.save(os.path.join(out_dir, "net.pt"))
    with open(os.path.join(out_dir, "net.json"), "w") as f:
        json.dump(NET_CONFIG, f)
        f.write("\n")
    params = sum(p.numel() for p in scripted.parameters())
    print("wrote %s/net.pt (FashionResNet, %d parameters) and %s/net.json" %
          (out_dir, params, out_dir))


def fail(message):
    print("torchscript_model.py: check failed: " + message, file=sys.stderr)
    sys.exit(1)


def read_rows(path, limit):
    """The first `limit` rows of a csv (label first) as float32 pixels, shape (n, 784)."""
    with open(path) as f:
        rows = np.loadtxt(itertools.islice(f, limit), delimiter=",", dtype=np.float32, ndmin=2)
    return torch.from_numpy(rows[:, 1:].copy())


def check(model_path, rows_path, limit, predictions_path):
    extra = {"sparktorch.json": ""}
    scripted = torch.jit.load(model_path, _extra_files=extra)
    if not extra["sparktorch.json"]:
        fail("%s has no sparktorch.json manifest: not a model sparktorch trained" % model_path)
    manifest = json.loads(extra["sparktorch.json"])
    print("manifest: source %s, input_shape %s, loss %s, optimizer %s" %
          (manifest.get("source"), manifest.get("input_shape"),
           json.dumps(manifest.get("loss"), sort_keys=True),
           json.dumps(manifest.get("optimizer"), sort_keys=True)))

    net = FashionResNet()
    want, got = set(net.state_dict()), set(scripted.state_dict())
    if want != got:
        fail("state_dict keys differ: only in FashionResNet %s, only in %s %s" %
             (sorted(want - got), model_path, sorted(got - want)))
    net.load_state_dict(scripted.state_dict())  # strict: the same keys and shapes
    print("state_dict: %d tensors, the same keys as FashionResNet, loaded" % len(want))

    x = read_rows(rows_path, limit)
    net.eval()
    scripted.eval()
    with torch.no_grad():
        expected = net(x)
        actual = scripted(x)
    diff = (expected - actual).abs().max().item()
    if not torch.allclose(expected, actual, atol=1e-5):
        fail("FashionResNet and %s differ by up to %g on %s" % (model_path, diff, rows_path))
    classes = expected.argmax(dim=1)
    print("outputs: FashionResNet equals %s on %d rows (max |difference| %.3g)" %
          (model_path, len(x), diff))
    if predictions_path:
        with open(predictions_path) as f:
            predicted = [int(float(line)) for line in itertools.islice(f, len(x))]
        if len(predicted) != len(x):
            fail("%s has %d lines, expected at least %d" %
                 (predictions_path, len(predicted), len(x)))
        agree = sum(int(a == b) for a, b in zip(classes.tolist(), predicted))
        if agree != len(x):
            fail("argmax agrees with %s on %d of %d rows" % (predictions_path, agree, len(x)))
        print("argmax: the same class as %s on all %d rows" % (predictions_path, len(x)))
    print("check passed")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", metavar="DIR",
                        help="write DIR/net.pt and DIR/net.json (the loss and optimizer)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial weights")
    parser.add_argument("--check", metavar="MODEL.pt", help="check a model sparktorch trained")
    parser.add_argument("--rows", metavar="CSV", help="--check: rows to compare on (label first)")
    parser.add_argument("--limit", type=int, default=500, help="--check: rows read (default 500)")
    parser.add_argument("--predictions", metavar="FILE",
                        help="--check: `sparktorch predict` output for the same rows")
    args = parser.parse_args()
    if bool(args.out) == bool(args.check):
        parser.error("give exactly one of --out DIR and --check MODEL.pt")
    if args.check and not args.rows:
        parser.error("--check needs --rows CSV")
    if args.out:
        write_model(args.out, args.seed)
    else:
        check(args.check, args.rows, args.limit, args.predictions)


if __name__ == "__main__":
    main()

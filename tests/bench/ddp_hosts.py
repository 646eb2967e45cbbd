"""One rank of PyTorch DDP over gloo, as its users write it, for tests/bench/multihost_bench.sh
(PEERS=ddp): the same model (peers_bench.build_model, the PyTorch twin of sparktorch's spec), rows,
batch, optimizer (Adam, lr 0.001) and threads (1) as sparktorch's ranks there, DDP's defaults
(25 MB buckets, the all-reduce overlapped with the backward pass), batches sliced from a
shuffled order of tensors. With --world 1 it is one process alone, without DDP.

    ddp_hosts.py --rank R --world N --master HOST:PORT --rows part.csv --model wide
        --batch 128 --epochs 1

Prints one JSON line: the rank, its rows, the last epoch's seconds and every rank's rows over
those seconds (samples_per_second, as sparktorch's summary counts it)."""

import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_bench import build_model  # noqa: E402  (tests/bench/peers_bench.py)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--master", required=True, help="HOST:PORT of rank 0's store")
    parser.add_argument("--rows", required=True, help="CSV rows, the label first")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = np.loadtxt(args.rows, delimiter=",", dtype=np.float32, ndmin=2)
    x, y = torch.from_numpy(data[:, 1:].copy()), torch.from_numpy(data[:, 0]).long()
    torch.manual_seed(args.seed)
    net = build_model(args.model)
    if args.world > 1:
        import torch.distributed as dist  # pylint: disable=import-outside-toplevel
        from torch.nn.parallel import DistributedDataParallel  # pylint: disable=import-outside-toplevel
        dist.init_process_group("gloo", init_method="tcp://" + args.master, rank=args.rank,
                                world_size=args.world)
        net = DistributedDataParallel(net)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    steps = len(y) // args.batch + (len(y) % args.batch > 0)  # equal shares: the same on every rank
    seconds = 0.0
    for _ in range(args.epochs):
        started = time.perf_counter()
        order = torch.randperm(len(y))
        for step in range(steps):
            take = order[step * args.batch:(step + 1) * args.batch]
            optimizer.zero_grad()
            loss_fn(net(x[take]), y[take]).backward()
            optimizer.step()
        seconds = time.perf_counter() - started
    if args.world > 1:
        dist.destroy_process_group()
    print(json.dumps({"rank": args.rank, "rows": len(y), "seconds": seconds,
                      "samples_per_second": len(y) * args.world / seconds,
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()

"""peers_bench.py's report: the fits and transforms it measured, as a table, and issue 25's
targets stated against them (a report, not a verdict)."""
import os
import statistics
import sys
import time

import pyspark
import torch

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def spread(values, fmt):
    """'median (min-max)' of `values` in `fmt`; the one value alone when there is one."""
    values = sorted(values)
    if not values:
        return "-"
    median = statistics.median(values)
    if len(values) == 1:
        return fmt % median
    return "%s (%s-%s)" % (fmt % median, fmt % values[0], fmt % values[-1])


def report(args, master, rows, test_rows, fits, transforms, shims, source):
    """`fits`: {name: [Fit of each run]}; `transforms`: {name: [(rows/s, rows, right share,
    error, tasks) of each run]}, the runs interleaved (A B C A B C ...)."""
    print()
    print("Spark %s, torch %s, Python %s, master %s; %d training rows, %d test rows, "
          "model %s, %d epochs, batch %d per task, Adam lr %g, %d tasks; %d interleaved runs "
          "of each entry: median (min-max)"
          % (pyspark.__version__, torch.__version__, sys.version.split()[0], master, rows,
             test_rows, args.model, args.epochs, args.batch, args.lr, args.tasks, args.runs))
    print("load average (1 min) at the start %.2f, at the end %.2f (2 cores; others' work "
          "counts too)" % (args.load_at_start, os.getloadavg()[0]))
    print("sparktorch: %s, at %s" % (command_output([os.path.abspath(args.binary), "--version"]),
                                     command_output(["git", "-C", REPO, "describe", "--always",
                                                     "--dirty"])))
    print("threads: one per task for every contestant: sparktorch threads=1 (its processes' "
          "--threads); TorchDistributor and predict_batch_udf torch.set_num_threads(1) in their "
          "functions; SparkTorch 0.2.0 OMP_NUM_THREADS=%s in its workers' environment"
          % os.environ.get("OMP_NUM_THREADS", "unset"))
    if fits:
        print("\n%-20s %-22s %22s %14s  %s" % ("tool", "mode", "fit s", "test accuracy",
                                                "note (of the last run)"))
        for name, runs in fits.items():
            tool, mode = describe(name)
            done = [f for f in runs if not f.error]
            failed = ["run %d: %s" % (i + 1, f.error) for i, f in enumerate(runs) if f.error]
            print("%-20s %-22s %22s %14s  %s" % (
                tool, mode, spread([f.seconds for f in done], "%.2f"),
                spread([f.accuracy for f in done], "%.4f") if done else "-",
                "; ".join(([done[-1].note] if done else []) + ["FAILED " + e for e in failed])))
    if transforms:
        print("\n%-28s %24s %10s %6s %12s  (%s)" % ("tool", "rows/s", "rows", "tasks",
                                                    "right share", source))
        for name, runs in transforms.items():
            tool = {"ours": "sparktorch", "SparkTorch": "SparkTorch 0.2.0",
                    "read-only": "  Spark's read alone",
                    "ours-lines": "  read + sparktorch's lines",
                    "ours-binary": "  sparktorch predict alone",
                    "ours-coalesced": "  sparktorch, coalesced",
                    "predict_batch_udf-coalesced": "  predict_batch_udf, coalesced"}.get(
                        name, name)
            done = [r for r in runs if not r[3]]
            failed = ["run %d: %s" % (i + 1, r[3]) for i, r in enumerate(runs) if r[3]]
            right = [r[2] for r in done if r[2] is not None]
            print("%-28s %24s %10s %6s %12s  %s" % (
                tool, spread([r[0] for r in done], "%.0f"), done[-1][1] if done else "-",
                done[-1][4] if done else "-", "%.4f" % right[-1] if right else "",
                "; ".join("FAILED " + e for e in failed)))
    compute(args, rows, fits)
    if shims:
        print("\nworkarounds and shims for the peers:\n  " + "\n  ".join(shims))
    targets(fits, transforms)


def forward_flops(net, features):
    """Floating-point operations of one row's forward pass through `net` (a multiply-add is 2):
    its Linear and Conv2d layers, counted with hooks on a forward of one zero row."""
    total = [0]

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Linear):
            total[0] += 2 * module.in_features * module.out_features
        elif isinstance(module, torch.nn.Conv2d):
            kh, kw = module.kernel_size
            total[0] += 2 * output.numel() * module.in_channels // module.groups * kh * kw
    hooks = [m.register_forward_hook(count) for m in net.modules()
             if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))]
    with torch.no_grad():
        net(torch.zeros(1, features))
    for hook in hooks:
        hook.remove()
    return total[0]


def sgemm_peak(n=2048, tries=5):
    """fp32 FLOP/s of one core as PyTorch's own matrix product reaches it (the best of `tries`
    products of two n x n matrices on one thread): the practical peak a training's share is
    measured against."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    a, b = torch.randn(n, n), torch.randn(n, n)
    best = float("inf")
    for _ in range(tries):
        started = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - started)
    torch.set_num_threads(threads)
    return 2 * n ** 3 / best


def compute(args, rows, fits):
    """Per fit: the training inside it, the overhead around it, and the training's share of the
    cores' practical fp32 peak (a training step taken as 3 forward passes of arithmetic:
    forward, and the gradients of the inputs and the weights)."""
    done = {name: [f for f in runs if not f.error and f.train_seconds] for name, runs in
            fits.items()}
    done = {name: runs for name, runs in done.items() if runs}
    if not done:
        return
    peak = sgemm_peak()
    work = 3 * args.forward_flops * rows * args.epochs
    print("\ntraining inside each fit (%s: %.2f MFLOP a row forward, %.1f GFLOP in all); the "
          "peak: one core's %.1f GFLOP/s (PyTorch's 2048x2048 fp32 product on one thread) x "
          "%d tasks" % (args.model, args.forward_flops / 1e6, work / 1e9, peak / 1e9,
                        args.tasks))
    print("%-38s %18s %18s %18s" % ("fit", "training s", "overhead s", "share of peak"))
    for name, runs in done.items():
        tool, mode = describe(name)
        print("%-38s %18s %18s %18s" % (
            "%s, %s" % (tool, mode), spread([f.train_seconds for f in runs], "%.2f"),
            spread([f.seconds - f.train_seconds for f in runs], "%.2f"),
            spread([work / f.train_seconds / (peak * args.tasks) for f in runs], "%.2f")))


def command_output(command):
    import subprocess  # pylint: disable=import-outside-toplevel
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError) as e:
        return "(%s)" % e


def describe(name):
    if name.startswith("ours-"):
        _, mode, where = name.split("-")
        return "sparktorch", "%s, %s" % (mode, "readParquet" if where == "files"
                                         else "rows through Spark")
    if name.startswith("SparkTorch-"):
        return "SparkTorch 0.2.0", name.split("-")[1]
    return "TorchDistributor", "DDP, gloo"


def ratios(numerators, denominators):
    """The ratios of the runs of two entries, run by run (the runs were interleaved)."""
    return [a / b for a, b in zip(numerators, denominators) if a is not None and b]


def targets(fits, transforms):
    """Issue 25's targets, stated against what was measured (a report, not a verdict): each
    ratio is the median of the runs' own ratios (run i of one entry against run i of the
    other), with their min and max."""
    done = {name: [f for f in runs if not f.error] for name, runs in fits.items()}
    done = {name: runs for name, runs in done.items() if runs}
    ours = [n for n in done if n.startswith("ours-")]
    peers = [n for n in done if not n.startswith("ours-")]
    if ours and peers:
        accuracy = {n: statistics.median(f.accuracy for f in runs) for n, runs in done.items()}
        seconds = {n: statistics.median(f.seconds for f in runs) for n, runs in done.items()}
        best = max(accuracy.values())
        fastest = min(peers, key=seconds.get)
        print("\ntarget: sparktorch's fit 3x faster than the fastest peer, at accuracy within "
              "0.01 of the best (median %.4f); the fastest peer: %s, median %.2f s (accuracy "
              "%.4f)" % (best, fastest, seconds[fastest], accuracy[fastest]))
        for name in ours:
            runs = ratios([f.seconds for f in done[fastest]], [f.seconds for f in done[name]])
            median = statistics.median(runs)
            print("  %-20s %s times as fast, accuracy %+.4f from the best: %s" % (
                name, spread(runs, "%.2f"), accuracy[name] - best,
                "met" if best - accuracy[name] <= 0.01 and median >= 3 else "missed"))
    rates = {name: [r[0] for r in runs if not r[3]] for name, runs in transforms.items()}
    if rates.get("ours") and rates.get("predict_batch_udf"):
        runs = ratios(rates["ours"], rates["predict_batch_udf"])
        print("target: sparktorch's transform 2x predict_batch_udf's rows/s: %s, %s"
              % (spread(runs, "%.2fx"), "met" if statistics.median(runs) >= 2 else "missed"))

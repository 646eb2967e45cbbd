"""sparktorch against the tools a Spark user would pick instead, on the same data and model
(issue 25 item 6; DESIGN.md section 8).

    spark-submit --master 'local[2]' --driver-memory 3g tests/bench/peers_bench.py \
        --binary build/sparktorch [--work out/peers] [--quick] [--fit all] [--transform all]

tests/bench/peers_bench.sh picks the Spark line and the Python from
examples/install_python.sh's environments and runs this.

Data, written once into --work by Spark from Debian's dataset-fashion-mnist (as
examples/prepare_fashion_mnist.py reads it): fashion_train.parquet (60,000 rows) and
fashion_test.parquet (10,000 rows), each a `label` double and a `features` Spark ML vector
(dense, pixels / 255), in 2 files. --quick: 6,000 and 1,000 rows, in --work/quick.

Fits (--fit; a list of the names below (a whole name is that entry alone), or prefixes of
them, `all` or `none`): the model of
--model (mlp: 784-256-256-10, the default; cnn: examples/fashion_mnist_cnn.json; wide:
784-2048-2048-10, fashion_mnist_wide_mlp.json here), each tool's PyTorch or spec twin of it,
Adam lr 1e-3, cross-entropy, batch 128 per task, 3 epochs, 2 tasks:
  ours-sync-files        sparktorch's ML stage (sparktorch_spark.ml.SparkTorch), sync, the
                         tasks reading the Parquet files themselves (readParquet)
  ours-sync-spark        the same, the rows through Spark (readParquet=False)
  ours-hogwild-files, ours-hogwild-spark   the same in hogwild mode
  SparkTorch-sync        SparkTorch 0.2.0 from PyPI (`from sparktorch import ...`), its
                         estimator in mode 'synchronous'; `iters` are its steps (one mini-batch
                         drawn from the task's rows each), set to epochs * ceil(rows per task /
                         128), which is what 3 epochs at batch 128 take
  SparkTorch-hogwild     the same in mode 'hogwild', with acquireLock=False (sparktorch's
                         hogwild takes no lock either; SparkTorch's default True serializes
                         the pushes); no barrier; the port is a free one
  TorchDistributor       pyspark.ml.torch.distributor.TorchDistributor(num_processes=2,
                         local_mode=False, use_gpu=False).run(train_fn, ...): torchrun in 2
                         barrier tasks, DDP over gloo, each process reading its share of the
                         Parquet files with pyarrow, batches sliced from a shuffled order of
                         its tensors (no DataLoader), the same number of steps on each rank
                         (no join())
Each tool gets its own default partitioning: the input's 2 partitions (SparkTorch's
partitions=2 would shuffle the pickled rows; sparktorch's equals the input's). Every contestant
runs one thread per task: sparktorch threads=1, torch.set_num_threads(1) in TorchDistributor's
train_fn and predict_batch_udf's function, OMP_NUM_THREADS=1 for SparkTorch's workers
(peers_bench.sh exports it), as the report says.
The fit's seconds are the wall clock of `estimator.fit(df)` (of `TorchDistributor(...).run`):
rows in to the model back on the driver. Every model is then evaluated the same way: the test
rows (read with pyarrow) through the model in torch on the driver.

Transforms (--transform, the same way): one model (the weights of the first fit that ran, else
a fresh MLP; sparktorch gets its own fitted TorchScript file, or the same MLP through
torch.jit.script) over copies of the training rows, unioned:
  ours                   sparktorch's SparkTorchModel.transform, over --transform-copies (10:
                         600,000 rows)
  SparkTorch             SparkTorch 0.2.0's SparkTorchModel.transform, a Python UDF row by row,
                         over --sparktorch020-copies (1: 60,000 rows; it manages ~1,500 rows/s)
  predict_batch_udf      pyspark.ml.functions.predict_batch_udf (batch_size 1024) over
                         vector_to_array(features, "float32") (sparktorch's rows are float32
                         too), 600,000 rows; the UDF made once, so that its workers load the
                         model once (in the warm-up), as sparktorch's kept processes do
Each is forced by one aggregate over its prediction column (the share of rows whose prediction
is their label, which must agree between them: the same weights), and reported in rows/s, after
one untimed warm-up of the same transform over the first WARM_ROWS training rows (the JVM's JIT
compiles the row paths, Python workers start and load the model): the JVM this script starts is
cold, and whichever tool ran first paid for it (sparktorch's first partitions ran at half the
speed of its later ones), which is not the throughput a long-running job sees. Where
sparktorch's time goes, the same way: read-only (Spark reading the rows, noop-written),
ours-lines (and turning them into the lines sparktorch's transform pipes), ours-binary
(`sparktorch predict` alone on those lines from files, one process per task's share of one copy),
ours-coalesced and predict_batch_udf-coalesced (the transform over the copies coalesced to one
partition per task slot: a process, or a Python worker's model, started twice, not 20 times).

The peers need a few workarounds here (Spark 4.3.0's columnar input to Python UDFs; SparkTorch
0.2.0 on torch 2.15): install_spark_workarounds and install_sparktorch_shims apply them from
the outside (never in site-packages) and say why; the report lists them. The driver runs torch
on one thread (see main).

With --stderr FILE (spark-submit's stderr: the JVM's log, where the tasks of a local master
log), each of sparktorch's fits is also split into phases (spark_fit_bench.py's: start-up and
checks, ranks starting, rows into the binary, training, model back) with the slowest rank's own
figures; TorchDistributor's from the times its train_fn returns.

--runs (3) interleaves the runs (every fit once, then every fit again, ...; the same for
the transforms), and the report gives each entry's median, min and max, and each ratio as the
median of the runs' own ratios. Measured figures: sparktorch-spark(7), PERFORMANCE.

It reports numbers and never passes or fails on them; an entry that fails is reported with its
error and the others go on.
"""
import argparse
import glob
import io
import math
import multiprocessing
import os
import socket
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "spark-scripts"))
sys.path.insert(0, os.path.join(REPO, "examples"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import pyspark  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from peers_report import forward_flops, report  # noqa: E402  (tests/bench/peers_report.py)
from peers_transforms import FEATURES, one_line, run_transform, say  # noqa: E402

SPEC = os.path.join(REPO, "examples", "fashion_mnist_mlp.json")
FITS = ("ours-sync-files", "ours-sync-spark", "ours-hogwild-files", "ours-hogwild-spark",
        "SparkTorch-sync", "SparkTorch-hogwild", "TorchDistributor")
TRANSFORMS = ("ours", "SparkTorch", "predict_batch_udf", "read-only", "ours-lines",
              "ours-binary", "ours-coalesced", "predict_batch_udf-coalesced")
CLASSES = 10


# --model: the spec sparktorch trains, and build_model's PyTorch twin of it.
MODELS = {
    "mlp": SPEC,
    "cnn": os.path.join(REPO, "examples", "fashion_mnist_cnn.json"),
    "wide": os.path.join(HERE, "fashion_mnist_wide_mlp.json"),
}


def build_mlp():
    """The model of examples/fashion_mnist_mlp.json, in PyTorch."""
    return build_model("mlp")


def build_model(name):
    """The PyTorch twin of MODELS[name], taking flat float32 rows of FEATURES (the CNN
    reshapes them to 1x28x28 itself, as sparktorch does with the spec's input_shape)."""
    if name == "mlp":
        return nn.Sequential(nn.Linear(FEATURES, 256), nn.ReLU(), nn.Linear(256, 256),
                             nn.ReLU(), nn.Linear(256, CLASSES))
    if name == "wide":
        return nn.Sequential(nn.Linear(FEATURES, 2048), nn.ReLU(), nn.Linear(2048, 2048),
                             nn.ReLU(), nn.Linear(2048, CLASSES))
    return nn.Sequential(nn.Unflatten(1, (1, 28, 28)),
                         nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(1568, 128), nn.ReLU(),
                         nn.Linear(128, CLASSES))


# --- data -----------------------------------------------------------------------------------

def read_vectors(paths):
    """(features float32 [n, 784], labels int64 [n]) of Parquet files with a `label` double and a
    Spark ML `features` vector (a struct: type 0 sparse / 1 dense, size, indices, values), read
    with pyarrow, as a TorchDistributor user decodes them."""
    import pyarrow.parquet as pq  # pylint: disable=import-outside-toplevel
    table = pq.read_table(paths, columns=["label", "features"])
    labels = table.column("label").to_numpy().astype(np.int64)
    vectors = table.column("features").combine_chunks()
    kinds = vectors.field("type").to_numpy(zero_copy_only=False)
    values = vectors.field("values")
    offsets = values.offsets.to_numpy()
    flat = values.values.to_numpy()
    if (kinds == 1).all() and (np.diff(offsets) == FEATURES).all():
        x = flat[offsets[0]:offsets[-1]].reshape(-1, FEATURES)
        return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(labels)
    x = np.zeros((len(labels), FEATURES), np.float32)
    indices = vectors.field("indices")
    index_offsets = indices.offsets.to_numpy()
    index_flat = indices.values.to_numpy()
    for row, kind in enumerate(kinds):
        row_values = flat[offsets[row]:offsets[row + 1]]
        if kind == 1:
            x[row] = row_values
        else:
            x[row, index_flat[index_offsets[row]:index_offsets[row + 1]]] = row_values
    return torch.from_numpy(x), torch.from_numpy(labels)


def parquet_parts(path):
    return sorted(glob.glob(os.path.join(path, "part-*.parquet")))


def write_data(spark, work, limits):
    """Writes fashion_{train,test}.parquet into `work` with Spark, unless there; returns
    {split: path}."""
    import pyarrow as pa  # pylint: disable=import-outside-toplevel
    import pyarrow.parquet as pq  # pylint: disable=import-outside-toplevel
    from prepare_fashion_mnist import DEFAULT_DATA_DIR, load  # pylint: disable=import-outside-toplevel
    from pyspark.ml.functions import array_to_vector  # pylint: disable=import-outside-toplevel
    paths = {}
    for split in ("train", "test"):
        out = os.path.join(work, "fashion_%s.parquet" % split)
        paths[split] = out
        if os.path.exists(os.path.join(out, "_SUCCESS")):
            continue
        labels, images, features = load(DEFAULT_DATA_DIR, split, limits[split])
        pixels = np.frombuffer(images, np.uint8).astype(np.float64) / 255.0
        n = len(labels)
        staged = os.path.join(work, "staged_%s.parquet" % split)
        pq.write_table(pa.table({
            "label": pa.array(np.frombuffer(labels, np.uint8).astype(np.float64)),
            "pixels": pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)
                                                        * features), pa.array(pixels))}),
            staged, row_group_size=5000)
        df = spark.read.parquet(staged).select(
            "label", array_to_vector("pixels").alias("features"))
        # 2 files of half the rows each, in the rows' order: one per task for the readers
        # that take whole files (TorchDistributor's processes).
        df.coalesce(1).write.mode("overwrite").option(
            "maxRecordsPerFile", (n + 1) // 2).parquet(out)
        os.remove(staged)
        say("wrote %s: %d rows in %d files" % (out, n, len(parquet_parts(out))))
    return paths


# --- evaluation -----------------------------------------------------------------------------

def accuracy(net, test):
    """The share of the test rows ((x, y) tensors) that `net` (a torch module taking float32
    rows) classifies right."""
    x, y = test
    net.eval()
    with torch.inference_mode():
        predicted = torch.cat([net(x[i:i + 4096]).argmax(1) for i in range(0, len(x), 4096)])
    return (predicted == y).float().mean().item()


def copy_weights(source, net):
    """Copies the parameters of `source` (any module with the MLP's parameters in order, a
    TorchScript one too) into `net`; returns `net`."""
    with torch.no_grad():
        pairs = list(zip(source.parameters(), net.parameters()))
        if len(pairs) != len(list(net.parameters())) or any(
                a.shape != b.shape for a, b in pairs):
            raise ValueError("the model's parameters are not the MLP's")
        for a, b in pairs:
            b.copy_(a)
    return net


# --- fits -----------------------------------------------------------------------------------

class Fit:
    """One fit's outcome: seconds, the trained net (an nn.Module) or the error."""

    def __init__(self, name):
        self.name = name
        self.seconds = None
        self.net = None
        self.accuracy = None
        self.error = None
        self.note = ""
        self.model_bytes = None  # sparktorch's TorchScript file
        self.train_seconds = None  # the training inside the fit, where the tool says it


def fit_ours(spark, args, paths, mode, read_parquet):
    """sparktorch's ML stage; returns (seconds, model_bytes, note, the slowest rank's training
    seconds)."""
    from sparktorch_spark.ml import SparkTorch as Ours  # pylint: disable=import-outside-toplevel
    binary = os.path.abspath(args.binary)
    stage = Ours(torchObj=MODELS[args.model], inputCol="features", labelCol="label",
                 iters=args.epochs, miniBatch=args.batch, lr=args.lr, mode=mode, threads=1,
                 binary=binary, driverBinary=binary, readParquet=read_parquet)
    df = spark.read.parquet(paths["train"])
    stamped = Stamped(sys.stderr) if args.stderr else None
    old, sys.stderr = sys.stderr, (stamped or sys.stderr)
    started = time.time()
    try:
        model = stage.fit(df)
    finally:
        returned = time.time()
        sys.stderr = old
    note = ""
    if args.stderr:
        from spark_fit_bench import PHASES, stamped_stderr  # pylint: disable=import-outside-toplevel
        lines = stamped.lines + stamped_stderr(args.stderr)
        note = phases_text(PHASES, lines, started, returned)
    summaries = getattr(model, "summaries", None) or []
    train_seconds = max((s.get("train_seconds", 0) for s in summaries), default=None)
    if summaries:
        note += "; slowest rank: " + ", ".join(
            "%s %.2f s" % (what, max(s.get(key, 0) for s in summaries))
            for what, key in (("reading its rows", "read_seconds"),
                              ("training", "train_seconds"), ("in all", "total_seconds")))
    return returned - started, model.modelBytes(), note, train_seconds


class Stamped(io.TextIOBase):
    """A stream that keeps every line with the time it was written, and passes it on."""

    def __init__(self, out):
        super().__init__()
        self.out = out
        self.lines = []

    def write(self, text):
        now = time.time()
        self.lines.extend((now, line) for line in text.splitlines())
        self.out.write(text)
        return len(text)

    def flush(self):
        self.out.flush()


def phases_text(phases, lines, started, returned):
    """'start-up and checks 1.02 s, ...' from the stamped log lines of a fit."""
    parts, last = [], started
    for name, pattern in phases:
        times = [t for t, line in lines if pattern.search(line) and started <= t <= returned]
        end = max(times + [last])
        parts.append("%s %.2f s" % (name, end - last))
        last = end
    parts.append("model back %.2f s" % (returned - last))
    return ", ".join(parts)


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def install_spark_workarounds(spark):
    """Spark settings the peers need here; returns them, in words, for the report."""
    applied = []
    # Spark 4.3.0 feeds Arrow Python UDFs (predict_batch_udf, and plain Python UDFs such as
    # SparkTorch's transform, which 4.3 runs through Arrow by default) the scan's columnar
    # batches when this is on (its default), and then fails on any Spark ML vector column in
    # the scan: "[UNSUPPORTED_DATATYPE] Unsupported data type UDT(...)" from
    # RowToColumnConverter, even when the UDF takes vector_to_array(features).
    key = "spark.sql.execution.arrow.pythonUDF.columnarInput.enabled"
    try:
        value = spark.conf.get(key)  # its default where Spark has it; an error where not
    except Exception:  # pylint: disable=broad-except
        value = None
    if value == "true":
        spark.conf.set(key, "false")
        applied.append("%s=false (Spark %s fails Python UDFs over a Parquet scan with a "
                       "vector column otherwise)" % (key, pyspark.__version__))
    return applied


def install_sparktorch_shims():
    """What SparkTorch 0.2.0 (written for Spark 2.4/3.x and torch 1.x) needs to run here, done
    from the outside (its package is left as installed). Returns the shims applied, in words,
    for the report."""
    applied = []
    # SparkTorch pickles the optimizer's class with dill (serialize_torch_obj). dill pickles a
    # class by reference only when getattr(package, submodule) finds the module named by its
    # __module__; torch 2.15's torch.optim no longer binds its submodules (torch.optim.adam) as
    # attributes, so dill pickles torch.optim.Adam by value and fails on typing_extensions'
    # sentinel ("Can't pickle sentinel: it's not the same object as typing_extensions.sentinel").
    # Binding the submodule lets dill write a reference, which any process unpickles.
    optimizer = torch.optim.Adam
    package, _, submodule = optimizer.__module__.rpartition(".")
    parent = sys.modules[package]
    if getattr(parent, submodule, None) is not sys.modules[optimizer.__module__]:
        setattr(parent, submodule, sys.modules[optimizer.__module__])
        applied.append("%s.%s bound to its module (torch 2.15 no longer does), so that dill "
                       "pickles torch.optim.Adam by reference" % (package, submodule))
    return applied


def fit_sparktorch020(spark, args, paths, mode, rows):
    """SparkTorch 0.2.0's estimator; returns (seconds, net, note)."""
    from sparktorch import SparkTorch, serialize_torch_obj  # pylint: disable=import-outside-toplevel
    torch.manual_seed(args.seed)
    net = build_model(args.model)
    steps = args.epochs * math.ceil(math.ceil(rows / args.tasks) / args.batch)
    port = free_port()
    estimator = SparkTorch(
        inputCol="features", labelCol="label", predictionCol="predicted",
        torchObj=serialize_torch_obj(net, nn.CrossEntropyLoss(), torch.optim.Adam, lr=args.lr),
        iters=steps, miniBatch=args.batch, mode="synchronous" if mode == "sync" else "hogwild",
        acquireLock=False, port=port, verbose=0)
    df = spark.read.parquet(paths["train"])
    started = time.time()
    try:
        model = estimator.fit(df)
    finally:
        # Its hogwild fit leaves its parameter server running when the fit fails (it waits a
        # fixed 5 s for the server, then fails if it does not answer yet): end it, or this
        # process would wait for it at exit.
        for child in multiprocessing.active_children():
            child.terminate()
    seconds = time.time() - started
    note = ("iters=%d (steps of %d rows per task), the input's %d partitions (its default: "
            "partitions=2 would shuffle the pickled rows)" % (steps, args.batch,
                                                               df.rdd.getNumPartitions()))
    if mode == "hogwild":
        note += ", acquireLock=False (as sparktorch's hogwild; its default True serializes "
        note += "the pushes)"
    if mode == "hogwild":
        # Read in its source, not a shim's doing: handle_model in sparktorch/hogwild.py calls
        # backward() every step without zeroing the gradients, and load_state_dict keeps them.
        note += "; its workers never zero their gradients, so each push is the sum of all so far"
    return seconds, model.getPytorchModel(), note


def distributor_train(files, epochs, batch, lr, seed, model_name="mlp"):
    """TorchDistributor's train_fn: one process of torchrun, DDP over gloo, reading its share
    of the Parquet files with pyarrow. Returns rank 0's state_dict, with the times (time.time())
    at which this process entered, joined the group, had its rows and had trained."""
    entered = time.time()
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    from torch.nn.parallel import DistributedDataParallel  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    joined = time.time()
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = read_vectors(files[rank::world])
    read = time.time()
    torch.manual_seed(seed)
    model = DistributedDataParallel(build_model(model_name))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    # Every rank takes the same number of steps (the fewest rows of any rank's share, which
    # are equal here: 2 files of 30,000 rows), so DDP needs no join(); batches are slices of a
    # shuffled order, as sparktorch's are, not a DataLoader's row-by-row collation.
    steps = torch.tensor([len(y) // batch + (len(y) % batch > 0)])
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)
    for _ in range(epochs):
        order = torch.randperm(len(y))
        for step in range(int(steps)):
            take = order[step * batch:(step + 1) * batch]
            optimizer.zero_grad()
            loss_fn(model(x[take]), y[take]).backward()
            optimizer.step()
    trained = time.time()
    state = {k: v.detach().clone() for k, v in model.module.state_dict().items()}
    dist.destroy_process_group()
    return {"state": state, "times": (entered, joined, read, trained),
            "threads": torch.get_num_threads()} if rank == 0 else None


def fit_distributor(args, paths):
    """TorchDistributor's fit; returns (seconds, net, note, rank 0's training seconds)."""
    from pyspark.ml.torch.distributor import TorchDistributor  # pylint: disable=import-outside-toplevel
    files = parquet_parts(paths["train"])
    started = time.time()
    out = TorchDistributor(num_processes=args.tasks, local_mode=False, use_gpu=False).run(
        distributor_train, files, args.epochs, args.batch, args.lr, args.seed,
        getattr(args, "model", "mlp"))
    returned = time.time()
    net = build_model(getattr(args, "model", "mlp"))
    net.load_state_dict(out["state"])
    entered, joined, read, trained = out["times"]
    return returned - started, net, (
        "rank 0: start-up %.2f s (to train_fn: a barrier job, torchrun, torch imported), "
        "init_process_group %.2f s, reading its rows %.2f s, training %.2f s, model back "
        "%.2f s; %d files, %s per process; torch threads %d per process" % (
            entered - started, joined - entered, read - joined, trained - read,
            returned - trained, len(files),
            "/".join(str(len(files[r::args.tasks])) for r in range(args.tasks)),
            out["threads"])), trained - read


def run_fit(name, spark, args, paths, rows, test):
    fit = Fit(name)
    say("fit %s" % name)
    try:
        if name.startswith("ours-"):
            _, mode, where = name.split("-")
            fit.seconds, fit.model_bytes, fit.note, fit.train_seconds = fit_ours(
                spark, args, paths, mode, where == "files")
            fit.net = copy_weights(torch.jit.load(io.BytesIO(fit.model_bytes)),
                                   build_model(args.model))
        elif name.startswith("SparkTorch-"):
            fit.seconds, fit.net, fit.note = fit_sparktorch020(
                spark, args, paths, name.split("-")[1], rows)
        else:
            fit.seconds, fit.net, fit.note, fit.train_seconds = fit_distributor(args, paths)
        fit.accuracy = accuracy(fit.net, test)
        say("fit %s: %.2f s, test accuracy %.4f" % (name, fit.seconds, fit.accuracy))
    except Exception as e:  # pylint: disable=broad-except
        fit.error = one_line(e)
        say("fit %s failed:\n%s" % (name, traceback.format_exc()))
    return fit


# --- transforms -----------------------------------------------------------------------------

MODEL = "mlp"  # main sets --model's

def make_predict_fn(state):
    """predict_batch_udf's make_predict_fn: the MLP with `state`, argmax of each batch."""
    def make():
        torch.set_num_threads(1)
        net = build_model(MODEL)
        net.load_state_dict(state)
        net.eval()

        def predict(inputs):
            with torch.inference_mode():
                out = net(torch.from_numpy(inputs).float())
            return out.argmax(1).numpy().astype(np.float64)
        return predict
    return make


# --- driver ---------------------------------------------------------------------------------

def select(spec, names):
    if spec == "all":
        return list(names)
    if spec == "none":
        return []
    wanted = [w.strip().lower() for w in spec.split(",") if w.strip()]
    # A whole name is that entry alone ("ours", not ours-lines too); else a prefix of names.
    chosen = [n for n in names if any(n.lower() == w or (
        n.lower().startswith(w) and w not in [m.lower() for m in names]) for w in wanted)]
    unknown = [w for w in wanted if not any(n.lower().startswith(w) for n in names)]
    if unknown:
        sys.exit("peers_bench: no entry named %s (there are %s)" % (", ".join(unknown),
                                                                    ", ".join(names)))
    return chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "sparktorch"))
    parser.add_argument("--work", default=os.path.join(REPO, "out", "peers"))
    parser.add_argument("--quick", action="store_true",
                        help="6,000 training and 1,000 test rows, 10 copies for the transforms")
    parser.add_argument("--fit", default="all", help="fits to run: all, none, or a comma list "
                        "of names or their prefixes (%s)" % ", ".join(FITS))
    parser.add_argument("--transform", default="all", help="transforms to run: all, none, or "
                        "a comma list (%s)" % ", ".join(TRANSFORMS))
    parser.add_argument("--transform-copies", type=int, default=10,
                        help="copies of the training rows to transform (10: 600,000 rows)")
    parser.add_argument("--sparktorch020-copies", type=int, default=1,
                        help="copies for SparkTorch 0.2.0's transform, a Python UDF row by row "
                        "(about 1,000 rows/s here: 600,000 rows would take 10 minutes)")
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp", help="mlp: "
                        "examples/fashion_mnist_mlp.json (784-256-256-10); cnn: "
                        "examples/fashion_mnist_cnn.json; wide: 784-2048-2048-10")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3, help="runs of every entry, interleaved "
                        "(A B C A B C ...); the report gives their median, min and max")
    parser.add_argument("--stderr", help="the file this process's stderr goes to (for the "
                        "phases of sparktorch's fits; peers_bench.sh sets it)")
    args = parser.parse_args()
    global MODEL  # pylint: disable=global-statement  # make_predict_fn's, shipped by value
    MODEL = args.model
    args.forward_flops = forward_flops(build_model(args.model), FEATURES)
    fits, transforms = select(args.fit, FITS), select(args.transform, TRANSFORMS)
    args.load_at_start = os.getloadavg()[0]
    # One thread for torch on the driver (the test set's evaluation): SparkTorch's hogwild
    # server is a fork of the driver, and a fork made after torch has run OpenMP threads hangs
    # in its first parallel operation (libgomp is not fork-safe).
    torch.set_num_threads(1)

    work = os.path.join(args.work, "quick") if args.quick else args.work
    os.makedirs(work, exist_ok=True)
    limits = {"train": 6000, "test": 1000} if args.quick else {"train": None, "test": None}
    spark = SparkSession.builder.appName("sparktorch peers bench").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    paths = write_data(spark, work, limits)
    rows = spark.read.parquet(paths["train"]).count()  # also warms the JVM up for the first fit
    test = read_vectors(parquet_parts(paths["test"]))
    shims = install_spark_workarounds(spark) + install_sparktorch_shims()

    results = {name: [] for name in fits}
    for _ in range(args.runs):
        for name in fits:
            results[name].append(run_fit(name, spark, args, paths, rows, test))

    transformed = {name: [] for name in transforms}
    if transforms:
        fitted = [f for runs in results.values() for f in runs if f.net is not None]
        torch.manual_seed(args.seed)
        net = build_model(args.model)
        source = "a fresh %s (no fit ran)" % args.model
        if fitted:
            copy_weights(fitted[0].net, net)
            source = "the weights of the fit %s" % fitted[0].name
        ours_bytes = next((f.model_bytes for f in fitted if f.model_bytes), None)
        for _ in range(args.runs):
            for name in transforms:
                transformed[name].append(run_transform(name, spark, args, paths, net,
                                                       ours_bytes, make_predict_fn))
    master = spark.sparkContext.master
    spark.stop()
    report(args, master, rows, len(test[1]), results, transformed, shims,
           source if transforms else None)


if __name__ == "__main__":
    main()

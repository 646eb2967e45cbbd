#!/usr/bin/env bash
# Synchronous training through the tracker across simulated hosts (tests/multihost/netns_lib.sh:
# network namespaces on one bridge, each with its own host name and a docker0 that leads
# nowhere) against the same ranks on one host: $MODEL (mlp: examples/fashion_mnist_mlp.json,
# 269,322 parameters; wide: tests/bench/fashion_mnist_wide_mlp.json, 784-2048-2048-10, 5.8M; cnn:
# examples/fashion_mnist_cnn.json) on $ROWS Fashion-MNIST rows split evenly between the ranks,
# batch $BATCH a rank, 1 thread a rank, $EPOCHS epochs, with each gradient dtype of $DTYPES
# (train --allreduce-dtype); for 2 and 4 ranks, and each layout:
#   1 host        every rank on h1 (shared memory between them)
#   N hosts       one rank a host (TCP between every pair, over the veth bridge)
#   2 hosts x 2   (4 ranks) two ranks on each of h1 and h2 (shared memory inside a host, TCP
#                 between them)
# it prints (the median of $REPEATS runs of each) the gradient all-reduce's time a step (the summaries' allreduce_seconds over steps,
# of the last epoch, the mean over the ranks: it includes waiting for the slowest rank), its
# share of the epoch, and the training samples/s of the last epoch (all ranks' rows over rank
# 0's epoch time), the efficiency (samples/s over N times those of one rank alone on h1, which
# trains every row with no all-reduce: "1 rank"), the samples/s against the same layout's fp32,
# and for the layouts across hosts the floor of a ring all-reduce on the link, 2(N-1)/N times the
# gradient's bytes a step over $RATE. The "hosts" share the machine's cores and the bridge is a
# kernel bridge, with no wire latency unless RATE and DELAY give one: RATE (tc's units: 1gbit,
# 10gbit) limits what each host sends on eth0 (tbf), DELAY (0.5ms) delays it (netem, which a
# kernel without CONFIG_NET_SCH_NETEM lacks); without them the difference between the layouts is
# the cost of TCP against shared memory, not of a real network.
# Usage: tests/bench/multihost_bench.sh [BUILD_DIR]   (default build; as root: it makes network
#        namespaces. EPOCHS=3, BATCH=64, ROWS=12000 (at most 12,000: the rows of the
#        integration fixture, or written here from examples/prepare_fashion_mnist.py), DEAD=same
#        (docker0's address on every host: same, distinct or none), RANKS="2 4", REPEATS=1,
#        MODEL=mlp, DTYPES=fp32 (e.g. "fp32 bf16 fp16 fp32/overlap": /overlap adds
#        --allreduce-overlap), RATE= DELAY= (none), WORK=dir,
#        PEERS=ddp: PyTorch DDP over gloo too, on the same hosts, rows, model and batch
#        (tests/bench/ddp_hosts.py, run by PYTHON, default the spark-4 environment of
#        examples/install_python.sh: PYENV/spark-4/bin/python))
# Reports numbers; passes or fails on nothing but errors.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
export REPO SPARKTORCH=$BUILD/sparktorch WORK=${WORK:-$BUILD/multihost_bench}
EPOCHS=${EPOCHS:-3}
BATCH=${BATCH:-64}
ROWS=${ROWS:-12000}
DEAD=${DEAD:-same}
RANKS=${RANKS:-2 4}
REPEATS=${REPEATS:-1}
MODEL=${MODEL:-mlp}
DTYPES=${DTYPES:-fp32}
RATE=${RATE:-}
DELAY=${DELAY:-}
PEERS=${PEERS:-}
PYTHON=${PYTHON:-${PYENV:-/opt/sparktorch-python}/spark-4/bin/python}
export GLOO_SOCKET_IFNAME=eth0  # DDP's ranks talk over the hosts' link, not docker0 or lo
case $MODEL in
  mlp) SPEC=$REPO/examples/fashion_mnist_mlp.json ;;
  wide) SPEC=$REPO/tests/bench/fashion_mnist_wide_mlp.json ;;
  cnn) SPEC=$REPO/examples/fashion_mnist_cnn.json ;;
  *) echo "multihost_bench: MODEL is mlp, wide or cnn, not $MODEL" >&2; exit 2 ;;
esac
mkdir -p "$WORK"
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
source "$REPO/tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../multihost/netns_lib.sh
source "$REPO/tests/multihost/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=../multihost/job_lib.sh
source "$REPO/tests/multihost/job_lib.sh"

# The rows: the integration fixture's, or written here once.
ROWS_FILE=$BUILD/tests/integration/data/train12k.csv
if [[ ! -s $ROWS_FILE ]]; then
  ROWS_FILE=$WORK/train12k.csv
  if [[ ! -s $ROWS_FILE ]]; then
    python3 "$REPO/examples/prepare_fashion_mnist.py" --split train --format csv --limit 12000 \
      --out "$ROWS_FILE.tmp"
    mv "$ROWS_FILE.tmp" "$ROWS_FILE"
  fi
fi
((ROWS <= $(wc -l <"$ROWS_FILE"))) || fail "ROWS=$ROWS: $ROWS_FILE has fewer rows"

setup_workdir runs
mh_setup 4 "$DEAD"
head -n "$ROWS" "$ROWS_FILE" >"$T/rows.csv"
# The link: what each host sends on eth0, at most RATE (a token bucket of 1 ms of the rate, at
# least 128 KiB: a bigger bucket lets a small gradient through faster than the link), then DELAY
# later.
for host in h1 h2 h3 h4; do
  ns=$(mh_ns "$host")
  parent=root
  if [[ -n $RATE ]]; then
    bits=$(python3 -c "
import re, sys
m = re.fullmatch(r'([0-9.]+)([kmg]?)bit', sys.argv[1].lower())
m or sys.exit('RATE is a number of bits a second with kbit, mbit or gbit: ' + sys.argv[1])
print(int(float(m[1]) * {'': 1, 'k': 1e3, 'm': 1e6, 'g': 1e9}[m[2]]))" "$RATE")
    burst=$((bits / 8 / 1000 > 131072 ? bits / 8 / 1000 : 131072))
    tc -n "$ns" qdisc add dev eth0 root handle 1: tbf rate "$RATE" burst "$burst" \
      latency 100ms
    parent="parent 1:1"
  fi
  if [[ -n $DELAY ]]; then
    # shellcheck disable=SC2086 # parent is one or two words
    tc -n "$ns" qdisc add dev eth0 $parent handle 10: netem delay "$DELAY" limit 100000 ||
      fail "DELAY=$DELAY needs tc's netem, which this kernel lacks (CONFIG_NET_SCH_NETEM)"
  fi
done
# The model's parameters, from a model of the spec trained on a few rows.
head -n 64 "$T/rows.csv" | "$SPARKTORCH" -q train --model "$SPEC" --epochs 1 --output "$T/size.pt" \
  >/dev/null
PARAMS=$("$SPARKTORCH" inspect "$T/size.pt" | sed -n 's/^trainable parameters: //p')

# measure NAME "HOST...": one job for each dtype of $DTYPES, rank r on the r-th host named, and
# with PEERS=ddp one of DDP's; appends a row to $T/table for each.
measure() {
  local dtype
  for dtype in $DTYPES; do measure_one "$1" "$2" "$dtype"; done
  [[ $PEERS != *ddp* ]] || measure_ddp "$1" "$2"
}

# measure_ddp NAME "HOST...": DDP's ranks on those hosts, as measure_one's; appends a row
# ("ddp" in the dtype column, no all-reduce time: DDP's is inside its backward pass).
measure_ddp() {
  local name=$1 placed=$2 n r hosts=() pids=() counts=()
  read -ra hosts <<<"$placed"
  n=${#hosts[@]}
  job_dir "ddp $name"
  for ((r = 0; r < n; r++)); do counts+=($((ROWS / n))); done
  split_rows "$T/rows.csv" "${counts[@]}"
  echo "$n ranks, $name ($placed), PyTorch DDP, run $repeat of $REPEATS" >&2
  local master
  master="$(mh_addr "${hosts[0]}"):$((20000 + RANDOM % 10000))"
  for ((r = 0; r < n; r++)); do
    mh_bg "${hosts[r]}" "$PYTHON" "$REPO/tests/bench/ddp_hosts.py" --rank "$r" --world "$n" \
      --master "$master" --rows "part$r.csv" --model "$MODEL" --batch "$BATCH" \
      --epochs "$EPOCHS" </dev/null >"ddp.$r" 2>"ddp_err.$r"
    pids+=("$BG_PID")
  done
  for ((r = 0; r < n; r++)); do
    wait_job_process "${pids[r]}" 600 "DDP rank $r (on ${hosts[r]})" "ddp_err.$r"
    wait "${pids[r]}" || fail "DDP rank $r exited $?: $(tail -n 3 "ddp_err.$r")"
  done
  python3 - "$n" "$name ddp" "$BATCH" ddp.0 >>"$T/table" <<'PY'
import json, sys
n, name, batch, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = json.loads(open(path).read().splitlines()[-1])
print("%s\t%s\t0\t0%%\t%.0f\t%d\t-" % (n, name, s["samples_per_second"], -(-s["rows"] // batch)))
PY
}

measure_one() {
  local name=$1 placed=$2 dtype=$3 n r counts=()
  n=$(wc -w <<<"$placed")
  job_dir "$name"
  for ((r = 0; r < n; r++)); do counts+=($((ROWS / n))); done
  split_rows "$T/rows.csv" "${counts[@]}"
  echo "$n ranks, $name ($placed), $dtype, run $repeat of $REPEATS" >&2
  local overlap=()
  [[ $dtype != */overlap ]] || overlap=(--allreduce-overlap)
  sync_job "$placed" 600 --model "$SPEC" --epochs "$EPOCHS" --batch-size "$BATCH" --seed 1 \
    --threads 1 --allreduce-dtype "${dtype%/overlap}" "${overlap[@]}" >job.log
  python3 - "$n" "$name $dtype" out.* >>"$T/table" <<'PY'
import json, sys
n, name, files = sys.argv[1], sys.argv[2], sys.argv[3:]
s = [json.loads(l[2:]) for f in files for l in open(f) if l.startswith("S\t")]
last = [x["history"][-1] for x in s]
per_step = sum(e.get("allreduce_seconds", 0) / e["steps"] for e in last) / len(last)
share = sum(e.get("allreduce_seconds", 0) / e["seconds"] for e in last) / len(last)
rank0 = [x for x in s if x["rank"] == 0][0]["history"][-1]
print("%s\t%s\t%.3f\t%.0f%%\t%.0f\t%d\t%s" % (n, name, per_step * 1000, share * 100,
      rank0["samples_per_second"], rank0["steps"], s[0]["weights_crc32"]))
PY
}

: >"$T/table"
for ((repeat = 1; repeat <= REPEATS; repeat++)); do
  for n in 1 $RANKS; do
    case $n in
      2) measure "1 host" "h1 h1"; measure "2 hosts" "h1 h2" ;;
      1)
        measure_one "1 rank" "h1" fp32
        [[ $PEERS != *ddp* ]] || measure_ddp "1 rank" "h1"
        ;;
      4)
        measure "1 host" "h1 h1 h1 h1"
        measure "2 hosts x 2" "h1 h1 h2 h2"
        measure "4 hosts" "h1 h2 h3 h4"
        ;;
      *) fail "RANKS: 2 and 4 only, not $n" ;;
    esac
  done
done

echo
echo "Sync training through the tracker, $MODEL ($PARAMS parameters), $ROWS rows, batch $BATCH a" \
  "rank, epoch $EPOCHS of $EPOCHS, link ${RATE:-unlimited}, added delay ${DELAY:-none}," \
  "median of $REPEATS run(s) (docker0: $DEAD; $(getconf _NPROCESSORS_ONLN) cores, load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$T/table" "$PARAMS" "$RATE" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    n, layout, ms, share, sps, steps, crc = line.rstrip("\n").split("\t")
    rows.setdefault((n, layout), []).append((float(ms), float(share.rstrip("%")), float(sps), steps, crc))
params, rate = int(sys.argv[2]), sys.argv[3]
m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.lower())
bits = float(m[1]) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m[2]] if m else 0
med = {key: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
             statistics.median(r[2] for r in runs), runs[0][3], sorted(set(r[4] for r in runs)))
       for key, runs in rows.items()}
fmt = "%-6s %-18s %22s %15s %11s %10s %8s %8s %11s %6s %9s"
print(fmt % ("ranks", "layout", "all-reduce a step (ms)", "share of epoch", "samples/s",
             "efficiency", "vs fp32", "vs ddp", "floor (ms)", "steps", "weights"))
for (n, layout), (ms, share, sps, steps, crcs) in med.items():
    k = int(n)
    where, dtype = layout.rsplit(" ", 1)
    alone = med.get(("1", "1 rank " + ("ddp" if dtype == "ddp" else "fp32")), (0, 0, 0))[2]
    one = med.get((n, "1 host " + dtype))
    ratio = (" (%.1fx)" % (ms / one[0]) if where not in ("1 host", "1 rank") and one and one[0]
             else "")
    efficiency = "%.2f" % (sps / (k * alone)) if alone and k > 1 else ""
    fp32 = med.get((n, where + " fp32"))
    versus = "%.2fx" % (sps / fp32[2]) if dtype not in ("fp32", "ddp") and fp32 else ""
    ddp = med.get((n, where + " ddp"))
    against_ddp = "%.2fx" % (sps / ddp[2]) if dtype != "ddp" and ddp else ""
    wire = dtype.split("/")[0]
    floor = ("%.1f" % (2 * (k - 1) / k * params * (2 if wire != "fp32" else 4) * 8 / bits * 1000)
             if bits and k > 1 and where != "1 host" else "")
    print(fmt % (n, layout, "%.3f%s" % (ms, ratio) if dtype != "ddp" else "",
                 "%.0f%%" % share if dtype != "ddp" else "", "%.0f" % sps, efficiency, versus,
                 against_ddp, floor if dtype != "ddp" else "", steps, ",".join(crcs)))
PY

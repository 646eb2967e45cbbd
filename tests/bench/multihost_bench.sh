#!/usr/bin/env bash
# Synchronous training through the tracker across simulated hosts (tests/multihost/netns_lib.sh:
# network namespaces on one bridge, each with its own host name and a docker0 that leads
# nowhere) against the same ranks on one host: the MLP of examples/fashion_mnist_mlp.json
# (269,322 parameters) on $ROWS Fashion-MNIST rows split evenly between the ranks, batch $BATCH a
# rank, 1 thread a rank, $EPOCHS epochs; for 2 and 4 ranks, and each layout:
#   1 host        every rank on h1 (shared memory between them)
#   N hosts       one rank a host (TCP between every pair, over the veth bridge)
#   2 hosts x 2   (4 ranks) two ranks on each of h1 and h2 (shared memory inside a host, TCP
#                 between them)
# it prints (the median of $REPEATS runs of each) the gradient all-reduce's time a step (the summaries' allreduce_seconds over steps,
# of the last epoch, the mean over the ranks: it includes waiting for the slowest rank), its
# share of the epoch, and the training samples/s of the last epoch (all ranks' rows over rank
# 0's epoch time). The "hosts" share the machine's cores and the bridge is a kernel bridge, with
# no wire latency: the difference between the layouts is the cost of TCP against shared memory,
# not of a real network.
# Usage: tests/bench/multihost_bench.sh [BUILD_DIR]   (default build; as root: it makes network
#        namespaces. EPOCHS=3, BATCH=64, ROWS=12000 (at most 12,000: the rows of the
#        integration fixture, or written here from examples/prepare_fashion_mnist.py), DEAD=same
#        (docker0's address on every host: same, distinct or none), RANKS="2 4", REPEATS=1,
#        WORK=dir)
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
SPEC=$REPO/examples/fashion_mnist_mlp.json
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

# measure NAME "HOST...": one job, rank r on the r-th host named; appends a row to $T/table.
measure() {
  local name=$1 placed=$2 n r counts=()
  n=$(wc -w <<<"$placed")
  job_dir "$name"
  for ((r = 0; r < n; r++)); do counts+=($((ROWS / n))); done
  split_rows "$T/rows.csv" "${counts[@]}"
  echo "$n ranks, $name ($placed), run $repeat of $REPEATS" >&2
  sync_job "$placed" 600 --model "$SPEC" --epochs "$EPOCHS" --batch-size "$BATCH" --seed 1 >job.log
  python3 - "$n" "$name" out.* >>"$T/table" <<'PY'
import json, sys
n, name, files = sys.argv[1], sys.argv[2], sys.argv[3:]
s = [json.loads(l[2:]) for f in files for l in open(f) if l.startswith("S\t")]
last = [x["history"][-1] for x in s]
per_step = sum(e["allreduce_seconds"] / e["steps"] for e in last) / len(last)
share = sum(e["allreduce_seconds"] / e["seconds"] for e in last) / len(last)
rank0 = [x for x in s if x["rank"] == 0][0]["history"][-1]
print("%s\t%s\t%.3f\t%.0f%%\t%.0f\t%d\t%s" % (n, name, per_step * 1000, share * 100,
      rank0["samples_per_second"], rank0["steps"], s[0]["weights_crc32"]))
PY
}

: >"$T/table"
for ((repeat = 1; repeat <= REPEATS; repeat++)); do
  for n in $RANKS; do
    case $n in
      2) measure "1 host" "h1 h1"; measure "2 hosts" "h1 h2" ;;
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
echo "Sync training through the tracker, $ROWS rows, batch $BATCH a rank, epoch $EPOCHS of $EPOCHS," \
  "median of $REPEATS run(s) (docker0: $DEAD; $(getconf _NPROCESSORS_ONLN) cores, load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$T/table" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    n, layout, ms, share, sps, steps, crc = line.rstrip("\n").split("\t")
    rows.setdefault((n, layout), []).append((float(ms), float(share.rstrip("%")), float(sps), steps, crc))
fmt = "%-6s %-13s %22s %15s %11s %6s %9s"
print(fmt % ("ranks", "layout", "all-reduce a step (ms)", "share of epoch", "samples/s", "steps", "weights"))
base = {}
for (n, layout), runs in rows.items():
    ms = statistics.median(r[0] for r in runs)
    if layout == "1 host":
        base[n] = ms
    ratio = " (%.1fx)" % (ms / base[n]) if layout != "1 host" and base.get(n) else ""
    crcs = sorted(set(r[4] for r in runs))
    print(fmt % (n, layout, "%.3f%s" % (ms, ratio), "%.0f%%" % statistics.median(r[1] for r in runs),
                 "%.0f" % statistics.median(r[2] for r in runs), runs[0][3], ",".join(crcs)))
PY

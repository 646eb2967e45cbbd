#!/usr/bin/env bash
# Ranks started as plain processes and bootstrapped by `sparktorch serve` (as Spark tasks are)
# train the same model as mpirun with the same ranks and rows; uneven and empty partitions
# finish, and every rank ends with the same weights (man sparktorch, SYNCHRONOUS TRAINING).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sync_lib.sh"
setup_workdir sync_tracker
require_data train2k.csv
write_mlp_spec spec.json
COMMON=(--model spec.json --epochs 2 --batch-size 32 --seed 5)

# tracker_run N [serve flags]: ranks 0..N-1 on part0.csv... through a tracker; all must exit 0.
tracker_run() {
  local n=$1 r
  shift
  start_tracker "$n" "$@"
  for ((r = 0; r < n; r++)); do start_rank "$r" "$n" "part$r.csv" "${COMMON[@]}"; done
  for ((r = 0; r < n; r++)); do
    wait_for "${RANK_PID[r]}"
    assert_eq 0 "$RC" "rank $r's exit status ($(cat "err.$r"))"
  done
  wait_for "$TRACKER_PID"
  assert_eq 0 "$RC" "the tracker's exit status ($(tail -3 tracker.err))"
  grep -q "all $n ranks finished" tracker.err || fail "the tracker did not log that all ranks finished"
  for ((r = 0; r < n; r++)); do
    assert_eq "$(summary_field out.0 weights_crc32)" "$(summary_field "out.$r" weights_crc32)" \
      "rank $r's weights checksum against rank 0's"
  done
}

# mpirun_run N: the same ranks and rows under mpirun (one input file a rank).
mpirun_run() {
  local n=$1 files=() r rc=0
  for ((r = 0; r < n; r++)); do files+=("part$r.csv"); done
  mpirun -np "$n" sh -c 'exec "$0" -q train "$@" >"mpi.$OMPI_COMM_WORLD_RANK"' \
    "$SPARKTORCH" "${COMMON[@]}" --input "${files[@]}" >mpirun.log 2>&1 || rc=$?
  assert_eq 0 "$rc" "mpirun's exit status ($(tail -5 mpirun.log))"
}

for n in 2 3 4; do
  check "$n ranks through the tracker: the same weights as mpirun -np $n with the same rows"
  counts=()
  for ((r = 0; r < n; r++)); do counts+=($((120 + 40 * r))); done
  split_rows "$DATA/train2k.csv" "${counts[@]}"
  tracker_run "$n"
  mpirun_run "$n"
  assert_eq "$(summary_field mpi.0 weights_crc32)" "$(summary_field out.0 weights_crc32)" \
    "weights checksum, mpirun against the tracker"
  assert_eq "${counts[n - 1]}" "$(summary_field "out.$((n - 1))" partition_rows)" "rows of the last rank"
done

check "uneven partitions (1000, 10 and 0 rows): every rank finishes with the same weights"
split_rows "$DATA/train2k.csv" 1000 10 0
tracker_run 3
assert_eq 1010 "$(summary_field out.0 rows)" "rows trained on in the last epoch, all ranks"
assert_eq 32 "$(summary_field out.2 steps)" "steps of the empty rank (those of the largest)"
assert_eq 0 "$(summary_field out.2 partition_rows)" "rows of the empty rank"
grep -q "no rows in this partition; it takes part in every step with none" err.2 ||
  fail "the empty rank did not say it has no rows: $(cat err.2)"

# Open MPI takes a job id as a 16-bit family over a 16-bit local job and its ranks only agree
# on their names when the local job is 1; any other --job-id is mapped onto that form.
check "serve --job-id 1498728580 (local job bits not 1): the ranks, given that id, train together"
split_rows "$DATA/train2k.csv" 200 200
SPARKTORCH_JOB_ID=1498728580 tracker_run 2 --job-id 1498728580
grep -q "job 1498728580" tracker.err || fail "the tracker did not name job 1498728580: $(cat tracker.err)"

# The Spark driver binds serve's socket itself and hands it over (serve --listen-fd), so that
# the tasks can start, and connect, before serve has started.
check "serve --listen-fd: ranks that connect before serve starts are served; the same weights"
split_rows "$DATA/train2k.csv" 300 200
tracker_run 2
expected=$(summary_field out.0 weights_crc32)
rm -f tracker.port
# Binds 127.0.0.1:0, says where, waits 1.5 s (the ranks connect meanwhile), then becomes serve.
python3 -c '
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
os.set_inheritable(s.fileno(), True)
with open("tracker.port.tmp", "w") as f:
    f.write("127.0.0.1:%d\n" % s.getsockname()[1])
os.rename("tracker.port.tmp", "tracker.port")
time.sleep(1.5)
os.execv(sys.argv[1], sys.argv[1:] + ["--listen-fd", str(s.fileno())])
' "$SPARKTORCH" serve --world-size 2 --port-file tracker.served 2>tracker.err &
TRACKER_PID=$!
wait_port_file "$TRACKER_PID" tracker.port tracker tracker.err
TRACKER=$(cat tracker.port)
started=$(now)
for r in 0 1; do start_rank "$r" 2 "part$r.csv" "${COMMON[@]}"; done
for r in 0 1; do
  wait_for "${RANK_PID[r]}"
  assert_eq 0 "$RC" "rank $r's exit status ($(cat "err.$r"))"
done
wait_for "$TRACKER_PID"
assert_eq 0 "$RC" "the tracker's exit status ($(tail -3 tracker.err))"
assert_eq "$expected" "$(summary_field out.0 weights_crc32)" "weights checksum, --listen-fd against --listen"
assert_eq "$TRACKER" "$(cat tracker.served)" "the address serve wrote to --port-file"
grep -q "listening on $TRACKER" tracker.err || fail "serve did not log its address: $(cat tracker.err)"

check "serve --listen-fd refuses what is not a listening socket, and a wildcard one without a secret"
expect_exit 2 "sparktorch: error: --listen-fd 0: not a listening IPv4 TCP socket: Socket operation on non-socket" \
  -- "$SPARKTORCH" -q serve --world-size 1 --listen-fd 0 </dev/null
rc=0
python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
os.set_inheritable(s.fileno(), True)
os.dup2(s.fileno(), 5)
os.execv(sys.argv[1], sys.argv[1:])
' "$SPARKTORCH" -q serve --world-size 1 --listen-fd 5 >last.out 2>last.err || rc=$?
assert_eq 2 "$rc" "serve's exit status with a socket that does not listen"
assert_eq "sparktorch: error: --listen-fd 5: not a listening IPv4 TCP socket" "$(cat last.err)" "serve's message"
rc=0
env -u SPARKTORCH_SECRET python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen(1)
os.dup2(s.fileno(), 5)
print(s.getsockname()[1], flush=True)
os.execv(sys.argv[1], sys.argv[1:])
' "$SPARKTORCH" -q serve --world-size 1 --listen-fd 5 >last.out 2>last.err || rc=$?
assert_eq 2 "$rc" "serve's exit status with 0.0.0.0 and no secret"
port=$(head -1 last.out)
assert_eq "sparktorch: error: --listen-fd 5: the socket listens on 0.0.0.0:$port; without SPARKTORCH_SECRET the tracker listens on loopback only; set a per-job secret in SPARKTORCH_SECRET (for the tracker and every one of its ranks)" \
  "$(cat last.err)" "serve's message"

# Ranks met through the tracker talk over TCP, Open MPI's ob1: they name it, so that MPI_Init
# does not first load the cm PML and its fabric libraries (PSM, PSM2: a quarter of a second of
# every rank's start on a machine without them). A user's OMPI_MCA_pml still wins.
check "tracker ranks open only Open MPI's ob1 PML; a user's OMPI_MCA_pml wins"
split_rows "$DATA/train2k.csv" 300 200  # the rows of the --listen-fd check: $expected
OMPI_MCA_pml_base_verbose=10 tracker_run 2
for r in 0 1; do
  grep -q "components_open: found loaded component ob1" "err.$r" ||
    fail "rank $r did not open ob1: $(grep -i pml "err.$r")"
  ! grep -q "found loaded component cm" "err.$r" || fail "rank $r loaded the cm PML: $(grep -i pml "err.$r")"
done
assert_eq "$expected" "$(summary_field out.0 weights_crc32)" "weights checksum with ob1 named"
OMPI_MCA_pml=ob1,cm OMPI_MCA_pml_base_verbose=10 tracker_run 2
grep -q "found loaded component cm" err.0 || fail "rank 0 did not take the user's OMPI_MCA_pml=ob1,cm: $(grep -i pml err.0)"
assert_eq "$expected" "$(summary_field out.0 weights_crc32)" "weights checksum with the user's PML list"

# The Spark layer's ranks send the trained model to serve (train --send-model), which writes
# it (serve --output): no base64 text through the tasks' stdout, the JVM and the driver.
check "train --send-model: serve --output writes rank 0's model, the file its records carry; no records on stdout"
split_rows "$DATA/train2k.csv" 300 200
# With checkpoints (which this serve drops): the model goes after them and the epochs' reports.
COMMON+=(--checkpoint-every 1)
tracker_run 2
"$SPARKTORCH" -q unpack --output records.pt <out.0 >/dev/null || fail "sparktorch unpack failed"
COMMON+=(--send-model)
tracker_run 2 --output sent.pt
order=$(grep -oE "epoch [12]/2|the trained model from rank 0 \(.* MB\) written to sent.pt|rank 0 finished" tracker.err |
  sed 's/ (.* MB)//' | paste -sd ';')
assert_eq "epoch 1/2;epoch 2/2;the trained model from rank 0 written to sent.pt;rank 0 finished" "$order" \
  "what serve logged, in order"
# The same model but for the manifest's timings: every other member of the zip byte for byte.
same=$(python3 -c '
import json, sys, zipfile
def members(path):
    z = zipfile.ZipFile(path)
    out = {n: z.read(n) for n in z.namelist()}
    for n in out:
        if n.endswith("extra/sparktorch.json"):
            m = json.loads(out[n])
            for entry in m["history"] + [m["metrics"]]:
                for key in ("allreduce_seconds", "elapsed", "samples_per_second", "seconds"):
                    entry.pop(key)
            out[n] = json.dumps(m, sort_keys=True).encode()
    return out
a, b = members(sys.argv[1]), members(sys.argv[2])
print("same" if a == b else "differ in " + ", ".join(n for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)))
' records.pt sent.pt)
assert_eq same "$same" "the model serve wrote against the one rank 0's records carry (all but timings)"
for r in 0 1; do
  ! grep -q "^[ME]"$'\t' "out.$r" || fail "rank $r wrote model records with --send-model"
done
assert_eq "$(summary_field out.1 weights_crc32)" "$(summary_field out.0 weights_crc32)" "weights checksums"

check "train --send-model to a serve without --output: the job fails (76), saying why"
start_tracker 2
for r in 0 1; do start_rank "$r" 2 "part$r.csv" "${COMMON[@]}"; done
for r in 0 1; do wait_for "${RANK_PID[r]}"; done
wait_for "$TRACKER_PID"
assert_eq 76 "$RC" "serve's exit status"
assert_eq "sparktorch: error: rank 0 sent its trained model, and the tracker could not keep it: this tracker keeps no model (serve without --output FILE)" \
  "$(tail -1 tracker.err)" "serve's message"

check "train --send-model needs --tracker, and excludes --output"
expect_exit 2 "sparktorch: error: --send-model needs --tracker: the model goes to the tracker's serve" \
  -- "$SPARKTORCH" -q train --model spec.json --epochs 1 --send-model --input part0.csv
expect_exit 2 "sparktorch: error: --output excludes --send-model (run sparktorch --help, or sparktorch COMMAND --help)" \
  -- "$SPARKTORCH" -q train --model spec.json --send-model --output x.pt --input part0.csv
COMMON=("${COMMON[@]:0:${#COMMON[@]}-3}")

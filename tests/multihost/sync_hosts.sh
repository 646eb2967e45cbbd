#!/usr/bin/env bash
# Synchronous training through the tracker across simulated hosts (netns_lib.sh), each with a
# docker0 that has the same address on every host, and nothing set by the user to steer Open
# MPI: 3 ranks on 3 hosts, and 2 ranks on each of 2 hosts, finish with the same weights on every
# rank, equal to the same job's on one host; between hosts the ranks all-reduce over TCP on
# eth0, never docker0, and the ranks of one host over shared memory (no TCP between them); with
# gradients in 16 bits (--allreduce-dtype bf16) and with the all-reduce in buckets while the
# backward pass runs (--allreduce-overlap) too.
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
source "$HERE/../integration/lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
source "$HERE/netns_lib.sh"
# shellcheck source-path=SCRIPTDIR source=job_lib.sh
source "$HERE/job_lib.sh"
setup_workdir multihost_sync_hosts
require_data train2k.csv
mh_setup 3 same
write_mlp_spec "$T/spec.json"
COMMON=(--model "$T/spec.json" --batch-size 32 --seed 5)

check "3 ranks on 3 hosts (rows 300, 340 and 380): every rank finishes with the same weights"
job_dir hosts3
split_rows "$DATA/train2k.csv" 300 340 380
sync_job "h1 h2 h3" 120 "${COMMON[@]}" --epochs 2
ACROSS=$CRC
for r in 0 1 2; do assert_mpi_over "$r" eth0 "$MH_BRIDGE_NET"; done

check "... the same weights as the same 3 ranks on one host"
job_dir host1
split_rows "$DATA/train2k.csv" 300 340 380
sync_job "h1 h1 h1" 120 "${COMMON[@]}" --epochs 2
assert_eq "$CRC" "$ACROSS" "weights checksum, 3 hosts against 1 host"

check "3 ranks on 3 hosts with gradients in 16 bits (--allreduce-dtype bf16): the same weights as on one host"
job_dir hosts3_bf16
split_rows "$DATA/train2k.csv" 300 340 380
sync_job "h1 h2 h3" 120 "${COMMON[@]}" --epochs 2 --allreduce-dtype bf16
ACROSS16=$CRC
assert_ne "$ACROSS" "$ACROSS16" "weights checksum, bf16 against fp32"
job_dir host1_bf16
split_rows "$DATA/train2k.csv" 300 340 380
sync_job "h1 h1 h1" 120 "${COMMON[@]}" --epochs 2 --allreduce-dtype bf16
assert_eq "$CRC" "$ACROSS16" "weights checksum of bf16, 3 hosts against 1 host"

check "3 ranks on 3 hosts with the all-reduce in buckets while backward runs: the same weights"
job_dir hosts3_overlap
split_rows "$DATA/train2k.csv" 300 340 380
sync_job "h1 h2 h3" 120 "${COMMON[@]}" --epochs 2 --allreduce-overlap
assert_eq "$CRC" "$ACROSS" "weights checksum, overlapped against one all-reduce"

# tcp_peers HOST: the remote addresses of HOST's established TCP connections, one a line, but
# those with the driver (the ranks' connections to the tracker); nothing (not a silent exit under
# pipefail) when there are none.
tcp_peers() {
  mh_run "$1" ss -Htn state established | awk '{ print $3, $4 }' |
    { grep -v ":.* $(mh_addr driver):" || true; } | awk '{ sub(/:[0-9]+$/, "", $2); print $2 }' |
    sort -u
}

check "2 ranks on each of 2 hosts: the same weights as 4 ranks on one host"
job_dir hosts2x2
split_rows "$DATA/train2k.csv" 250 250 250 250
# Long enough (16 epochs) to look at the connections while it trains: with 8 a loaded machine
# once saw the job end before it looked.
start_tracker 4
for r in 0 1 2 3; do
  start_rank "h$((r / 2 + 1))" "$r" 4 "part$r.csv" "${COMMON[@]}" --epochs 16 --metrics "metrics.$r"
done
wait_file_line metrics.0 '"epoch"' 90 "rank 0's first epoch" "${RANK_PID[0]}"
peers1=$(tcp_peers h1 | tr '\n' ' ')
peers2=$(tcp_peers h2 | tr '\n' ' ')
for r in 0 1 2 3; do
  wait_job_process "${RANK_PID[r]}" 120 "rank $r" "err.$r"
  assert_exit0 "rank $r (on h$((r / 2 + 1)))" "err.$r"
done
wait_job_process "$TRACKER_PID" 15 "the tracker" tracker.err
assert_exit0 "the tracker" tracker.err
assert_same_weights 4
for r in 0 1 2 3; do assert_mpi_over "$r" eth0 "$MH_BRIDGE_NET"; done
check "... TCP goes between the hosts over eth0; the 2 ranks of a host share memory instead"
assert_eq "$(mh_addr h2) " "$peers1" "h1's TCP peers (but the tracker) while training"
assert_eq "$(mh_addr h1) " "$peers2" "h2's TCP peers (but the tracker) while training"
ACROSS=$CRC
job_dir host1x4
split_rows "$DATA/train2k.csv" 250 250 250 250
sync_job "h1 h1 h1 h1" 120 "${COMMON[@]}" --epochs 16
assert_eq "$CRC" "$ACROSS" "weights checksum, 2 hosts of 2 ranks against 1 host of 4"

#!/usr/bin/env bash
# A hogwild job survives what it should and fails clearly where it cannot go on: a worker killed
# with kill -9 is reported lost while the others finish the job; a lost parameter server ends
# every worker with exit 75 within seconds; garbage, oversized and truncated frames and a worker
# with the wrong secret are refused (each logged) while a real job trains on; a worker with a bad
# row reports its failure to the server, which goes on at once; without a secret
# the server listens on loopback only; usage errors, a server whose workers never come and a
# worker with no server to reach exit with their documented codes and messages.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hogwild_lib.sh"
setup_workdir hogwild_faults
require_data train12k.csv test2k.csv test2k.labels
unset SPARKTORCH_SECRET

# assert_gone_within PID SECONDS CODE WHAT: PID exits with CODE within SECONDS of $KILLED.
assert_gone_within() {
  wait_for "$1"
  assert_eq "$3" "$RC" "$4's exit status"
  assert_cmp "$(python3 -c "print(round($(now) - $KILLED, 1))")" "<" "$2" "seconds until $4 ended"
}

# still_running PID WHAT: fails when PID has already exited (the test's job was too short).
still_running() {
  kill -0 "$1" 2>/dev/null || fail "$2 ended before the fault was injected; make the job longer"
}

check "kill -9 of worker 1 of 3 mid-run: workers 0 and 2 and the server finish; worker 1 is lost"
split_rows "$DATA/train12k.csv" 2000 2000 2000
start_server 3
start_workers 3 8
wait_log server.err "epoch 1/8: .* \| 3 workers, "
still_running "${WORKER_PID[1]}" "worker 1"
kill -9 "${WORKER_PID[1]}"
wait_for "${WORKER_PID[1]}"
assert_eq 137 "$RC" "the killed worker's exit status (SIGKILL)"
for i in 0 2; do
  wait_for "${WORKER_PID[i]}"
  assert_eq 0 "$RC" "worker $i's exit status ($(tail -3 "err.$i"))"
done
wait_for "$SERVER_PID"
assert_eq 0 "$RC" "the server's exit status ($(tail -3 server.err))"
[[ -s model.pt ]] || fail "the server wrote no model.pt"
assert_eq "[0, 2]" "$(summary_eval server.out 'sorted(s["workers_finished"])')" \
  "server summary: workers_finished"
assert_eq "[1]" "$(summary_eval server.out '[w["worker"] for w in s["workers_lost"]]')" \
  "server summary: the workers in workers_lost"
echo "  (reason: $(summary_eval server.out 's["workers_lost"][0]["reason"]'))"
assert_eq 8 "$(summary_field server.out epochs)" "server summary: epochs"
assert_eq 2 "$(summary_field server.out workers)" "server summary: workers in the last epoch"
grep -qE "worker 1 \(.*\) lost: .+; the job goes on with the others$" server.err ||
  fail "the server did not warn that worker 1 was lost: $(tail -5 server.err)"
grep -qE "epoch 8/8: .* \| 2 workers, " server.err ||
  fail "the server did not finish the epochs with the 2 workers left: $(tail -5 server.err)"
# Worker 1's gradients of the first epoch count too: more updates than the others pushed.
assert_cmp "$(summary_field server.out updates)" ">" \
  "$(($(summary_field out.0 pushes) + $(summary_field out.2 pushes)))" \
  "server summary: updates, against the pushes of workers 0 and 2"
assert_cmp "$(test_accuracy model.pt)" ">=" 0.75 \
  "test accuracy of the model (measured 0.80-0.85)"

check "the server is killed with kill -9 mid-run: every worker exits 75 within 15 s, naming it"
split_rows "$DATA/train12k.csv" 3000 3000
start_server 2
start_workers 2 50 --predict
wait_log server.err "epoch 1/50: .* \| 2 workers, "
still_running "$SERVER_PID" "the server"
KILLED=$(now)
kill -9 "$SERVER_PID"
for i in 0 1; do
  assert_gone_within "${WORKER_PID[i]}" 15 75 "worker $i"
  grep -q "^sparktorch: error: lost the parameter server at $SERVER: " "err.$i" ||
    fail "worker $i did not say it lost the parameter server at $SERVER: $(tail -3 "err.$i")"
  echo "  ok: worker $i: '$(tail -n 1 "err.$i")'"
  [[ ! -s "out.$i" ]] || fail "worker $i left records behind: $(head -c 200 "out.$i")"
done
wait_for "$SERVER_PID"

check "with SPARKTORCH_SECRET, while a 2-worker job trains: bad frames and a wrong secret are refused"
export SPARKTORCH_SECRET=hogwild-integration-secret
# Long enough (10 epochs) to be trained on while the bad clients come and go.
split_rows "$DATA/train12k.csv" 4000 4000
start_server 2
start_workers 2 10
wait_log server.err "worker 1 joined"
wait_log server.err "worker 0 joined"
# Both workers are stopped (SIGSTOP) until the bad clients are done, so that the job is still
# running then on however loaded a machine (worker 1 once finished first, later worker 0, in a
# full ctest -j2); the server alone meets the bad clients, and the job goes on after them.
kill -STOP "${WORKER_PID[0]}" "${WORKER_PID[1]}"
# The worker with the wrong secret (on 10 rows, quick to read) and, meanwhile, 4 bad clients.
head -n 10 part0.csv >wrong.csv
SPARKTORCH_SECRET=wrong "$SPARKTORCH" -q train --mode hogwild --server "$SERVER" --rank 0 \
  --world-size 2 --label-col 0 -e 1 <wrong.csv >wrong.out 2>wrong.err &
WRONG_PID=$!
# Each bad client reads the server's Challenge, sends its bytes, and must then see the
# connection closed with nothing more said (a peer that has not proved the secret is told
# nothing). Prints KIND PORT (its local port, which the server's log line names).
python3 - "$SERVER" >bad_clients.txt <<'PY' || fail "a bad client failed"
import socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
BAD = {
    # text where a frame should be: its first 4 bytes ("GET ") read as a length
    "garbage": b"GET / HTTP/1.1\r\nHost: sparktorch\r\n\r\n",
    # a frame of 16 bytes that are no protobuf message
    "malformed": struct.pack("<I", 16) + b"\xff" * 16,
    # a length prefix of 0xFFFFFF00
    "oversized": struct.pack("<I", 0xFFFFFF00) + b"\x00" * 64,
    # says 100 bytes, sends 10, then closes its side
    "truncated": struct.pack("<I", 100) + b"\x0a" * 10,
}
for kind, data in BAD.items():
    s = socket.create_connection((host, int(port)), timeout=30)
    def read(n):
        got = b""
        while len(got) < n:
            chunk = s.recv(n - len(got))
            if not chunk:
                sys.exit("%s: the server closed the connection before its challenge" % kind)
            got += chunk
        return got
    (length,) = struct.unpack("<I", read(4))
    assert 0 < length < 65536 and read(length)[:1] == b"\x0a", "%s: not a Challenge" % kind
    s.sendall(data)
    if kind == "truncated":
        s.shutdown(socket.SHUT_WR)
    print(kind, s.getsockname()[1], flush=True)
    try:  # a reset is a close too (the server closes with our bytes unread in its buffer)
        extra = s.recv(4096)
    except ConnectionResetError:
        extra = b""
    assert extra == b"", "%s: the server answered with %r" % (kind, extra[:64])
    s.close()
PY
# assert_refused KIND LOG: the server logged LOG for the KIND client's connection.
assert_refused() {
  local port
  port=$(awk -v k="$1" '$1 == k { print $2 }' bad_clients.txt)
  [[ -n $port ]] || fail "no $1 client in bad_clients.txt: $(cat bad_clients.txt)"
  wait_log server.err "refused a connection from [0-9.]+:$port: $2" 10
  echo "  ok: $1 refused: $(grep -oE "refused a connection from [0-9.]+:$port: .*" server.err)"
}
assert_refused garbage \
  "frame of 542393671 bytes is over the limit of 65536 \(before authenticating\)$"
assert_refused malformed "malformed message.* \(before authenticating\)$"
assert_refused oversized \
  "frame of 4294967040 bytes is over the limit of 65536 \(before authenticating\)$"
assert_refused truncated \
  "connection closed in the middle of a frame of 100 bytes \(before authenticating\)$"
wait_for "$WRONG_PID"
assert_eq 77 "$RC" "exit status of a worker with the wrong secret"
assert_eq "sparktorch: error: the parameter server at $SERVER closed the connection without an answer (a wrong SPARKTORCH_SECRET?)" \
  "$(cat wrong.err)" "stderr of the worker with the wrong secret"
[[ ! -s wrong.out ]] || fail "the worker with the wrong secret wrote records: $(head -c 200 wrong.out)"
wait_log server.err \
  "refused a connection from [0-9.]+:[0-9]+: authentication failed \(worker 0 does not know this job's SPARKTORCH_SECRET\)$" 10
echo "  ok: wrong secret refused: $(grep -o "refused a connection from .*: authentication failed.*" server.err)"
still_running "${WORKER_PID[0]}" "the real job's worker 0"
still_running "${WORKER_PID[1]}" "the real job's worker 1"
kill -CONT "${WORKER_PID[0]}" "${WORKER_PID[1]}"
check "... and the real job finishes undisturbed"
finish_job 2
assert_job_summary 2
assert_eq 5 "$(summary_field server.out refused_connections)" "server summary: refused_connections"
assert_eq 10 "$(summary_field server.out epochs)" "server summary: epochs"
assert_cmp "$(test_accuracy model.pt)" ">=" 0.79 "test accuracy (measured 0.84-0.86)"
unset SPARKTORCH_SECRET

check "without SPARKTORCH_SECRET, --listen 0.0.0.0:0 falls back to 127.0.0.1 (with a warning)"
split_rows "$DATA/train12k.csv" 500
start_server 1 --listen 0.0.0.0:0
[[ $SERVER == 127.0.0.1:* ]] || fail "the server listens at $SERVER, not on 127.0.0.1"
echo "  ok: listening at $SERVER"
grep -q "warning: no SPARKTORCH_SECRET: listening on 127.0.0.1 only" server.err ||
  fail "the server did not warn that it listens on 127.0.0.1 only: $(cat server.err)"
# Not reachable on this host's other addresses.
for address in $(hostname -I 2>/dev/null || true); do
  [[ $address == *.*.*.* && $address != 127.* ]] || continue
  if python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 2)' \
    "$address" "${SERVER#*:}" 2>/dev/null; then
    fail "the server without a secret accepts connections on $address"
  fi
  echo "  ok: no connection on $address:${SERVER#*:}"
done
start_workers 1 1
finish_job 1
assert_job_summary 1

check "without SPARKTORCH_SECRET, --listen on a non-loopback address is a usage error"
expect_exit 2 "sparktorch: error: --listen 10.1.2.3:0: without SPARKTORCH_SECRET the parameter server listens on loopback only; set a per-job secret in SPARKTORCH_SECRET (for the parameter server and every one of its workers)" \
  --stdout-empty -- "$SPARKTORCH" -q serve --mode hogwild -n 1 --model "$MLP_SPEC" \
  --listen 10.1.2.3:0

check "usage errors of a hogwild worker: exit 2, nothing on stdout"
# expect_usage FLAG CMD...: CMD (with part0.csv on stdin) exits 2 with one line on stderr saying
# that FLAG belongs to `sparktorch serve`, and nothing on stdout.
expect_usage() {
  local flag=$1 rc=0
  shift
  "$@" <part0.csv >last.out 2>last.err || rc=$?
  assert_eq 2 "$rc" "exit status with $flag"
  assert_eq 1 "$(wc -l <last.err)" "lines on stderr with $flag ($(head -c 300 last.err))"
  grep -qxE "sparktorch: error: $flag: a hogwild worker takes the model and its training from the parameter server.*; give $flag to \`sparktorch serve\`" last.err ||
    fail "with $flag: expected 'sparktorch: error: $flag: a hogwild worker takes the model and its training from the parameter server ... give $flag to \`sparktorch serve\`', got: $(cat last.err)"
  [[ ! -s last.out ]] || fail "with $flag: expected nothing on stdout, got: $(head -c 200 last.out)"
  echo "  ok: $flag: $(cat last.err)"
}
WORKER=("$SPARKTORCH" -q train --mode hogwild --server 127.0.0.1:9 --rank 0 --world-size 1)
expect_usage --model "${WORKER[@]}" --model "$MLP_SPEC"
expect_usage --loss "${WORKER[@]}" --loss mse
expect_usage --optimizer "${WORKER[@]}" --optimizer sgd
expect_usage --lr "${WORKER[@]}" --lr 0.1
expect_usage --train-config "${WORKER[@]}" --train-config "$MLP_SPEC"
expect_usage --early-stop-patience "${WORKER[@]}" --early-stop-patience 2
expect_usage --output "${WORKER[@]}" --output x.pt
# from_rows CMD...: CMD with part0.csv on stdin.
from_rows() { "$@" <part0.csv; }
expect_exit 2 "sparktorch: error: --mode hogwild needs --server HOST:PORT (of \`sparktorch serve --mode hogwild\`)" \
  --stdout-empty -- from_rows "$SPARKTORCH" -q train --mode hogwild --rank 0 --world-size 1

check "a worker with a bad row tells the server why; the job goes on with the other at once"
split_rows "$DATA/train12k.csv" 1000 1000
sed -i '5s/^[0-9]*,/oops,/' part1.csv
# The server's --timeout is long: the job must end because worker 1 said it failed, not because
# the server gave up waiting for it.
start_server 2 --timeout 100
start_workers 2 2
wait_for "${WORKER_PID[1]}"
assert_eq 3 "$RC" "the worker with the bad row: exit status"
assert_eq 'sparktorch: error: stdin:5:1: expected a number, got "oops"' "$(tail -n 1 err.1)" \
  "the worker with the bad row: its message"
wait_for "${WORKER_PID[0]}"
assert_eq 0 "$RC" "worker 0's exit status ($(tail -3 err.0))"
wait_for "$SERVER_PID"
assert_eq 0 "$RC" "the server's exit status ($(tail -3 server.err))"
assert_eq "[1]" "$(summary_eval server.out '[w["worker"] for w in s["workers_lost"]]')" \
  "server summary: the workers in workers_lost"
assert_eq 'failed: stdin:5:1: expected a number, got "oops"' \
  "$(summary_eval server.out 's["workers_lost"][0]["reason"]')" "server summary: why worker 1 was lost"
assert_cmp "$(summary_field server.out total_seconds)" "<" 60 \
  "server summary: total_seconds (it did not wait out its --timeout of 100 s)"

check "a server whose workers never connect (--timeout 3) exits 75 naming them"
rc=0
timeout 60 "$SPARKTORCH" serve --mode hogwild -n 2 --model "$MLP_SPEC" --port-file never.port \
  --timeout 3 -o never.pt >never.out 2>never.err || rc=$?
assert_eq 75 "$rc" "the server's exit status"
assert_eq "sparktorch: error: no worker finished, so there is no model (worker 0: never connected within 3 s; worker 1: never connected within 3 s)" \
  "$(tail -n 1 never.err)" "the server's last line on stderr"
[[ ! -e never.pt ]] || fail "the server wrote never.pt without a worker"
[[ ! -s never.out ]] || fail "the server wrote records without a worker: $(head -c 200 never.out)"

check "a worker with no server at its address (--timeout 2) exits 69"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect_exit 69 "sparktorch: error: cannot reach the parameter server at 127.0.0.1:$port: Connection refused" \
  --stdout-empty -- timeout 60 "$SPARKTORCH" -q train --mode hogwild --server "127.0.0.1:$port" \
  --rank 0 --world-size 1 --label-col 0 --timeout 2 --input part0.csv

#!/usr/bin/env bash
# The simulated hosts of netns_lib.sh are what the other multihost tests take them for: each host
# has its own host name, resolves every other's, reaches the others over the bridge
# (198.18.0.0/24) and has a second interface (docker0, 198.19.0.1/16 on every host) that leads
# nowhere; a host's processes can be killed and its link cut; the host's own network and
# /etc/hosts are left alone; and everything is torn down on exit, also when a check fails.
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../integration/lib.sh
source "$HERE/../integration/lib.sh"
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
source "$HERE/netns_lib.sh"
setup_workdir multihost_harness

links_before=$(ip -o link show | awk -F': ' '{ print $2 }' | sort | tr '\n' ' ')
hosts_before=$(cksum </etc/hosts)
mh_setup 3 same

check "every host has its own host name, and resolves every host's name to its address"
for host in "${MH_HOSTS[@]}"; do
  assert_eq "$(mh_hostname "$host")" "$(mh_run "$host" hostname)" "the host name on $host"
  for other in "${MH_HOSTS[@]}"; do
    resolved=$(mh_run "$host" getent hosts "$(mh_hostname "$other")" | awk '{ print $1 }')
    [[ $resolved == "$(mh_addr "$other")" ]] ||
      fail "$host resolves $(mh_hostname "$other") to '$resolved', not $(mh_addr "$other")"
  done
  echo "  ok: $host resolves the ${#MH_HOSTS[@]} hosts' names"
done

check "every host has eth0 on the bridge and docker0 (198.19.0.1/16, up, no port)"
for host in "${MH_HOSTS[@]}"; do
  addrs=$(mh_run "$host" ip -o -4 addr show | awk '{ print $2, $4 }' | sort | tr '\n' ' ')
  assert_eq "docker0 198.19.0.1/16 eth0 $(mh_addr "$host")/24 lo 127.0.0.1/8 " "$addrs" \
    "the IPv4 addresses on $host"
  mh_run "$host" ip link show docker0 | grep -q "[<,]UP[,>]" || fail "docker0 is not up on $host"
done

# listen HOST ADDR PORT: a TCP listener on HOST that accepts one connection and writes the
# peer's address to listen.HOST; waits (up to 20 s) until it listens.
listen() {
  rm -f "listen.$1" "ready.$1"
  mh_bg "$1" timeout 30 python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(4)
open(sys.argv[3], "w").write("listening\n")
peer = s.accept()[1][0]
open(sys.argv[4], "w").write(peer + "\n")' "$2" "$3" "ready.$1" "listen.$1" </dev/null
  LISTENER=$BG_PID
  wait_file_line "ready.$1" listening 20 "the listener on $1" "$LISTENER"
}
# reach HOST ADDR PORT: whether HOST can open a TCP connection to ADDR:PORT within 3 s.
reach() {
  # shellcheck disable=SC2016 # $0 and $1 are the inner shell's
  mh_run "$1" timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$2" "$3" 2>/dev/null
}

check "h1 reaches h2 over the bridge, by name; the connection comes from h1's eth0 address"
listen h2 0.0.0.0 7001
reach h1 "$(mh_hostname h2)" 7001 || fail "h1 cannot reach h2 at $(mh_hostname h2):7001"
wait_bounded "$LISTENER" 10 "the listener on h2"
assert_eq "$(mh_addr h1)" "$(cat listen.h2)" "the peer address that h2 saw"

check "docker0 leads nowhere: h1 reaches no other host's 198.19.0.0/16 address"
listen h2 0.0.0.0 7002
if reach h1 198.19.0.2 7002; then fail "h1 reached 198.19.0.2 through docker0"; fi
echo "  ok: no connection from h1 to 198.19.0.2"
# ... and h2's docker0 address, 198.19.0.1, is h1's own: a connection to it stays on h1 (this is
# what makes Open MPI connect a process to itself when it picks docker0).
if reach h1 198.19.0.1 7002; then fail "h1 reached h2's listener at 198.19.0.1"; fi
echo "  ok: 198.19.0.1 from h1 is not h2"
kill "$LISTENER" 2>/dev/null || true
wait "$LISTENER" 2>/dev/null || true

check "mh_link_down cuts a host off; mh_link_up brings it back"
listen h2 0.0.0.0 7003
mh_link_down h2
if reach h1 "$(mh_addr h2)" 7003; then fail "h1 reached h2 with h2's link down"; fi
echo "  ok: h1 cannot reach h2 while its link is down"
mh_link_up h2
ok=0
for _ in $(seq 20); do
  reach h1 "$(mh_addr h2)" 7003 && { ok=1; break; }
  sleep 0.5
done
assert_eq 1 "$ok" "h1 reaches h2 once its link is up again"
wait_bounded "$LISTENER" 10 "the listener on h2"

check "mh_kill_host ends every process on a host, and only there"
mh_bg h2 sleep 300 </dev/null
on_h2=$BG_PID
mh_bg h3 sleep 300 </dev/null
on_h3=$BG_PID
mh_kill_host h2
wait_bounded "$on_h2" 5 "the process on h2"
assert_eq 137 "$RC" "the exit status of the process on h2 (SIGKILL)"
kill -0 "$on_h3" 2>/dev/null || fail "the process on h3 was killed too"
echo "  ok: the process on h3 still runs"
kill "$on_h3"
wait "$on_h3" 2>/dev/null || true

check "the host's own network and /etc/hosts are untouched"
assert_eq "$links_before" "$(ip -o link show | awk -F': ' '{ print $2 }' | sort | tr '\n' ' ')" \
  "the host's interfaces"
assert_eq "$hosts_before" "$(cksum </etc/hosts)" "the checksum of /etc/hosts"

check "a test that fails leaves nothing behind: its namespaces and processes are gone"
# A child test that builds 2 hosts, starts a process on h1 and fails.
# shellcheck disable=SC2016 # expanded by the child
bash -c '
  source "$0/../integration/lib.sh"
  source "$0/netns_lib.sh"
  mh_setup 2 distinct
  echo "$MH_PFX"
  mh_bg h1 sleep 300 </dev/null
  echo "$BG_PID"
  fail "a check failed (on purpose)"' "$HERE" >child.out 2>child.err && rc=0 || rc=$?
assert_eq 1 "$rc" "the failing child's exit status"
grep -q "FAIL: a check failed (on purpose)" child.err || fail "the child did not fail as meant: $(cat child.err)"
child_pfx=$(sed -n 1p child.out)
child_pid=$(sed -n 2p child.out)
[[ $child_pfx == stmh* && -n $child_pid ]] || fail "the child printed no prefix and pid: $(cat child.out)"
left=$(ip netns list | awk -v p="$child_pfx" 'index($1, p) == 1 { print $1 }' | tr '\n' ' ')
assert_eq "" "$left" "the child's namespaces left behind"
[[ -z $(ls -d "/etc/netns/$child_pfx"* 2>/dev/null) ]] || fail "the child left /etc/netns/$child_pfx*"
if kill -0 "$child_pid" 2>/dev/null; then fail "the child's process $child_pid still runs"; fi
echo "  ok: the child's process on h1 is gone"

check "this test's own teardown leaves nothing behind"
mh_teardown
mh_assert_torn_down

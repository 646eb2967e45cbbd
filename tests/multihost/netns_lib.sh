# shellcheck shell=bash
# Simulated hosts for the multihost tests (sourced after tests/integration/lib.sh): network
# namespaces on one bridge, each with its own host name, as Spark's driver and executors sit on
# different machines.
#
#   mh_setup N [DEAD]   builds the driver and hosts h1..hN:
#     - a switch namespace ($MH_PFX"sw") holds the bridge br0; nothing is added to the host's own
#       namespace (no interface, address or route), so two runs never clash;
#     - every simulated host is a namespace with lo and eth0 (a veth whose other end is a port of
#       br0): the driver 198.18.0.10/24, host i 198.18.0.(10+i)/24;
#     - and, as executors often have (docker's bridge), a second interface that leads nowhere:
#       docker0, a bridge with no port, up, at DEAD's address:
#         same      198.19.0.1/16 on every host (docker's default: every host has the same one)
#         distinct  198.19.i.1/24 on host i (198.19.0.1/24 on the driver)
#         none      no second interface
#     - an /etc/hosts (and a resolv.conf that fails at once) that every process started with
#       mh_run sees: `ip netns exec` binds /etc/netns/NS/hosts over /etc/hosts in its own mount
#       namespace; the real /etc/hosts is never touched.
#   mh_run HOST CMD...  runs CMD on HOST (driver, h1, h2, ...): in its network namespace and in a
#                       UTS namespace of its own whose host name is $(mh_hostname HOST).
#   mh_bg HOST CMD...   the same in the background, with the caller's redirections (stdin
#                       included); sets BG_PID to CMD's own process id (every step execs).
#   mh_kill_host HOST   kill -9 of every process on HOST.
#   mh_link_down HOST   sets HOST's eth0 down (its cable is cut).
#   mh_teardown         ends every process on the simulated hosts and deletes the namespaces and
#                       their files. mh_setup installs it as the EXIT trap (with the signals), so
#                       it runs however the test ends; a test with a trap of its own calls it.
#
# Names: every namespace and host name starts with $MH_PFX (stmh<PID of the test>); the
# interfaces live inside those namespaces, so their names (eth0, docker0, br0, p0...) cannot
# clash with the host's or another run's. A run killed before its trap (ctest's timeout sends
# SIGKILL) leaves namespaces behind; the next mh_setup deletes those whose process is gone.
#
# Without root, or where namespaces cannot be made, mh_setup prints one line why and exits 77,
# which CTest reports as skipped (SKIP_RETURN_CODE 77).

# shellcheck disable=SC2034 # MH_BRIDGE_NET, BG_PID and RC are for the tests that source this
MH_PFX=${MH_PFX:-stmh$$}
MH_SW=${MH_PFX}sw
MH_BRIDGE_NET=198.18.0.0/24
MH_HOSTS=()
MH_DEAD=none
MH_TORN_DOWN=0

# mh_skip WHY: the test cannot run here; one line, exit 77 (skipped), or 1 where CI=true.
mh_skip() {
  "$(dirname "${BASH_SOURCE[0]}")/../skip.sh" "multihost: $*"
  exit $?
}

# mh_ns HOST: the namespace of HOST.  mh_hostname HOST: its host name.  mh_addr HOST: its eth0
# address.
mh_ns() { echo "${MH_PFX}$1"; }
mh_hostname() { echo "${MH_PFX}$1"; }
mh_addr() {
  local i=0
  [[ $1 == driver ]] || i=${1#h}
  echo "198.18.0.$((10 + i))"
}

# mh_dead_addr HOST: the address of HOST's dead interface (empty without one).
mh_dead_addr() {
  local i=0
  [[ $1 == driver ]] || i=${1#h}
  case $MH_DEAD in
    same) echo 198.19.0.1 ;;
    distinct) echo "198.19.$i.1" ;;
    *) echo "" ;;
  esac
}

# mh_dead_cidr: the dead interface's network as Open MPI takes it (of h1).
mh_dead_cidr() {
  case $MH_DEAD in
    same) echo 198.19.0.0/16 ;;
    distinct) echo 198.19.1.0/24 ;;
    *) echo "" ;;
  esac
}

# mh_sweep_stale: deletes the namespaces of earlier runs whose test process is gone.
mh_sweep_stale() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
    [[ $ns =~ ^stmh([0-9]+)(sw|driver|h[0-9]+)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    [[ $pid == "$$" ]] && continue
    kill -0 "$pid" 2>/dev/null && continue
    mh_kill_ns "$ns"
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
}

# mh_kill_ns NS: kill -9 of every process in the namespace NS; waits (up to 5 s) until they are
# gone.
mh_kill_ns() {
  local pids i
  for i in $(seq 50); do
    pids=$(ip netns pids "$1" 2>/dev/null || true)
    [[ -z $pids ]] && return 0
    # shellcheck disable=SC2086 # one process id a word
    kill -9 $pids 2>/dev/null || true
    sleep 0.1
  done
  echo "multihost: processes still in $1 after 5 s: $pids" >&2
}

# mh_setup N [same|distinct|none]: see above.
mh_setup() {
  local n=$1 i host ns hosts_file
  MH_DEAD=${2:-same}
  [[ $(id -u) == 0 ]] || mh_skip "not root (network namespaces need root; CI runs these as root)"
  local tool
  for tool in ip unshare nsenter timeout; do
    command -v "$tool" >/dev/null || mh_skip "no $tool"
  done
  mh_sweep_stale
  trap mh_teardown EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  MH_TORN_DOWN=0
  ip netns add "$MH_SW" 2>/dev/null || mh_skip "cannot make a network namespace (ip netns add failed)"
  unshare --uts true 2>/dev/null || mh_skip "cannot make a UTS namespace (unshare --uts failed)"
  ip -n "$MH_SW" link set lo up
  ip -n "$MH_SW" link add br0 type bridge 2>/dev/null || mh_skip "cannot make a bridge"
  ip -n "$MH_SW" link set br0 up
  MH_HOSTS=(driver)
  for ((i = 1; i <= n; i++)); do MH_HOSTS+=("h$i"); done
  hosts_file=$(mktemp)
  {
    echo "127.0.0.1 localhost"
    for host in "${MH_HOSTS[@]}"; do echo "$(mh_addr "$host") $(mh_hostname "$host")"; done
  } >"$hosts_file"
  i=0
  for host in "${MH_HOSTS[@]}"; do
    ns=$(mh_ns "$host")
    ip netns add "$ns"
    ip -n "$MH_SW" link add "p$i" type veth peer name eth0 netns "$ns" ||
      mh_skip "cannot make a veth pair"
    ip -n "$MH_SW" link set "p$i" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$(mh_addr "$host")/24" dev eth0
    ip -n "$ns" link set eth0 up
    if [[ $MH_DEAD != none ]]; then
      ip -n "$ns" link add docker0 type bridge
      if [[ $MH_DEAD == same ]]; then
        ip -n "$ns" addr add 198.19.0.1/16 dev docker0
      else
        ip -n "$ns" addr add "$(mh_dead_addr "$host")/24" dev docker0
      fi
      ip -n "$ns" link set docker0 up
    fi
    mkdir -p "/etc/netns/$ns"
    cp "$hosts_file" "/etc/netns/$ns/hosts"
    printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"/etc/netns/$ns/resolv.conf"
    i=$((i + 1))
  done
  rm -f "$hosts_file"
  mh_wait_reachable
}

# mh_wait_reachable: waits (up to 10 s a host) until every host reaches the driver over TCP.
mh_wait_reachable() {
  local host i ok listener
  ip netns exec "$(mh_ns driver)" timeout 30 python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 9))
s.listen(16)
while True:
    s.accept()[0].close()' "$(mh_addr driver)" &
  listener=$!
  for host in "${MH_HOSTS[@]:1}"; do
    ok=0
    for i in $(seq 50); do
      # shellcheck disable=SC2016 # $0 is the inner shell's
      if ip netns exec "$(mh_ns "$host")" timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/9"' \
        "$(mh_addr driver)" 2>/dev/null; then
        ok=1
        break
      fi
      sleep 0.2
    done
    [[ $ok == 1 ]] || fail "multihost: $host cannot reach the driver at $(mh_addr driver)"
  done
  kill "$listener" 2>/dev/null || true
  wait "$listener" 2>/dev/null || true
}

# mh_run HOST CMD... / mh_bg HOST CMD...: see above.
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
mh_run() {
  local host=$1
  shift
  ip netns exec "$(mh_ns "$host")" unshare --uts \
    sh -c 'hostname "$0" && exec "$@"' "$(mh_hostname "$host")" "$@"
}
# shellcheck disable=SC2016
mh_bg() {
  local host=$1 ns i
  shift
  ns=$(mh_ns "$host")
  # <&0: an asynchronous command's stdin would otherwise be /dev/null.
  ip netns exec "$ns" unshare --uts \
    sh -c 'hostname "$0" && exec "$@"' "$(mh_hostname "$host")" "$@" <&0 &
  BG_PID=$!
  # Returns once the process is inside the host: until then mh_kill_host would not see it (a
  # loaded machine once lost that race, and the process outlived its host).
  for ((i = 0; i < 100; i++)); do
    [[ $(ip netns identify "$BG_PID" 2>/dev/null) == "$ns" ]] && return 0
    kill -0 "$BG_PID" 2>/dev/null || return 0
    sleep 0.05
  done
}

# mh_kill_host HOST: see above.
mh_kill_host() { mh_kill_ns "$(mh_ns "$1")"; }

# mh_link_down HOST / mh_link_up HOST: HOST's eth0 down or up.
mh_link_down() { ip -n "$(mh_ns "$1")" link set eth0 down; }
mh_link_up() { ip -n "$(mh_ns "$1")" link set eth0 up; }

# mh_teardown: see above. Safe to call more than once.
mh_teardown() {
  local rc=$? host ns pid
  [[ $MH_TORN_DOWN == 1 ]] && return "$rc"
  MH_TORN_DOWN=1
  for pid in $(jobs -p); do kill -9 "$pid" 2>/dev/null || true; done
  for host in "${MH_HOSTS[@]}"; do mh_kill_ns "$(mh_ns "$host")"; done
  for host in "${MH_HOSTS[@]}"; do
    ns=$(mh_ns "$host")
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  mh_kill_ns "$MH_SW"
  ip netns del "$MH_SW" 2>/dev/null || true
  return "$rc"
}

# mh_assert_torn_down: no namespace of this run is left (for the harness's own test).
mh_assert_torn_down() {
  local left
  left=$(ip netns list | awk -v p="$MH_PFX" 'index($1, p) == 1 { print $1 }')
  [[ -z $left ]] || fail "namespaces left behind: $left"
  [[ -z $(ls -d "/etc/netns/$MH_PFX"* 2>/dev/null) ]] || fail "/etc/netns/$MH_PFX* left behind"
  echo "  ok: no namespace or /etc/netns entry of $MH_PFX is left"
}

# Waiting, always bounded.

# wait_bounded PID SECONDS WHAT: waits up to SECONDS for the background process PID (a child of
# this shell); sets RC to its exit status. When it is still running then, it is killed and the
# test fails.
wait_bounded() {
  local pid=$1 deadline
  deadline=$(($(date +%s%N) + ${2%.*} * 1000000000))
  while kill -0 "$pid" 2>/dev/null; do
    if (($(date +%s%N) > deadline)); then
      kill -9 "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      fail "$3 did not exit within $2 s"
    fi
    sleep 0.05
  done
  RC=0
  wait "$pid" || RC=$?
}

# wait_file_line FILE REGEX SECONDS WHAT [PID]: waits until a line of FILE matches the extended
# REGEX; fails after SECONDS, or as soon as the process PID (when given) has exited.
wait_file_line() {
  local i
  for i in $(seq $(($3 * 10))); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    if [[ -n ${5:-} ]] && ! kill -0 "$5" 2>/dev/null; then
      grep -qE "$2" "$1" 2>/dev/null && return 0
      fail "$4: the process $5 exited before a line matching '$2' came to $1"
    fi
    sleep 0.1
  done
  fail "$4: no line matching '$2' in $1 within $3 s: $(tail -5 "$1" 2>/dev/null)"
}

# elapsed_since T0: seconds since T0 (from `now`), one decimal.
elapsed_since() { python3 -c "import sys; print(round($(now) - float(sys.argv[1]), 1))" "$1"; }

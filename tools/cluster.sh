#!/usr/bin/env bash
# cluster.sh: a throwaway Fathom cluster on this machine — one ZooKeeper server and N fathomd processes.
#
#   tools/cluster.sh start [--nodes=3] [--transports=sm] [--dir=DIR] [--cluster=local] [--memory=256M]
#                          [--threads=2|1] [--busy_poll=0s|20us] [--batch_scheduling=true|false]
#                          [--lease_period=2s] [--lease_channel=true]
#                          [--backups=1] [--data_dir] [--netns] [--tls] [--fathomd_flag=FLAG ...]
#                          [--build | --bin=BINDIR]
#   tools/cluster.sh stop DIR
#   tools/cluster.sh kill DIR N [M ...]      SIGKILL node N (and M ...: all at the same moment)
#   tools/cluster.sh pause DIR N SECONDS     SIGSTOP node N, then SIGCONT after SECONDS
#   tools/cluster.sh restart DIR N           start node N again as it was started (stopping it first)
#   tools/cluster.sh zk-stop DIR             stop ZooKeeper (SIGTERM)
#   tools/cluster.sh zk-start DIR            start ZooKeeper again, on its port and with its data
#   tools/cluster.sh partition DIR N SECONDS cut node N off the network (--netns clusters), then heal
#   tools/cluster.sh zk-cut DIR N SECONDS    cut node N off ZooKeeper only (--netns clusters), then heal
#
# Run it from the repository root. `start` uses bazel-out's opt binaries of //server:fathomd,
# //tools/fathomctl:fathomctl and //resp:fathom-resp (the Redis-protocol gateway; builds them with
# `bazel build -c opt` when missing, or always with --build) and copies them to DIR/bin, so rebuilding
# later does not change a running cluster. It creates DIR (default: a fresh /tmp/fathom-cluster.XXXXXX),
# writes a zoo.cfg on a free loopback port, a random cluster token (DIR/token, mode 600) and a cluster file
# for clients (DIR/cluster: ZooKeeper address, cluster name, token file, transports; fathomctl,
# fathom-resp and the YCSB driver take --cluster_file=DIR/cluster), starts ZooKeeper (DIR/zookeeper.log)
# and the nodes (--zk, --listen=127.0.0.1:0;
# DIR/node-<id>.log, stdout in DIR/node-<id>.out; each serves Prometheus metrics on a free port of its
# address, --metrics_port=0), waits until every node printed READY, and prints the fathomctl commands to
# look at it and the curl command for node 1's metrics (each node's is in its READY line). Process ids
# are in DIR/*.pid. Every process is started in its own session, so closing the terminal does not stop
# the cluster.
#
# `stop` sends SIGTERM to the nodes, then ZooKeeper, and SIGKILL to whatever is still running after a grace
# period (10 s). It only signals processes whose command line mentions DIR, so a stale pid file cannot hit an
# unrelated process. The directory (logs, data) is kept; remove it yourself.
#
# --tls makes a CA and one certificate for every node and client (DIR/tls: ca.crt, node.crt, node.key; the
# certificate names 127.0.0.1, localhost and, with --netns, the nodes' and host's addresses): every fathomd
# serves its control service with TLS (--tls_cert, --tls_key) and calls its peers' with it (--tls_ca), and
# the cluster file names the three files, so the tools given --cluster_file use TLS too.
# --threads sets every fathomd's node threads (the YCSB driver and fathom-resp, joining with --zk, take the
# members' number): 2 by default, 1 with --transports=tcp (every node shares this host's cores; see start).
# --busy_poll sets fathomd --busy_poll: 20us with --transports=tcp, 0s otherwise (see start).
# --batch_scheduling sets fathomd --batch_scheduling: true with --transports=sm, false otherwise (see start).
# --fathomd_flag=FLAG (repeatable) adds FLAG to every fathomd command line (tests: --crash_at_record).
# --data_dir gives every node an SSD log in DIR/data/node-<id> (fathomd --data_dir). --bin=BINDIR takes
# fathomd, fathomctl and (if there) fathom-resp from BINDIR instead of building them. Each node's command line is kept in
# DIR/node-<id>.cmd, which `restart` runs again (appending to its .log and .out; it waits for READY).
# The fault verbs (kill, pause, restart, zk-stop, zk-start, partition, zk-cut) inject what the recovery tests need.
#
# --netns (root only; implies --transports=tcp) gives every node a host of its own: a network namespace
# `fathom<K>-<id>` whose one link (`fx0`, 10.213.<K>.<id>) is a veth into a bridge `fbr<K>`
# (10.213.<K>.254) in the caller's namespace, where ZooKeeper listens. The node's UCX and control service
# use only that link. Clients in the caller's namespace reach the cluster through the bridge: DIR/zk holds
# the ZooKeeper address and DIR/env the UCX_NET_DEVICES to export (fathomctl needs only the address).
# `partition DIR N SECONDS` takes node N's bridge port down: every packet to or from the node is dropped
# silently (no reset, no "unreachable": a cut cable), including ZooKeeper's; after SECONDS the port comes
# up again. `zk-cut DIR N SECONDS` drops only what node N sends to ZooKeeper (a blackhole rule in its
# namespace for ZooKeeper's address and port): the node still reaches every other node and client, its
# ZooKeeper connection stays open but silent, and the session expires on the server; after SECONDS the
# rule goes. `stop` deletes the namespaces and the bridge.
set -euo pipefail

GRACE_SECONDS=10
READY_TIMEOUT_SECONDS=90
ZK_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

# The synopsis: the header's comment from line 3 up to its next empty comment line.
synopsis() {
  awk 'NR > 3 && /^#$/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' "$0"
}

usage() {
  synopsis >&2
  exit 2
}

# A TCP port on 127.0.0.1 that nothing listens on (there is a window before ZooKeeper takes it), chosen
# below the kernel's ephemeral range: no outgoing connection can then hold it, not even a probe of ours
# that connects to itself (source port = destination port), which would make ZooKeeper's bind fail.
free_port() {
  local port low _high
  read -r low _high </proc/sys/net/ipv4/ip_local_port_range
  ((low > 11000)) || low=60000  # an unusual range: any port, as before
  for _ in $(seq 1 100); do
    port=$((10000 + RANDOM % (low - 10000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

# Whether ZooKeeper itself answers on host:port: its `srvr` command (allowed by default) replies with
# its version. A bare connect is not proof: another listener, or a socket connected to itself, accepts.
zookeeper_answers() {
  local host=$1 port=$2 reply
  reply=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf srvr >&3 && head -c 64 <&3' "$host" "$port" \
    2>/dev/null) || return 1
  [[ $reply == "Zookeeper version:"* ]]
}

# Whether `pid` is alive and its command line mentions `dir` (so it is one of ours).
ours() {
  local pid=$1 dir=$2
  local cmdline
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ "$cmdline" == *"$dir/"* ]]
}

# Whether `pid` runs: it exists and is not a zombie its parent has not reaped. For a process this run just
# started (between its fork and its exec its command line is still ours, so `ours` would say no).
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

# SIGTERM to the processes of the given pid files, then SIGKILL to those still there after the grace.
stop_pids() {
  local dir=$1
  shift
  local pids=() pid file
  for file in "$@"; do
    [[ -f "$file" ]] || continue
    pid=$(cat "$file")
    if ours "$pid" "$dir"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  local deadline=$((SECONDS + GRACE_SECONDS)) still
  while :; do
    still=()
    for pid in "${pids[@]+"${pids[@]}"}"; do
      if alive "$pid"; then still+=("$pid"); fi
    done
    [[ ${#still[@]} -eq 0 ]] && break
    if ((SECONDS >= deadline)); then
      echo "still running after ${GRACE_SECONDS}s, SIGKILL: ${still[*]}" >&2
      kill -KILL "${still[@]}" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.2
  done
  for file in "$@"; do rm -f "$file"; done
}

# A run directory given on the command line, as an absolute path; dies unless cluster.sh made it.
run_dir() {
  local dir
  dir=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
  [[ -f "$dir/zoo.cfg" ]] || die "$dir is not a cluster.sh run directory (no zoo.cfg)"
  echo "$dir"
}

# Starts ZooKeeper from DIR/zoo.cfg and waits until it takes connections. With a second argument `try`,
# returns 1 instead of dying when its port was taken since free_port chose it (the JVM's BindException).
start_zookeeper() {
  local dir=$1 mode=${2:-} port host
  port=$(sed -n 's/^clientPort=//p' "$dir/zoo.cfg")
  host=$(sed -n 's/^clientPortAddress=//p' "$dir/zoo.cfg")
  setsid java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.jmx.log4j.disable=true \
    -cp "$ZK_CLASSPATH" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
    </dev/null >>"$dir/zookeeper.log" 2>&1 &
  echo $! >"$dir/zookeeper.pid"
  local deadline=$((SECONDS + 90))  # a JVM starting on a loaded machine
  until zookeeper_answers "$host" "$port"; do
    if [[ $mode == try ]] && ! alive "$(cat "$dir/zookeeper.pid")" &&
      grep -q "BindException: Address already in use" "$dir/zookeeper.log"; then
      echo "cluster.sh: port $port was taken before ZooKeeper bound it; trying another" >&2
      mv "$dir/zookeeper.log" "$dir/zookeeper.log.port-$port"
      return 1
    fi
    if ! alive "$(cat "$dir/zookeeper.pid")" || ((SECONDS >= deadline)); then
      tail -n 20 "$dir/zookeeper.log" >&2
      stop_pids "$dir" "$dir/zookeeper.pid"
      die "ZooKeeper did not start on $host:$port (log: $dir/zookeeper.log)"
    fi
    sleep 0.2
  done
}

# --netns: the cluster's number K, kept in DIR/netns (empty for a cluster on loopback).
netns_of() {
  cat "$1/netns" 2>/dev/null || true
}

# --netns: a bridge fbr<K> (10.213.<K>.254/24) and, per node, a namespace fathom<K>-<id> whose link fx0
# (10.213.<K>.<id>) is a veth whose other end, fv<K>-<id>, is a port of the bridge. K is one no other
# cluster on this machine uses.
netns_create() {
  local dir=$1 nodes=$2 k="" candidate id ns
  for candidate in $(shuf -i 1-250); do
    ip link show "fbr$candidate" >/dev/null 2>&1 && continue
    ip netns list | grep -q "^fathom$candidate-" && continue
    ip -o addr | grep -q " 10\.213\.$candidate\." && continue
    k=$candidate
    break
  done
  [[ -n "$k" ]] || die "no free bridge number for --netns"
  echo "$k" >"$dir/netns"
  ip link add "fbr$k" type bridge
  ip addr add "10.213.$k.254/24" dev "fbr$k"
  ip link set "fbr$k" up
  for id in $(seq 1 "$nodes"); do
    ns="fathom$k-$id"
    ip netns add "$ns"
    ip link add "fv$k-$id" type veth peer name "fx$k-$id"
    ip link set "fx$k-$id" netns "$ns"
    ip -n "$ns" link set "fx$k-$id" name fx0
    ip -n "$ns" addr add "10.213.$k.$id/24" dev fx0
    ip -n "$ns" link set fx0 up
    ip -n "$ns" link set lo up
    ip link set "fv$k-$id" master "fbr$k"
    ip link set "fv$k-$id" up
  done
}

netns_delete() {
  local dir=$1 k ns
  k=$(netns_of "$dir")
  [[ -n "$k" ]] || return 0
  for ns in $(ip netns list | awk '{print $1}' | grep "^fathom$k-" || true); do ip netns del "$ns" || true; done
  ip link del "fbr$k" 2>/dev/null || true
  rm -f "$dir/netns"
}

# Starts node `id` with the command line kept in DIR/node-<id>.cmd (one argument per line).
launch_node() {
  local dir=$1 id=$2 cmd
  mapfile -t cmd <"$dir/node-$id.cmd"
  setsid "${cmd[@]}" </dev/null >>"$dir/node-$id.out" 2>>"$dir/node-$id.log" &
  echo $! >"$dir/node-$id.pid"
}

# How many times node `id` has printed READY.
ready_count() {
  local n
  n=$(grep -c "^READY node=$2 " "$1/node-$2.out" 2>/dev/null) || true
  echo "${n:-0}"
}

# Waits until node `id` printed READY more than `before` times; false if it died or the deadline passed.
wait_ready() {
  local dir=$1 id=$2 before=$3 deadline=$4
  until (($(ready_count "$dir" "$id") > before)); do
    if ! alive "$(cat "$dir/node-$id.pid")" || ((SECONDS >= deadline)); then return 1; fi
    sleep 0.2
  done
}

# The pid of node `id` if it is one of ours and running; dies otherwise.
node_pid() {
  local dir=$1 id=$2 pid
  [[ "$id" =~ ^[0-9]+$ && -f "$dir/node-$id.cmd" ]] || die "no node $id in $dir"
  pid=$(cat "$dir/node-$id.pid" 2>/dev/null) || die "node $id is not running"
  ours "$pid" "$dir" || die "node $id is not running"
  echo "$pid"
}

# Several nodes are killed at the same moment (every SIGKILL sent before any wait): failures that come
# together, such as the CM and a member.
cmd_kill() {
  [[ $# -ge 2 ]] || usage
  local dir pid n pids=()
  dir=$(run_dir "$1")
  shift
  for n in "$@"; do
    pid=$(node_pid "$dir" "$n") || exit 1
    pids+=("$pid")
  done
  kill -KILL "${pids[@]}"
  for n in "$@"; do
    pid=${pids[0]}
    pids=("${pids[@]:1}")
    while alive "$pid"; do sleep 0.05; done  # its command line empties before it has exited
    rm -f "$dir/node-$n.pid"
    echo "node $n killed (pid $pid)"
  done
}

cmd_pause() {
  [[ $# -eq 3 && "$3" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage
  local dir pid
  dir=$(run_dir "$1")
  pid=$(node_pid "$dir" "$2")
  kill -STOP "$pid"
  echo "node $2 paused (pid $pid) for $3 s"
  sleep "$3"
  kill -CONT "$pid"
  echo "node $2 resumed"
}

cmd_restart() {
  [[ $# -eq 2 ]] || usage
  local dir id=$2 pid before
  dir=$(run_dir "$1")
  [[ "$id" =~ ^[0-9]+$ && -f "$dir/node-$id.cmd" ]] || die "no node $id in $dir"
  pid=$(cat "$dir/node-$id.pid" 2>/dev/null || true)
  if ours "$pid" "$dir"; then
    echo "stopping node $id first"
    stop_pids "$dir" "$dir/node-$id.pid"
  fi
  before=$(ready_count "$dir" "$id")
  launch_node "$dir" "$id"
  if ! wait_ready "$dir" "$id" "$before" $((SECONDS + READY_TIMEOUT_SECONDS)); then
    tail -n 20 "$dir/node-$id.log" >&2
    die "node $id did not become ready again (log: $dir/node-$id.log)"
  fi
  echo "node $id: $(grep "^READY node=$id " "$dir/node-$id.out" | tail -n 1)"
}

cmd_partition() {
  [[ $# -eq 3 && "$3" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage
  local dir k
  dir=$(run_dir "$1")
  k=$(netns_of "$dir")
  [[ -n "$k" ]] || die "partition needs a cluster started with --netns"
  [[ "$2" =~ ^[0-9]+$ && -f "$dir/node-$2.cmd" ]] || die "no node $2 in $dir"
  # The bridge's end of the node's link: the node's own link stays up (no error tells it anything).
  ip link set "fv$k-$2" down
  echo "node $2 cut off for $3 s"
  sleep "$3"
  ip link set "fv$k-$2" up
  echo "node $2 reconnected"
}

cmd_zk_cut() {
  [[ $# -eq 3 && "$3" =~ ^[0-9]+([.][0-9]+)?$ ]] || usage
  local dir k zk
  dir=$(run_dir "$1")
  k=$(netns_of "$dir")
  [[ -n "$k" ]] || die "zk-cut needs a cluster started with --netns"
  [[ "$2" =~ ^[0-9]+$ && -f "$dir/node-$2.cmd" ]] || die "no node $2 in $dir"
  zk=$(cat "$dir/zk")
  # Blackhole, not prohibit: no error tells the node; its client notices only its own timeout.
  ip netns exec "fathom$k-$2" ip rule add priority 100 to "${zk%:*}/32" ipproto tcp dport "${zk##*:}" blackhole
  echo "node $2 cut off ZooKeeper ($zk) for $3 s"
  sleep "$3"
  ip netns exec "fathom$k-$2" ip rule del priority 100
  echo "node $2 reaches ZooKeeper again"
}

cmd_zk_stop() {
  [[ $# -eq 1 ]] || usage
  local dir
  dir=$(run_dir "$1")
  [[ -f "$dir/zookeeper.pid" ]] && ours "$(cat "$dir/zookeeper.pid")" "$dir" || die "ZooKeeper is not running"
  stop_pids "$dir" "$dir/zookeeper.pid"
  echo "ZooKeeper stopped"
}

cmd_zk_start() {
  [[ $# -eq 1 ]] || usage
  local dir
  dir=$(run_dir "$1")
  if [[ -f "$dir/zookeeper.pid" ]] && ours "$(cat "$dir/zookeeper.pid")" "$dir"; then die "ZooKeeper is running"; fi
  start_zookeeper "$dir"
  echo "ZooKeeper on $(sed -n 's/^clientPortAddress=//p' "$dir/zoo.cfg"):$(sed -n 's/^clientPort=//p' "$dir/zoo.cfg")"
}

cmd_stop() {
  [[ $# -eq 1 ]] || usage
  local dir
  dir=$(run_dir "$1")
  # The namespaces and the bridge go whatever else fails here (they outlive every process otherwise).
  trap 'netns_delete "'"$dir"'"' EXIT
  shopt -s nullglob
  local nodes=("$dir"/node-*.pid)
  echo "stopping ${#nodes[@]} node(s) in $dir"
  stop_pids "$dir" "${nodes[@]+"${nodes[@]}"}"
  echo "stopping ZooKeeper"
  stop_pids "$dir" "$dir/zookeeper.pid"
  netns_delete "$dir"
  echo "stopped; logs and data are still in $dir"
}

# make_certificates DIR K NODES: a CA and one node certificate it signed, in DIR/tls (keys mode 600).
make_certificates() {
  local dir="$1" k="$2" nodes="$3" names="IP:127.0.0.1,DNS:localhost" id
  command -v openssl >/dev/null || die "--tls needs openssl (tools/bootstrap.sh installs it)"
  if [[ -n "$k" ]]; then
    names+=",IP:10.213.$k.254"
    for id in $(seq 1 "$nodes"); do names+=",IP:10.213.$k.$id"; done
  fi
  mkdir -p "$dir/tls"
  (
    umask 077
    cd "$dir/tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 30 \
      -subj "/CN=fathom cluster CA" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout node.key -out node.csr \
      -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$names" >node.ext
    openssl x509 -req -in node.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out node.crt -days 30 \
      -extfile node.ext 2>/dev/null
    rm -f node.csr node.ext ca.srl
  ) || die "making the TLS certificates in $dir/tls failed"
}

cmd_start() {
  local nodes=3 transports=sm dir="" cluster=local memory=256M threads="" busy_poll="" batch="" lease_period=2s backups=1
  local build=0 bin=""
  local data=0 netns=0 tls=0 lease_channel=true arg extra=()
  for arg in "$@"; do
    case "$arg" in
      --nodes=*) nodes=${arg#*=} ;;
      --transports=*) transports=${arg#*=} ;;
      --dir=*) dir=${arg#*=} ;;
      --cluster=*) cluster=${arg#*=} ;;
      --lease_period=*) lease_period=${arg#*=} ;;
      --lease_channel) lease_channel=true ;;
      --lease_channel=true | --lease_channel=false) lease_channel=${arg#*=} ;;
      --backups=*) backups=${arg#*=} ;;
      --memory=*) memory=${arg#*=} ;;
      --threads=*) threads=${arg#*=} ;;
      --busy_poll=*) busy_poll=${arg#*=} ;;
      --batch_scheduling=true | --batch_scheduling=false) batch=${arg#*=} ;;
      --build) build=1 ;;
      --bin=*) bin=${arg#*=} ;;
      --data_dir) data=1 ;;
      --netns) netns=1 ;;
      --tls) tls=1 ;;
      --fathomd_flag=-*) extra+=("${arg#*=}") ;;
      *) usage ;;
    esac
  done
  [[ "$nodes" =~ ^[0-9]+$ && "$nodes" -ge 1 && "$nodes" -le 64 ]] || die "--nodes must be 1..64"
  [[ "$backups" =~ ^[0-9]+$ && "$backups" -lt "$nodes" ]] || die "--backups must be 0..nodes-1"
  command -v java >/dev/null || die "java not found (tools/bootstrap.sh installs it)"
  [[ -f /usr/share/java/zookeeper.jar ]] || die "ZooKeeper not installed (tools/bootstrap.sh installs it)"
  if [[ $netns -eq 1 ]]; then
    [[ $EUID -eq 0 ]] || die "--netns needs root (it creates network namespaces and a bridge)"
    command -v ip >/dev/null || die "--netns needs iproute2's ip (tools/bootstrap.sh installs it)"
    [[ "$transports" == sm ]] && transports=tcp  # the default; namespaces matter only to the network
  fi
  # Node threads: every node runs on this one host. Over tcp each remote read or write takes its owner's
  # CPU, so fewer threads with larger batches (1) beat more threads waking more often on every YCSB
  # workload measured on 2 cores; over shared memory reads cost the owner nothing, and a second thread
  # per node doubles what read-heavy clients get (docs/benchmarks.md, "Node threads per fathomd").
  if [[ -z "$threads" ]]; then
    if [[ "$transports" == tcp ]]; then threads=1; else threads=2; fi
  fi
  [[ "$threads" =~ ^[0-9]+$ && "$threads" -ge 1 && "$threads" -le 64 ]] || die "--threads must be 1..64"
  # Polling after work (fathomd --busy_poll): over tcp a node thread that polls 20 us before it sleeps takes
  # the clients' next batch without an epoll wake-up, +7% YCSB-B here; over shared memory, where a read costs
  # the owner nothing, the polling takes the core the clients need, -15% (docs/benchmarks.md, "Servers that
  # poll 20 µs after work over tcp").
  if [[ -z "$busy_poll" ]]; then
    if [[ "$transports" == tcp ]]; then busy_poll=20us; else busy_poll=0s; fi
  fi
  # Node threads under SCHED_BATCH (fathomd --batch_scheduling): over shared memory a node's CPU serves only
  # writes and commits, and a thread woken for them that waits for the client's next yield instead of
  # preempting it gathers more work per wake-up, +12% deployed YCSB-B; over tcp, where it serves every read,
  # -10% (docs/benchmarks.md, "Servers that wait their turn").
  if [[ -z "$batch" ]]; then
    if [[ "$transports" == sm ]]; then batch=true; else batch=false; fi
  fi

  local fathomd fathomctl resp
  if [[ -n "$bin" ]]; then
    [[ $build -eq 0 ]] || die "--bin and --build exclude each other"
    fathomd="$bin/fathomd" fathomctl="$bin/fathomctl" resp="$bin/fathom-resp"
  else
    [[ -f WORKSPACE && -d platform/node ]] || die "run it from the repository root (or give --bin)"
    local targets=(//server:fathomd //tools/fathomctl:fathomctl //resp:fathom-resp) out
    out=$(bazel info -c opt bazel-bin 2>/dev/null) || die "bazel info failed"
    if [[ $build -eq 1 || ! -x "$out/server/fathomd" || ! -x "$out/tools/fathomctl/fathomctl" ||
          ! -x "$out/resp/fathom-resp" ]]; then
      echo "building ${targets[*]} (-c opt)"
      bazel build -c opt "${targets[@]}" >&2 || die "bazel build failed"
    fi
    fathomd="$out/server/fathomd" fathomctl="$out/tools/fathomctl/fathomctl" resp="$out/resp/fathom-resp"
  fi
  [[ -x "$fathomd" && -x "$fathomctl" ]] || die "no fathomd and fathomctl executables ($fathomd, $fathomctl)"

  if [[ -z "$dir" ]]; then
    dir=$(mktemp -d /tmp/fathom-cluster.XXXXXX)
  else
    mkdir -p "$dir"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir is not empty"
    dir=$(cd "$dir" && pwd)
  fi
  mkdir -p "$dir/bin" "$dir/zookeeper-data"
  cp "$fathomd" "$fathomctl" "$dir/bin/"
  [[ -x "$resp" ]] && cp "$resp" "$dir/bin/"  # the Redis-protocol gateway, optional with --bin
  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/token" && echo >>"$dir/token")

  local port host=127.0.0.1 k=""
  if [[ $netns -eq 1 ]]; then
    netns_create "$dir" "$nodes"
    k=$(netns_of "$dir")
    host="10.213.$k.254"
    echo "UCX_NET_DEVICES=fbr$k" >"$dir/env"
  fi
  local attempt
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    cat >"$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/zookeeper-data
clientPort=$port
clientPortAddress=$host
admin.enableServer=false
maxClientCnxns=0
EOF
    if ((attempt == 5)); then
      start_zookeeper "$dir"
    elif start_zookeeper "$dir" try; then
      break
    fi
  done
  local zk="$host:$port"
  echo "$zk" >"$dir/zk"
  if [[ $tls -eq 1 ]]; then make_certificates "$dir" "$k" "$nodes"; fi
  # How clients reach it: fathomctl, fathom-resp and the YCSB driver take --cluster_file=DIR/cluster
  # (docs/formats/cluster-file.md).
  printf '# written by tools/cluster.sh start\nzk=%s\ncluster=%s\ntoken_file=token\ntransports=%s\nlease_period=%s\n' \
    "$zk" "$cluster" "$transports" "$lease_period" >"$dir/cluster"
  if [[ $tls -eq 1 ]]; then printf 'tls_ca=tls/ca.crt\ntls_cert=tls/node.crt\ntls_key=tls/node.key\n' >>"$dir/cluster"; fi
  echo "ZooKeeper on $zk"

  local id
  for id in $(seq 1 "$nodes"); do
    {
      if [[ $netns -eq 1 ]]; then
        printf '%s\n' ip netns exec "fathom$k-$id" env UCX_NET_DEVICES=fx0
      fi
      printf '%s\n' "$dir/bin/fathomd" --node_id="$id" --cluster="$cluster" --zk="$zk" \
        --listen="$([[ $netns -eq 1 ]] && echo "10.213.$k.$id" || echo 127.0.0.1):0" \
        --token_file="$dir/token" --transports="$transports" --memory="$memory" --threads="$threads" \
        --busy_poll="$busy_poll" --batch_scheduling="$batch" --lease_period="$lease_period" \
        --lease_channel="$lease_channel" \
        --backups="$backups" \
        --metrics_port=0 --metrics_host="$([[ $netns -eq 1 ]] && echo "10.213.$k.$id" || echo 127.0.0.1)"
      if [[ $data -eq 1 ]]; then printf '%s\n' --data_dir="$dir/data/node-$id"; fi
      if [[ $tls -eq 1 ]]; then
        printf '%s\n' --tls_ca="$dir/tls/ca.crt" --tls_cert="$dir/tls/node.crt" --tls_key="$dir/tls/node.key"
      fi
      if [[ ${#extra[@]} -gt 0 ]]; then printf '%s\n' "${extra[@]}"; fi
    } >"$dir/node-$id.cmd"
    launch_node "$dir" "$id"
  done

  local deadline=$((SECONDS + READY_TIMEOUT_SECONDS))
  for id in $(seq 1 "$nodes"); do
    if ! wait_ready "$dir" "$id" 0 "$deadline"; then
      echo "node $id did not become ready; its log:" >&2
      tail -n 20 "$dir/node-$id.log" >&2
      cmd_stop "$dir" >&2
      die "start failed (everything stopped; logs in $dir)"
    fi
    echo "node $id: $(grep "^READY" "$dir/node-$id.out")"
  done

  local metrics huge
  metrics="$(grep -o "metrics=[^ ]*" "$dir/node-1.out" | tail -n 1)"
  # Whether the host's reserved huge pages took the regions (README, "Running nodes"): say it for node 1.
  huge="$(grep -ho "[0-9]* MiB of its regions on huge pages.*" "$dir/node-1.log" | tail -n 1 || true)"
  cat <<EOF

cluster '$cluster' is up: $nodes node(s), transports $transports, $backups backup(s) per region, ZooKeeper $zk$([[ $tls -eq 1 ]] && echo ", control services over TLS (CA $dir/tls/ca.crt)")
run directory: $dir
$([[ -n "$huge" ]] && echo "node 1: $huge")
$([[ $netns -eq 1 ]] && echo "each node in its own network namespace; for clients here: export $(cat "$dir/env")")

  $dir/bin/fathomctl status --cluster_file=$dir/cluster
  $dir/bin/fathomctl regions --cluster_file=$dir/cluster
  $dir/bin/fathomctl table create kv --cluster_file=$dir/cluster
  $dir/bin/fathomctl put kv hello world --cluster_file=$dir/cluster
  $dir/bin/fathomctl get kv hello --cluster_file=$dir/cluster
  curl -s http://${metrics#metrics=}/metrics
$([[ -x "$dir/bin/fathom-resp" ]] && echo "  $dir/bin/fathom-resp --cluster_file=$dir/cluster --port=6380 &
  redis-cli -p 6380 SET greeting hello")
  tools/cluster.sh stop $dir
EOF
}

case "${1:-}" in
  start) shift && cmd_start "$@" ;;
  stop) shift && cmd_stop "$@" ;;
  kill) shift && cmd_kill "$@" ;;
  pause) shift && cmd_pause "$@" ;;
  restart) shift && cmd_restart "$@" ;;
  zk-stop) shift && cmd_zk_stop "$@" ;;
  zk-start) shift && cmd_zk_start "$@" ;;
  partition) shift && cmd_partition "$@" ;;
  zk-cut) shift && cmd_zk_cut "$@" ;;
  -h | --help) synopsis && exit 0 ;;
  *) usage ;;
esac

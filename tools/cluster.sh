#!/usr/bin/env bash
# cluster.sh: a throwaway Fathom cluster on this machine — one ZooKeeper server and N fathomd processes.
#
#   tools/cluster.sh start [--nodes=3] [--transports=sm] [--dir=DIR] [--cluster=local] [--memory=256M]
#                          [--threads=2] [--lease_period=2s] [--build]
#   tools/cluster.sh stop DIR
#
# Run it from the repository root. `start` uses bazel-out's opt binaries of //server:fathomd and
# //tools/fathomctl:fathomctl (builds them with `bazel build -c opt` when missing, or always with --build)
# and copies them to DIR/bin, so rebuilding later does not change a running cluster. It creates DIR (default:
# a fresh /tmp/fathom-cluster.XXXXXX), writes a zoo.cfg on a free loopback port and a random cluster token
# (DIR/token, mode 600), starts ZooKeeper (DIR/zookeeper.log) and the nodes (--zk, --listen=127.0.0.1:0;
# DIR/node-<id>.log, stdout in DIR/node-<id>.out), waits until every node printed READY, and prints the
# fathomctl command to look at it. Process ids are in DIR/*.pid. Every process is started in its own session,
# so closing the terminal does not stop the cluster.
#
# `stop` sends SIGTERM to the nodes, then ZooKeeper, and SIGKILL to whatever is still running after a grace
# period (10 s). It only signals processes whose command line mentions DIR, so a stale pid file cannot hit an
# unrelated process. The directory (logs, data) is kept; remove it yourself.
set -euo pipefail

GRACE_SECONDS=10
READY_TIMEOUT_SECONDS=90
ZK_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '3,5p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# A TCP port on 127.0.0.1 that nothing listens on (there is a window before ZooKeeper takes it).
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

# Whether `pid` is alive and its command line mentions `dir` (so it is one of ours).
ours() {
  local pid=$1 dir=$2
  local cmdline
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ "$cmdline" == *"$dir/"* ]]
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
  local deadline=$((SECONDS + GRACE_SECONDS)) alive
  while :; do
    alive=()
    for pid in "${pids[@]+"${pids[@]}"}"; do
      if ours "$pid" "$dir"; then alive+=("$pid"); fi
    done
    [[ ${#alive[@]} -eq 0 ]] && break
    if ((SECONDS >= deadline)); then
      echo "still running after ${GRACE_SECONDS}s, SIGKILL: ${alive[*]}" >&2
      kill -KILL "${alive[@]}" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.2
  done
  for file in "$@"; do rm -f "$file"; done
}

cmd_stop() {
  [[ $# -eq 1 ]] || usage
  local dir
  dir=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
  [[ -f "$dir/zoo.cfg" ]] || die "$dir is not a cluster.sh run directory (no zoo.cfg)"
  shopt -s nullglob
  local nodes=("$dir"/node-*.pid)
  echo "stopping ${#nodes[@]} node(s) in $dir"
  stop_pids "$dir" "${nodes[@]+"${nodes[@]}"}"
  echo "stopping ZooKeeper"
  stop_pids "$dir" "$dir/zookeeper.pid"
  echo "stopped; logs and data are still in $dir"
}

cmd_start() {
  local nodes=3 transports=sm dir="" cluster=local memory=256M threads=2 lease_period=2s build=0 arg
  for arg in "$@"; do
    case "$arg" in
      --nodes=*) nodes=${arg#*=} ;;
      --transports=*) transports=${arg#*=} ;;
      --dir=*) dir=${arg#*=} ;;
      --cluster=*) cluster=${arg#*=} ;;
      --lease_period=*) lease_period=${arg#*=} ;;
      --memory=*) memory=${arg#*=} ;;
      --threads=*) threads=${arg#*=} ;;
      --build) build=1 ;;
      *) usage ;;
    esac
  done
  [[ "$nodes" =~ ^[0-9]+$ && "$nodes" -ge 1 && "$nodes" -le 64 ]] || die "--nodes must be 1..64"
  [[ -f WORKSPACE && -d platform/node ]] || die "run it from the repository root"
  command -v java >/dev/null || die "java not found (tools/bootstrap.sh installs it)"
  [[ -f /usr/share/java/zookeeper.jar ]] || die "ZooKeeper not installed (tools/bootstrap.sh installs it)"

  local targets=(//server:fathomd //tools/fathomctl:fathomctl) bin
  bin=$(bazel info -c opt bazel-bin 2>/dev/null) || die "bazel info failed"
  if [[ $build -eq 1 || ! -x "$bin/server/fathomd" || ! -x "$bin/tools/fathomctl/fathomctl" ]]; then
    echo "building ${targets[*]} (-c opt)"
    bazel build -c opt "${targets[@]}" >&2 || die "bazel build failed"
  fi

  if [[ -z "$dir" ]]; then
    dir=$(mktemp -d /tmp/fathom-cluster.XXXXXX)
  else
    mkdir -p "$dir"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir is not empty"
    dir=$(cd "$dir" && pwd)
  fi
  mkdir -p "$dir/bin" "$dir/zookeeper-data"
  cp "$bin/server/fathomd" "$bin/tools/fathomctl/fathomctl" "$dir/bin/"
  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/token" && echo >>"$dir/token")

  local port
  port=$(free_port)
  cat >"$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/zookeeper-data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
maxClientCnxns=0
EOF
  setsid java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.jmx.log4j.disable=true \
    -cp "$ZK_CLASSPATH" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
    </dev/null >"$dir/zookeeper.log" 2>&1 &
  echo $! >"$dir/zookeeper.pid"
  local zk="127.0.0.1:$port" deadline=$((SECONDS + 30))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if ! ours "$(cat "$dir/zookeeper.pid")" "$dir" || ((SECONDS >= deadline)); then
      tail -n 20 "$dir/zookeeper.log" >&2
      stop_pids "$dir" "$dir/zookeeper.pid"
      die "ZooKeeper did not start on $zk (log: $dir/zookeeper.log)"
    fi
    sleep 0.2
  done
  echo "ZooKeeper on $zk"

  local id
  for id in $(seq 1 "$nodes"); do
    setsid "$dir/bin/fathomd" --node_id="$id" --cluster="$cluster" --zk="$zk" --listen=127.0.0.1:0 \
      --token_file="$dir/token" --transports="$transports" --memory="$memory" --threads="$threads" \
      --lease_period="$lease_period" \
      </dev/null >"$dir/node-$id.out" 2>"$dir/node-$id.log" &
    echo $! >"$dir/node-$id.pid"
  done

  deadline=$((SECONDS + READY_TIMEOUT_SECONDS))
  for id in $(seq 1 "$nodes"); do
    until grep -q "^READY node=$id " "$dir/node-$id.out"; do
      if ! ours "$(cat "$dir/node-$id.pid")" "$dir" || ((SECONDS >= deadline)); then
        echo "node $id did not become ready; its log:" >&2
        tail -n 20 "$dir/node-$id.log" >&2
        cmd_stop "$dir" >&2
        die "start failed (everything stopped; logs in $dir)"
      fi
      sleep 0.2
    done
    echo "node $id: $(grep "^READY" "$dir/node-$id.out")"
  done

  cat <<EOF

cluster '$cluster' is up: $nodes node(s), transports $transports, ZooKeeper $zk
run directory: $dir

  $dir/bin/fathomctl status --zk=$zk --cluster=$cluster --token_file=$dir/token
  $dir/bin/fathomctl regions --zk=$zk --cluster=$cluster
  tools/cluster.sh stop $dir
EOF
}

case "${1:-}" in
  start) shift && cmd_start "$@" ;;
  stop) shift && cmd_stop "$@" ;;
  *) usage ;;
esac

#!/usr/bin/env bash
# redis-benchmark against Redis and against fathom-resp (the Redis-protocol gateway to 3 fathomd processes
# over UCX shared memory, tools/cluster.sh), side by side in one run, the same clients, keys and requests.
# Prints a Markdown table of the median run (requests per second, p50 and p99 latency) and, with --doc,
# writes it into that file between the "resp-comparison" markers.
#
#   tools/compare_resp.sh [--requests 100000] [--clients 50] [--keyspace 10000] [--pipeline 1] [--reps 3]
#                         [--tests get,set] [--doc docs/benchmarks.md]
#
# Redis runs with persistence off; the gateway's cluster keeps f+1 = 2 copies in memory (no SSD log).
set -euo pipefail
cd "$(dirname "$0")/.."

requests=100000 clients=50 keyspace=10000 pipeline=1 reps=3 tests=get,set doc=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --requests) requests="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --keyspace) keyspace="$2"; shift 2 ;;
    --pipeline) pipeline="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --tests) tests="$2"; shift 2 ;;
    --doc) doc="$2"; shift 2 ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

work=$(mktemp -d /tmp/fathom-compare-resp.XXXXXX)
redis_pid="" resp_pid=""
cleanup() {
  [[ -n "$resp_pid" ]] && kill "$resp_pid" 2>/dev/null || true
  [[ -n "$redis_pid" ]] && kill "$redis_pid" 2>/dev/null || true
  tools/cluster.sh stop "$work/cluster" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Below the kernel's ephemeral range, as tools/cluster.sh chooses: no outgoing connection can hold it.
free_port() {
  local port low _high
  read -r low _high </proc/sys/net/ipv4/ip_local_port_range
  ((low > 11000)) || low=60000
  for _ in $(seq 1 100); do
    port=$((10000 + RANDOM % (low - 10000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  echo "compare_resp: no free port" >&2
  exit 1
}

wait_ping() {
  local port=$1 deadline=$((SECONDS + 120))
  until [[ "$(timeout 5 redis-cli -p "$port" PING 2>/dev/null)" == PONG ]]; do
    ((SECONDS < deadline)) || { echo "compare_resp: nothing answers on port $port" >&2; exit 1; }
    sleep 0.2
  done
}

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
redis_pid=$!
wait_ping "$redis_port"

tools/cluster.sh start --nodes=3 --dir="$work/cluster" >"$work/cluster.out" 2>&1 || {
  cat "$work/cluster.out" >&2
  exit 1
}
resp_port=$(free_port)
"$work/cluster/bin/fathom-resp" --zk="$(cat "$work/cluster/zk")" --cluster=local --token_file="$work/cluster/token" \
  --port="$resp_port" --buckets=$(( (keyspace / 4) + 1024 )) >"$work/resp.out" 2>"$work/resp.err" &
resp_pid=$!
wait_ping "$resp_port"

# One redis-benchmark run: CSV rows "test","rps","avg","min","p50","p95","p99","max".
run() {
  timeout 900 redis-benchmark -p "$1" -t "$tests" -n "$requests" -c "$clients" -r "$keyspace" -P "$pipeline" --csv \
    2>"$work/bench.err" | tail -n +2 | tr -d '"'
}

: >"$work/rows"
for rep in $(seq 1 "$reps"); do
  for target in redis fathom-resp; do
    port=$redis_port
    [[ $target == fathom-resp ]] && port=$resp_port
    run "$port" | while IFS=, read -r test rps avg min p50 p95 p99 max; do
      echo "$target,$test,$rps,$p50,$p99" >>"$work/rows"
    done
    echo "compare_resp: rep $rep $target done" >&2
  done
done
errors=$(timeout 10 redis-cli -p "$resp_port" INFO | tr -d '\r' | sed -n 's/^total_error_replies://p')

table=$(python3 - "$work/rows" "$requests" "$clients" "$keyspace" "$pipeline" "$reps" "$errors" <<'PY'
import statistics, sys
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip()]
requests, clients, keyspace, pipeline, reps, errors = sys.argv[2:]
by = {}
for target, test, rps, p50, p99 in rows:
    by.setdefault((test, target), []).append((float(rps), float(p50), float(p99)))
print(f"redis-benchmark, {requests} requests, {clients} clients, {keyspace} random keys, pipeline {pipeline}; "
      f"median of {reps} runs (by requests/s); gateway error replies: {errors or 'unknown'}")
print()
print("| test | system | requests/s | p50 ms | p99 ms | vs Redis |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for test in sorted({t for t, _ in by}, key=lambda t: ("SET", "GET").index(t) if t in ("SET", "GET") else 9):
    redis = None
    for target in ("redis", "fathom-resp"):
        runs = sorted(by.get((test, target), []))
        if not runs:
            continue
        rps, p50, p99 = runs[len(runs) // 2]
        if target == "redis":
            redis = rps
        ratio = f"{rps / redis:.2f}x" if redis else ""
        print(f"| {test} | {target} | {rps:,.0f} | {p50:.3f} | {p99:.3f} | {ratio} |")
PY
)
echo "$table"
if [[ -n "$doc" ]]; then
  python3 - "$doc" "$table" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = "<!-- resp-comparison:begin -->", "<!-- resp-comparison:end -->"
block = f"{begin}\n{table}\n{end}"
if begin in text and end in text:
    text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
else:
    text += f"\n## Redis protocol: redis-benchmark against Redis and fathom-resp\n\n(tools/compare_resp.sh)\n\n{block}\n"
open(path, "w").write(text)
PY
  echo "compare_resp: table written into $doc" >&2
fi

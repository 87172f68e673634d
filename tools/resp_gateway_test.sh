#!/usr/bin/env bash
# fathom-resp against a real 3-node cluster (tools/cluster.sh: fathomd over UCX shared memory, a real
# ZooKeeper), driven by the real redis-cli and redis-benchmark: SET then GET round-trips, the benchmark's
# GET and SET run with no error, a WATCH/MULTI/EXEC works, and garbage on one connection closes only that
# one.
#
#   resp_gateway_test.sh CLUSTER_SH FATHOMD FATHOMCTL FATHOM_RESP
set -euo pipefail

cluster_sh=$1
bin="$TEST_TMPDIR/bin"
dir="$TEST_TMPDIR/cluster"
mkdir -p "$bin"
cp "$2" "$3" "$4" "$bin/"
resp_pid=""

fail() {
  echo "FAIL: $*" >&2
  tail -n 20 "$TEST_TMPDIR/resp.err" >&2 || true
  exit 1
}
cleanup() {
  [[ -n "$resp_pid" ]] && kill "$resp_pid" 2>/dev/null || true
  "$cluster_sh" stop "$dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$cluster_sh" start --nodes=3 --bin="$bin" --dir="$dir" --memory=64M --threads=1 >"$TEST_TMPDIR/start.out" ||
  fail "cluster start failed"
grep -q "fathom-resp --cluster_file=" "$TEST_TMPDIR/start.out" || fail "start printed no fathom-resp line"

"$dir/bin/fathom-resp" --cluster_file="$dir/cluster" --port=0 \
  >"$TEST_TMPDIR/resp.out" 2>"$TEST_TMPDIR/resp.err" &
resp_pid=$!
deadline=$((SECONDS + 120))
until grep -q "^READY resp=" "$TEST_TMPDIR/resp.out"; do
  kill -0 "$resp_pid" 2>/dev/null || fail "fathom-resp exited before READY"
  ((SECONDS < deadline)) || fail "fathom-resp not READY after 120 s"
  sleep 0.2
done
port=$(sed -n 's/^READY resp=127.0.0.1:\([0-9]*\) .*/\1/p' "$TEST_TMPDIR/resp.out")
[[ -n "$port" ]] || fail "no port in: $(cat "$TEST_TMPDIR/resp.out")"
cli=(redis-cli -p "$port")

[[ "$("${cli[@]}" SET k v)" == OK ]] || fail "SET k v did not print OK"
[[ "$("${cli[@]}" GET k)" == v ]] || fail "GET k did not print v"
[[ "$("${cli[@]}" INCR visits)" == 1 ]] || fail "INCR of a new key did not print 1"
[[ "$(printf 'WATCH k\nMULTI\nSET k w\nGET k\nEXEC\n' | "${cli[@]}" | tr '\n' ' ')" == "OK OK QUEUED QUEUED OK w " ]] ||
  fail "WATCH/MULTI/EXEC did not run"
[[ "$("${cli[@]}" NOSUCHCOMMAND 2>&1)" == *"unknown command"* ]] || fail "an unknown command was not refused"

# Garbage on one connection: an error, that connection closed, the gateway still serves.
reply=$(printf '*1\r\n$-7\r\n' | timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; cat >&3; cat <&3") ||
  fail "the gateway did not close the connection that sent garbage"
[[ "$reply" == "-ERR Protocol error"* ]] || fail "garbage got: $reply"
[[ "$("${cli[@]}" GET k)" == w ]] || fail "the gateway stopped serving after garbage"

# redis-benchmark unchanged: GET and SET with its 50 clients, random keys and one hot key.
for args in "-r 10000" ""; do
  # shellcheck disable=SC2086
  out=$(timeout 300 redis-benchmark -p "$port" -t get,set -n 3000 $args -q 2>&1 | tr '\r' '\n') ||
    fail "redis-benchmark $args failed: $out"
  echo "$out" | grep "requests per second"
  [[ $(grep -c "requests per second" <<<"$out") -eq 2 ]] || fail "redis-benchmark $args did not finish: $out"
  grep -qi "error" <<<"$out" && fail "redis-benchmark $args saw errors: $out"
done
info=$("${cli[@]}" INFO | tr -d '\r')
grep -q "^protocol_errors:1$" <<<"$info" || fail "expected one protocol error in: $info"
grep -q "^total_error_replies:1$" <<<"$info" || fail "expected one error reply (the unknown command) in: $info"

kill "$resp_pid"
wait "$resp_pid" || fail "fathom-resp did not exit 0 on SIGTERM"
resp_pid=""
echo "resp_gateway_test: ok"

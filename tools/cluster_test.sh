#!/usr/bin/env bash
# tools/cluster.sh's fault verbs against a real 3-node cluster (fathomd over UCX shared memory, a real
# ZooKeeper): kill removes a node (its lease lapses and the CM drops it), restart brings it back as a member,
# pause stops and resumes a node, zk-stop/zk-start take ZooKeeper away and back, stop leaves nothing running.
#
#   cluster_test.sh CLUSTER_SH FATHOMD FATHOMCTL
set -euo pipefail

# shellcheck source=tools/cluster_test_lib.sh
source "$(dirname "$0")/cluster_test_lib.sh" "$@"

"$cluster_sh" start --nodes=3 --bin="$bin" --dir="$dir" --lease_period=1s --memory=64M --region_size=64M \
  --threads=1 2>&1 | tail -n 3 && fail "an unknown flag was accepted"
"$cluster_sh" start --nodes=3 --bin="$bin" --dir="$dir" --lease_period=1s --memory=64M --threads=1 \
  >"$TEST_TMPDIR/start.out" || fail "start failed"
cat "$TEST_TMPDIR/start.out"
zk="127.0.0.1:$(sed -n 's/^clientPort=//p' "$dir/zoo.cfg")"
# ZooKeeper's port lies below the kernel's ephemeral range, where no outgoing connection can take it.
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range
((ephemeral_low <= 11000 || ${zk##*:} < ephemeral_low)) || fail "ZooKeeper's port ${zk##*:} is in the ephemeral range"

# Waits (generously: the machine may be loaded) until `fathomctl status` reports `want` members.
wait_members() {
  local want=$1 deadline=$((SECONDS + 120)) out
  while :; do
    out=$("$bin/fathomctl" status --zk="$zk" --cluster=local --token_file="$dir/token" 2>&1) || true
    [[ "$out" == *", $want members"* ]] && return 0
    ((SECONDS < deadline)) || fail "never $want members; last status: $out"
    sleep 0.5
  done
}
wait_members 3

# A key round-trips through the commands start printed, as a user would paste them.
printed() { grep -m1 -- "fathomctl $1" "$TEST_TMPDIR/start.out" || fail "start printed no 'fathomctl $1' line"; }
eval "$(printed 'table create')" >/dev/null || fail "the printed table create failed"
eval "$(printed put)" || fail "the printed put failed"
[[ "$(eval "$(printed get)")" == world ]] || fail "the printed get did not print world"
# The cluster file's values give way to flags given on the command line.
status=0
"$bin/fathomctl" get kv hello --cluster_file="$dir/cluster" --cluster=nosuch 2>"$TEST_TMPDIR/get.err" || status=$?
[[ $status -eq 1 ]] || fail "--cluster=nosuch beside --cluster_file exited $status, not 1"
status=0
"$bin/fathomctl" status --cluster_file="$dir/nosuchfile" 2>"$TEST_TMPDIR/get.err" || status=$?
[[ $status -eq 2 ]] || fail "a missing cluster file exited $status, not 2"
grep -q "cannot read cluster file" "$TEST_TMPDIR/get.err" || fail "a missing cluster file said: $(cat "$TEST_TMPDIR/get.err")"
ctl=("$bin/fathomctl" --zk="$zk" --cluster=local --token_file="$dir/token")
printf 'two\nlines' | "${ctl[@]}" put kv multi - || fail "put from standard input failed"
[[ "$("${ctl[@]}" get kv multi)" == $'two\nlines' ]] || fail "the value from standard input did not round-trip"
"${ctl[@]}" delete kv hello || fail "delete failed"
status=0
"${ctl[@]}" get kv hello 2>"$TEST_TMPDIR/get.err" || status=$?
[[ $status -eq 3 ]] || fail "get of a deleted key exited $status, not 3"
grep -q "no such key" "$TEST_TMPDIR/get.err" || fail "get of a deleted key said: $(cat "$TEST_TMPDIR/get.err")"
status=0
"${ctl[@]}" get nosuchtable hello 2>"$TEST_TMPDIR/get.err" || status=$?
[[ $status -eq 1 ]] || fail "get from an unknown table exited $status, not 1"
grep -q "table create nosuchtable" "$TEST_TMPDIR/get.err" || fail "no hint for an unknown table: $(cat "$TEST_TMPDIR/get.err")"

# txn: a transfer and reads in one transaction; gets see the script's own writes; one line per operation.
"${ctl[@]}" put kv alice 100 && "${ctl[@]}" put kv bob 5 || fail "put of the accounts failed"
out=$("${ctl[@]}" txn 'get kv alice; put kv alice 90; put kv bob 15; get kv bob; delete kv nobody') ||
  fail "txn failed: $out"
[[ "$out" == $'found\tkv\talice\t100\nput\tkv\talice\nput\tkv\tbob\nfound\tkv\tbob\t15\nmissing\tkv\tnobody' ]] ||
  fail "txn printed: $out"
[[ "$("${ctl[@]}" get kv alice)" == 90 && "$("${ctl[@]}" get kv bob)" == 15 ]] || fail "the txn's puts were not committed"
json=$(printf 'get kv alice\ndelete kv bob\n' | "${ctl[@]}" txn - --json) || fail "txn from standard input failed: $json"
[[ "$json" == '{"committed":true,"results":[{"op":"get","table":"kv","key":"alice","found":true,"value":"90"},{"op":"delete","table":"kv","key":"bob","found":true}]}' ]] ||
  fail "txn --json printed: $json"
status=0
"${ctl[@]}" txn 'get kv alice; put nosuchtable k v' 2>"$TEST_TMPDIR/txn.err" || status=$?
[[ $status -eq 1 ]] || fail "a txn on an unknown table exited $status, not 1"
grep -q "table create nosuchtable" "$TEST_TMPDIR/txn.err" || fail "no hint for an unknown table: $(cat "$TEST_TMPDIR/txn.err")"
status=0
"${ctl[@]}" txn 'get kv alice; scan kv' 2>"$TEST_TMPDIR/txn.err" || status=$?
[[ $status -eq 2 ]] || fail "a bad txn script exited $status, not 2"

# A value too big for a bucket goes to an object of its own (counted as the table's values below).
head -c 5000 /dev/zero | tr '\0' v | "${ctl[@]}" put kv big - || fail "put of a 5,000-byte value failed"

# The printed curl shows node 1's metrics; every node serves its own (its READY line says where). The
# puts and the delete above locked their keys at their primaries.
page=$(eval "$(grep -m1 -- "curl -s http" "$TEST_TMPDIR/start.out")") || fail "the printed curl failed"
grep -q '^fathom_configuration_epoch{node="1"} [1-9]' <<<"$page" || fail "no configuration epoch in: $page"
grep -q '^# TYPE fathom_txn_commit_seconds histogram$' <<<"$page" || fail "no commit latency histogram in: $page"
locks=0
for id in 1 2 3; do
  address=$(grep -o "metrics=[^ ]*" "$dir/node-$id.out" | tail -n 1)
  granted=$(curl -sf "http://${address#metrics=}/metrics" | sed -n "s/^fathom_locks_granted_total{node=\"$id\"} //p")
  [[ -n "$granted" ]] || fail "node $id's metrics have no fathom_locks_granted_total"
  locks=$((locks + granted))
done
((locks >= 3)) || fail "the nodes granted $locks locks for two puts and a delete"
# Memory per table: kv's buckets are spread over every node; the big value is on one of them.
values=0
for id in 1 2 3; do
  address=$(grep -o "metrics=[^ ]*" "$dir/node-$id.out" | tail -n 1)
  page=$(curl -sf "http://${address#metrics=}/metrics") || fail "node $id's metrics page failed"
  index=$(sed -n "s/^fathom_table_bytes{node=\"$id\",table=\"kv\",part=\"index\"} //p" <<<"$page")
  [[ "$index" =~ ^[0-9]+$ ]] && ((index > 0)) || fail "node $id's kv index bytes: '$index'"
  v=$(sed -n "s/^fathom_table_bytes{node=\"$id\",table=\"kv\",part=\"values\"} //p" <<<"$page")
  [[ "$v" =~ ^[0-9]+$ ]] || fail "node $id's kv value bytes: '$v'"
  values=$((values + v))
done
((values >= 5000)) || fail "the table's value bytes on all nodes are $values, below the 5,000-byte value"
status=0
curl -sf "http://${address#metrics=}/nothing" >/dev/null || status=$?
[[ $status -eq 22 ]] || fail "curl of an unknown path exited $status, not 22 (an HTTP error)"

# Whether `pid` runs (a killed process whose parent has not reaped it yet is a zombie: not running).
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n "$state" && "$state" != "Z" ]]
}

pid3=$(cat "$dir/node-3.pid")
"$cluster_sh" kill "$dir" 3 || fail "kill failed"
running "$pid3" && fail "node 3 (pid $pid3) still runs after kill"
"$cluster_sh" kill "$dir" 3 2>/dev/null && fail "killing a dead node succeeded"
wait_members 2

"$cluster_sh" restart "$dir" 3 || fail "restart failed"
[[ $(grep -c '^READY node=3 ' "$dir/node-3.out") -eq 2 ]] || fail "node 3 did not print READY a second time"
wait_members 3

pid2=$(cat "$dir/node-2.pid")
"$cluster_sh" pause "$dir" 2 0.5 || fail "pause failed"
state=$(awk '{print $3}' "/proc/$pid2/stat")
[[ "$state" != "T" ]] || fail "node 2 is still stopped after pause"

"$cluster_sh" zk-stop "$dir" || fail "zk-stop failed"
"$bin/fathomctl" status --zk="$zk" --cluster=local --zk_timeout=2s --stats=false >/dev/null 2>&1 &&
  fail "status read a configuration with ZooKeeper stopped"
"$cluster_sh" zk-start "$dir" || fail "zk-start failed"
wait_members 3

"$cluster_sh" stop "$dir" || fail "stop failed"
for f in "$dir"/*.pid; do
  [[ -e "$f" ]] && fail "$f left behind"
done
for pid in $(pgrep -f "$dir/" || true); do
  running "$pid" && fail "process $pid of $dir still runs"
done
trap - EXIT
echo "PASS"

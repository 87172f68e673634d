#!/usr/bin/env bash
# fault_run.sh: what one fault does to a running cluster under load, as a user would see it. Starts 3 fathomd
# over UCX shared memory (tools/cluster.sh, lease 2 s), loads YCSB-B's 10K records, runs YCSB-B with 8
# threads and one progress line per second for 30 s, injects FAULT at ~10 s, then reads records back with
# YCSB-C and stops the cluster. Prints the driver's exit status, its [ERRORS] lines, throughput per
# second and the recovery times of tools/recovery_timeline.py (a plot in /tmp/fault-FAULT.svg); the whole
# output is in /tmp/fault-FAULT.*.
#
#   tools/fault_run.sh kill       SIGKILL a node that is not the CM
#   tools/fault_run.sh kill-cm    SIGKILL the CM
#   tools/fault_run.sh pause      SIGSTOP a non-CM node for 5 s (past its lease)
#   tools/fault_run.sh zk         stop ZooKeeper for 10 s
#   LEASE=200ms tools/fault_run.sh ...           another lease period (default 2s)
#   LEASE_CHANNEL=false tools/fault_run.sh ...   leases over the rings instead of their UDP channel
#   BIN=DIR tools/fault_run.sh ...               fathomd and fathomctl from DIR (an older build to compare)
#
# Also prints each surviving member's lease lapses (a member without a lease serves no GET or commit).
# Run from the repository root after `bazel build -c opt //server:fathomd //tools/fathomctl:fathomctl
# //bench:ycsb`. A measurement aid, not a test: tests/faults/ asserts.
set -uo pipefail
fault=${1:-}
case "$fault" in kill | kill-cm | pause | zk) ;; *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;; esac
out=/tmp/fault-$fault
dir=$out.cluster
rm -rf "$dir"
tools/cluster.sh start --nodes=3 --dir="$dir" ${BIN:+--bin="$BIN"} --lease_period="${LEASE:-2s}" --lease_channel="${LEASE_CHANNEL:-true}" >"$out.start" 2>&1 || { cat "$out.start"; exit 1; }
zk="127.0.0.1:$(sed -n 's/^clientPort=//p' "$dir/zoo.cfg")"
ycsb="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/ycsb"
common=(--workload=b --zk="$zk" --cluster=local --token_file="$dir/token" --threads=8 --seed=5 -p recordcount=10000)
timeout 300 "$ycsb" "${common[@]}" --phase=load >"$out.load" 2>&1  # bounded: a cluster that keeps removing the driver never finishes
echo "load: exit $?"
cm=$("$dir/bin/fathomctl" status --zk="$zk" --cluster=local --token_file="$dir/token" 2>/dev/null |
  grep -o "manager node [0-9]*" | grep -o "[0-9]*$")
victim=3
[[ "$victim" == "$cm" ]] && victim=2
[[ "$fault" == kill-cm ]] && victim=$cm
echo "CM: node $cm; fault: $fault on node $victim"
"$ycsb" "${common[@]}" --phase=run --status_interval_s=1 -p operationcount=100000000 -p maxexecutiontime=30 --timeline_out="$out.timeline" \
  >"$out.run" 2>"$out.err" &
driver=$!
sleep 10
fault_ms=$(date +%s%3N)
case "$fault" in
  kill | kill-cm) tools/cluster.sh kill "$dir" "$victim" ;;
  pause) tools/cluster.sh pause "$dir" "$victim" 5 ;;
  zk) tools/cluster.sh zk-stop "$dir" && sleep 10 && tools/cluster.sh zk-start "$dir" ;;
esac
echo "fault at $(date -d @"${fault_ms:0:-3}.${fault_ms: -3}" +%H:%M:%S.%3N) (the nodes' logs are in $dir)"
for _ in $(seq 1 120); do kill -0 $driver 2>/dev/null || break; sleep 1; done
kill -0 $driver 2>/dev/null && { echo "the run still goes 120 s after the fault: stopped"; kill $driver; }
wait $driver
echo "run: exit $?"
grep -E "^\[ERRORS\]|Return=ERROR" "$out.run"
"$dir/bin/fathomctl" status --zk="$zk" --cluster=local --token_file="$dir/token" --json 2>/dev/null | python3 -c '
import json, sys
members = json.load(sys.stdin)["members"]
print("lease lapses:", " ".join("node %s: %d" % (m["node_id"], m["stats"]["counters"].get("lease.lapses", 0))
                               for m in members if m.get("stats", {}).get("reachable")))'
echo "ops/s per second: $(grep -E '^run [0-9]+ sec' "$out.err" | awk '{printf "%s:%d ", $2, $6}')"
echo "recovery: $(python3 tools/recovery_timeline.py "$out.timeline" "$fault_ms" --svg "$out.svg" \
  --title "YCSB-B, 3 fathomd over shm, lease ${LEASE:-2s}: $fault on node $victim")"
"$ycsb" "${common[@]}" --workload=c --phase=run -p operationcount=10000 --retry_deadline=2s >"$out.after" 2>&1
echo "read-back (YCSB-C, 10000 reads): exit $?; $(grep -E '^\[READ\], Return=' "$out.after" | tr '\n' ' ')"
tools/cluster.sh stop "$dir" >/dev/null 2>&1

#!/usr/bin/env bash
# fathomd's log against a real 3-node cluster: every line of ours is in the one format
# (docs/formats/log-lines.md: time, level, node=, config=, component), a node removed for an expired lease
# shows as a warning naming the configuration, and --log_level=warning drops the info lines.
#
#   cluster_log_test.sh CLUSTER_SH FATHOMD FATHOMCTL
set -euo pipefail

# shellcheck source=tools/cluster_test_lib.sh
source "$(dirname "$0")/cluster_test_lib.sh" "$@"

"$cluster_sh" start --nodes=3 --bin="$bin" --dir="$dir" --memory=64M --threads=1 >/dev/null || fail "start failed"
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}'
grep -Eq "$stamp I node=1 config=([0-9]+|-) fathomd: ready; peers: " "$dir/node-1.log" ||
  fail "no ready line in the format: $(grep ready "$dir/node-1.log")"
# Every line fathomd wrote itself (UCX and gRPC write their own, rarely) is in the format.
bad=$(grep -hEv "$stamp [DIWE] node=([0-9]+|-) config=([0-9]+|-) [a-z ]+: " "$dir"/node-*.log | grep -Ev 'UCX|^[EWI][0-9]{4} ' || true)
[[ -z "$bad" ]] || fail "lines not in the format: $(head -3 <<<"$bad")"
# The old formats are gone: no "fathomd[1]:" prefix, no bare "membership:" line.
grep -Eq '^.{23} fathomd\[|^.{23} (membership|lease|coordinator [^ ]+): ' "$dir"/node-*.log &&
  fail "a line in an old format: $(grep -Eh '^.{23} fathomd\[|^.{23} (membership|lease|coordinator)' "$dir"/node-*.log | head -3)"

# Node 3 goes; the CM removes it when its lease expires: a warning, in a configuration the nodes applied.
"$cluster_sh" kill "$dir" 3 >/dev/null
deadline=$((SECONDS + 120))
until grep -Eq "^.{23} W node=[12] config=[0-9]+ lease: node [12] removed node 3: " "$dir/node-1.log" "$dir/node-2.log"; do
  ((SECONDS < deadline)) || fail "no warning that node 3 was removed"
  sleep 0.5
done

# Node 3 again, with --log_level=warning: what it writes from now on has no info line.
echo "--log_level=warning" >>"$dir/node-3.cmd"
lines_before=$(wc -l <"$dir/node-3.log")
"$cluster_sh" restart "$dir" 3 >/dev/null || fail "restart of node 3 failed"
new=$(tail -n +"$((lines_before + 1))" "$dir/node-3.log")
grep -Eq '^.{23} I ' <<<"$new" && fail "info lines at --log_level=warning: $(grep -E '^.{23} I ' <<<"$new" | head -3)"
# Stopping is an info line too; the nodes at the default level still write theirs.
"$cluster_sh" stop "$dir" >/dev/null
grep -Eq '^.{23} I node=1 config=[0-9]+ fathomd: stopped$' "$dir/node-1.log" || fail "node 1 logged no stop"
tail -n +"$((lines_before + 1))" "$dir/node-3.log" | grep -q 'fathomd: stopped' && fail "node 3 logged an info line when it stopped"
echo "PASS"

#!/usr/bin/env bash
# tools/cluster.sh start --tls against a real 3-node cluster: the members' control services speak TLS with
# the certificates it made, the commands start printed (their --cluster_file names the CA and the
# clients' certificate) work as a user would paste them, and a client without the CA is refused.
#
#   cluster_tls_test.sh CLUSTER_SH FATHOMD FATHOMCTL
set -euo pipefail

# shellcheck source=tools/cluster_test_lib.sh
source "$(dirname "$0")/cluster_test_lib.sh" "$@"

"$cluster_sh" start --tls --nodes=3 --bin="$bin" --dir="$dir" --memory=64M --threads=1 \
  >"$TEST_TMPDIR/start.out" || fail "start --tls failed"
cat "$TEST_TMPDIR/start.out"
grep -q "control services over TLS" "$TEST_TMPDIR/start.out" || fail "start did not say the control services use TLS"
for f in ca.crt node.crt node.key; do [[ -s "$dir/tls/$f" ]] || fail "no $dir/tls/$f"; done
[[ "$(stat -c %a "$dir/tls/node.key")" == 600 ]] || fail "node.key is readable by others"
grep -q -- "--tls_cert=$dir/tls/node.crt" "$dir/node-1.cmd" || fail "fathomd was not given the certificate"
grep -q "^tls_ca=tls/ca.crt$" "$dir/cluster" || fail "the cluster file does not name the CA"

# Every member answers Stats over TLS (fathomctl status asks each one's control service).
deadline=$((SECONDS + 120))
while :; do
  out=$("$bin/fathomctl" status --cluster_file="$dir/cluster" 2>&1) || true
  [[ "$out" == *", 3 members"* && "$(grep -c ' ok ' <<<"$out")" -ge 3 ]] && break
  ((SECONDS < deadline)) || fail "status never showed 3 members answering over TLS; last: $out"
  sleep 0.5
done

# The printed commands: a table made through a member's control service, a key through a client member
# that the members connect back to over TLS.
printed() { grep -m1 -- "fathomctl $1" "$TEST_TMPDIR/start.out" || fail "start printed no 'fathomctl $1' line"; }
eval "$(printed 'table create')" >/dev/null || fail "the printed table create failed"
eval "$(printed put)" || fail "the printed put failed"
[[ "$(eval "$(printed get)")" == world ]] || fail "the printed get did not print world"

# Without the CA, a client speaks plaintext to TLS services: nothing answers.
plain=("$bin/fathomctl" --zk="$(cat "$dir/zk")" --cluster=local --token_file="$dir/token")
out=$("${plain[@]}" status 2>&1) || true
[[ "$(grep -c ' unreachable ' <<<"$out")" -ge 3 ]] || fail "plaintext status reached members: $out"
grep -q "give the CA it chains to" <<<"$out" || fail "plaintext status does not say TLS may be why: $out"
status=0
"${plain[@]}" get kv hello --table_timeout=20s >/dev/null 2>"$TEST_TMPDIR/plain.err" || status=$?
[[ $status -ne 0 ]] || fail "a plaintext get succeeded against TLS members"
# Half of the TLS files is refused before anything is dialled.
status=0
"${plain[@]}" get kv hello --tls_ca="$dir/tls/ca.crt" >/dev/null 2>"$TEST_TMPDIR/half.err" || status=$?
[[ $status -ne 0 ]] && grep -q "tls_ca_file, tls_cert_file and tls_key_file" "$TEST_TMPDIR/half.err" ||
  fail "--tls_ca alone was not refused clearly: $(cat "$TEST_TMPDIR/half.err")"

"$cluster_sh" stop "$dir" >/dev/null || fail "stop failed"
trap - EXIT
echo "PASS"

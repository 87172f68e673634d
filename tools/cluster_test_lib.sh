# What the cluster.sh tests share (sourced): their arguments, a scratch cluster directory, and fail(),
# which prints the nodes' last log lines. The cluster is stopped when the test exits.
#
#   source "$(dirname "$0")/cluster_test_lib.sh" "$@"   # CLUSTER_SH FATHOMD FATHOMCTL
cluster_sh=$1
bin="$TEST_TMPDIR/bin"
dir="$TEST_TMPDIR/cluster"
mkdir -p "$bin"
cp "$2" "$3" "$bin/"

fail() {
  echo "FAIL: $*" >&2
  for log in "$dir"/node-*.log; do
    echo "--- $log" >&2
    tail -n 15 "$log" >&2 || true
  done
  exit 1
}
trap '"$cluster_sh" stop "$dir" >/dev/null 2>&1 || true' EXIT

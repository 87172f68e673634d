#!/bin/bash
# Runs every Google Benchmark target of the tree (cc_binary targets tagged "benchmark" that link Google
# Benchmark) with -c opt and collects their JSON reports into one file:
#
#   tools/run_benchmarks.sh [output.json] [extra benchmark flags...]
#   tools/run_benchmarks.sh /tmp/all.json --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#
# The output is {"machine": ..., "date": ..., "benchmarks": {"//pkg:target": <that target's JSON>, ...}}.
# Targets run one after another (they share the machine's 2 cores); a target that fails is reported and
# recorded as {"error": ...}, and the script exits non-zero at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-benchmarks.json}"
shift || true
targets=$(bazel query 'attr(tags, "benchmark", kind("cc_binary", //...)) intersect rdeps(//..., @system//:benchmark, 1)' 2>/dev/null)
if [ -z "$targets" ]; then
  echo "run_benchmarks: no benchmark targets found" >&2
  exit 1
fi
# shellcheck disable=SC2086
bazel build -c opt $targets || exit 1
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
entries=()
for target in $targets; do
  path="${target#//}"
  binary="$bin/${path/://}"
  json="$tmp/$(echo "$path" | tr '/:' '__').json"
  echo "== $target" >&2
  if (cd "$binary.runfiles/fathom" 2>/dev/null || cd .; "$binary" --benchmark_out="$json" --benchmark_out_format=json "$@" >&2); then
    entries+=("\"$target\": $(cat "$json")")
  else
    echo "run_benchmarks: $target failed" >&2
    entries+=("\"$target\": {\"error\": \"exited with $?\"}")
    failed=1
  fi
done
{
  printf '{"machine": "%s", "date": "%s", "benchmarks": {' "$(uname -n) $(nproc) cores" "$(date -u +%FT%TZ)"
  first=1
  for entry in "${entries[@]}"; do
    [ $first -eq 1 ] || printf ','
    first=0
    printf '\n%s' "$entry"
  done
  printf '\n}}\n'
} > "$out"
echo "run_benchmarks: wrote $out" >&2
exit $failed

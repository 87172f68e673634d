#!/usr/bin/env bash
# Checks the layering (docs/architecture.md) with bazel query: a library or binary (not a test, nor a
# testonly helper) of a lower layer must not depend on a higher one. Prints every offending path and exits 1.
#
#   tools/check_layers.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# layer -> the packages its shipped targets must not reach
declare -A forbidden=(
  [//platform]="//txn //kv //logging //coordinator //server //fathom //bench //tools //tests"
  [//coordinator]="//txn //kv //logging //server //fathom //bench //tools //tests"
  [//txn]="//kv //logging //server //fathom //bench //tools //tests"
  [//logging]="//kv //server //fathom //bench //tools //tests"
  [//kv]="//logging //server //fathom //bench //tools //tests"
  [//server]="//fathom //bench //tools //tests"
  [//fathom]="//bench //tools //tests"
  [//bench]="//tools //tests"
  [//examples]="//bench //tools //tests"
  [//resp]="//bench //tools //tests"
)

failed=0
for layer in "${!forbidden[@]}"; do
  [[ -d "${layer#//}" ]] || continue
  shipped="attr(testonly, 0, kind('cc_(library|binary)|genrule|filegroup', ${layer}/...))"
  for target in ${forbidden[$layer]}; do
    [[ -d "${target#//}" ]] || continue
    hits="$(bazel query --noshow_progress "somepath(${shipped}, ${target}/...)" 2>/dev/null)"
    if [[ -n "$hits" ]]; then
      echo "check_layers: ${layer} must not depend on ${target}:" >&2
      sed 's/^/    /' <<<"$hits" >&2
      failed=1
    fi
  done
done
if [[ $failed -eq 0 ]]; then echo "check_layers: ok"; fi
exit $failed

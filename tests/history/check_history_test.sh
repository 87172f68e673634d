#!/bin/sh
# check_history's exit status and output: 0 clean, 1 anomalies, 2 malformed input or usage.
set -u
tool="$1"
data="$(dirname "$0")/testdata"
out="${TEST_TMPDIR:-/tmp}/out.txt"
failures=0

# expect STATUS PATTERN ARGS...: runs the tool, checks its exit status and that PATTERN is in its output.
expect() {
  want="$1"; pattern="$2"; shift 2
  "$tool" "$@" >"$out" 2>&1
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: check_history $* exited $got, want $want"; cat "$out"; failures=$((failures + 1))
  elif ! grep -q -- "$pattern" "$out"; then
    echo "FAIL: check_history $* did not print '$pattern'"; cat "$out"; failures=$((failures + 1))
  else
    echo "ok: check_history $* -> $got"
  fi
}

expect 0 "strictly serializable as far as the checker can tell" "$data/clean.jsonl"
expect 0 "4 transactions (2 ok, 1 failed, 1 info): no anomalies found" "$data/doc_example.jsonl"
expect 1 "G-single-realtime: " "$data/g_single_realtime.jsonl"
expect 0 "serializable as far as the checker can tell" --serializable "$data/g_single_realtime.jsonl"
expect 2 "line 2: bad JSON, column 73" "$data/malformed.jsonl"
expect 2 "cannot open" "$data/does_not_exist.jsonl"
expect 2 "usage:"
expect 2 "usage:" --bogus "$data/clean.jsonl"
expect 2 "usage:" "$data/clean.jsonl" "$data/clean.jsonl"
expect 0 "usage:" --help

[ "$failures" -eq 0 ]

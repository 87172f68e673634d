#!/usr/bin/env bash
# Runs the example on its embedded cluster and checks what it prints.
set -euo pipefail
out="$("${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/hello_world")"
expected=$'hello, world\nalice=90 bob=10'
if [[ "$out" != "$expected" ]]; then
  echo "hello_world printed:"; echo "$out"; echo "expected:"; echo "$expected"
  exit 1
fi
echo "$out"

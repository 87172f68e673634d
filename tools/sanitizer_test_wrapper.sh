#!/bin/sh
# Runs a test with our sanitizer suppressions (tools/tsan.supp, tools/lsan.supp); --config=tsan and
# --config=asan use it as --run_under. Bazel cannot put the workspace path into --test_env, so the
# wrapper finds the files beside itself.
here="$(dirname "$(readlink -f "$0")")"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$here/tsan.supp"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/lsan.supp"
exec "$@"

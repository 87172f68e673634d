#!/bin/sh
# Runs a test under ThreadSanitizer with tools/tsan.supp (`--config=tsan` uses it as --run_under).
# Bazel cannot put the workspace path into --test_env, so the wrapper finds the file beside itself.
here="$(dirname "$(readlink -f "$0")")"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$here/tsan.supp"
exec "$@"

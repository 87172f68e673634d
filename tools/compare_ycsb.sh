#!/usr/bin/env bash
# The side-by-side comparison (issue 8): YCSB workloads A, B, C, F and the transactional bank on Fathom
# (the driver's embedded 3-node cluster, clients on its node threads, over UCX shared memory and over UCX
# tcp), memcached and Redis (started by the driver on free loopback ports, persistence off), all in one
# run on this machine. Writes the tables into docs/benchmarks.md (between the "ycsb-comparison" markers)
# and PNG plots into docs/img/: throughput against client threads (YCSB-B) and read latency CDFs.
#
#   tools/compare_ycsb.sh                 the full run (about 30 minutes on 2 cores)
#   tools/compare_ycsb.sh --quick         a small run into /tmp, docs untouched (a smoke test of the script)
#
# Options: --records N (100000) --ops N (200000) --threads N (16: every system gets N concurrent clients)
#          --sweep "1 4 16 64" (client counts for the throughput plot, workload B) --reps N (3; the tables
#          quote the median run) --out DIR (raw JSON reports) --doc FILE (docs/benchmarks.md) --img DIR
set -euo pipefail
cd "$(dirname "$0")/.."

records=100000 ops=200000 threads=16 sweep="1 2 4 8 16 32 64" reps=3
out="" doc="docs/benchmarks.md" img="docs/img" quick=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --records) records="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --sweep) sweep="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --doc) doc="$2"; shift 2 ;;
    --img) img="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "compare_ycsb: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
if [[ $quick -eq 1 ]]; then
  records=2000 ops=4000 threads=4 sweep="1 4" reps=1
  doc="/tmp/compare_ycsb_quick.md" img="/tmp/compare_ycsb_quick_img"
fi
[[ -n "$out" ]] || out="$(mktemp -d /tmp/compare_ycsb.XXXXXX)"
mkdir -p "$out" "$img"

tools/bootstrap.sh
bazel build -c opt //bench:ycsb
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/ycsb"

# run <system> <workload> <threads> <rep>: one driver run (load + run) into $out/<system>_<workload>_<threads>_<rep>.json
run() {
  local system="$1" workload="$2" n="$3" rep="$4" args=()
  case "$system" in
    fathom-shm) args=(--backend=fathom --fathom_fabric=shm) ;;
    fathom-tcp) args=(--backend=fathom --fathom_fabric=tcp) ;;
    *) args=(--backend="$system") ;;
  esac
  local json="$out/${system}_${workload}_${n}_${rep}.json"
  echo "compare_ycsb: $system workload=$workload threads=$n rep=$rep" >&2
  "$bin" "${args[@]}" --workload="$workload" --threads="$n" --seed=$((rep * 1000 + n)) --status_interval_s=60 \
    -p recordcount="$records" -p operationcount="$ops" --json_out="$json" >"${json%.json}.txt" 2>"${json%.json}.err" \
    || { echo "compare_ycsb: FAILED: $system $workload threads=$n (see ${json%.json}.err)" >&2; rm -f "$json"; }
}

systems="fathom-shm fathom-tcp memcached redis"
for rep in $(seq 1 "$reps"); do
  for workload in a b c f bank; do
    for system in $systems; do
      # memcached has no multi-key transactions: the bank would only count NOT_IMPLEMENTED.
      [[ "$workload" == bank && "$system" == memcached ]] && continue
      run "$system" "$workload" "$threads" "$rep"
    done
  done
done
for n in $sweep; do
  [[ "$n" == "$threads" ]] && continue  # the tables' runs already cover it
  for system in $systems; do run "$system" b "$n" 1; done
done

command="tools/compare_ycsb.sh --records $records --ops $ops --threads $threads --sweep \"$sweep\" --reps $reps"
[[ $quick -eq 1 ]] && command="tools/compare_ycsb.sh --quick"
python3 tools/ycsb_report.py --runs "$out" --doc "$doc" --img "$img" --threads "$threads" --command "$command"
echo "compare_ycsb: raw reports in $out; tables in $doc; plots in $img" >&2

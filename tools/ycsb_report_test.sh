#!/usr/bin/env bash
# tools/ycsb_report.py on made-up driver reports: the table quotes the median of the reps, CPU per operation
# counts an embedded cluster's process once and a deployed cluster's servers beside the driver, the ratios
# and the targets follow from the figures (a latency target missed at the clients' concurrency shows its
# queueing bound; each latency target also quotes the one-client polled run), memcached's bank is marked not
# run, the service-time table quotes the one-client runs, the plots are written, and the doc's other content
# survives a second run that replaces (not duplicates) the section.
set -euo pipefail
report="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/runs" "$dir/docs/img"

# write <system> <workload> <threads> <rep> <throughput> [<server memory taken after the load> [<allocated>]]
write() {
  cat >"$dir/runs/$1_$2_$3_$4.json" <<JSON
{"config": {"backend": "x", "property.recordcount": "1000"}, "phases": [
 {"phase": "load", "runtime_ms": 1, "operations": 1, "throughput_ops_per_sec": 1.0, "measurements": {}, "server_cpu_s": -1, "driver_cpu_s": -1,
  "server_memory_bytes": ${6:--1}, "server_allocated_bytes": ${7:--1}},
 {"phase": "run", "runtime_ms": 1000, "operations": 1000000, "throughput_ops_per_sec": $5,
  "measurements": {"READ": {"operations": 10, "average_us": 2.0, "min_us": 1.0, "max_us": 9.0, "p50_us": 2.5, "p95_us": 3.0, "p99_us": 7.5, "p999_us": 9.0,
    "cdf_us": [[1, 1.0], [50, 2.5], [99, 7.5], [100, 9.0]], "returns": {"OK": 10, "NOT_FOUND": 2}},
   "UPDATE": {"operations": 3, "average_us": 20.0, "min_us": 10.0, "max_us": 90.0, "p50_us": ${UPDATE_P50:-25.0}, "p95_us": 30.0, "p99_us": 75.0, "p999_us": 90.0,
    "cdf_us": [[1, 10.0], [100, 90.0]], "returns": {"OK": 3}}},
  "server_cpu_s": 4.0, "driver_cpu_s": 6.0}]}
JSON
}
write fathom-deployed-shm b 8 1 3000000 6000000 5500000
write fathom-deployed-shm b 8 2 1000000 4000000 1000
UPDATE_P50=60.0 write fathom-deployed-shm b 8 3 2000000 5000000 1400000
write fathom-deployed-tcp b 8 1 120000
write fathom-embedded-shm b 8 1 2500000
write redis b 8 1 100000 1250000 1200000
write memcached b 8 1 50000
write driver-ceiling b 8 1 1800000  # under 20x Redis (made up: no real ceiling is under a store)
write redis bank 8 1 7000
write fathom-embedded-shm bank 8 1 63000
write fathom-deployed-shm b 1 1 500000
write redis b 1 1 20000
write fathom-deployed-shm-polled b 1 1 90000
write fathom-deployed-shm-polled b 1 2 80000
write unknown-system b 8 1 9  # not a system: ignored

# The scale runs: <system>_<workload>_<records>_1.json under scale/.
mkdir -p "$dir/runs/scale"
for r in 10000 100000; do
  write redis b "$r" 1 $((r == 10000 ? 90000 : 80000)) && mv "$dir/runs/redis_b_${r}_1.json" "$dir/runs/scale/"
  write redis c "$r" 1 95000 && mv "$dir/runs/redis_c_${r}_1.json" "$dir/runs/scale/"
done
write fathom-embedded-shm b 10000 1 400000 && mv "$dir/runs/fathom-embedded-shm_b_10000_1.json" "$dir/runs/scale/"

printf '# Benchmarks\n\nHand-written intro.\n' >"$dir/docs/benchmarks.md"
for attempt in 1 2; do
  python3 "$report" --runs "$dir/runs" --doc "$dir/docs/benchmarks.md" --img "$dir/docs/img" --threads 8 \
    --command "tools/compare_ycsb.sh --test"
done
doc="$dir/docs/benchmarks.md"
fail() { echo "FAIL: $*"; cat "$doc"; exit 1; }
grep -q "Hand-written intro." "$doc" || fail "the doc's own content was lost"
[[ "$(grep -c "ycsb-comparison:begin" "$doc")" -eq 1 ]] || fail "the section was duplicated"
grep -q "| fathom-deployed-shm | 2,000,000 \[1,000,000–3,000,000\] | 2.5 / 7.5 | 60.0 / 75.0 | 4.0 | 6.0 | 10.0 | 2 |" \
  "$doc" || fail "the deployed row does not quote the median run, or its CPU columns are wrong"
grep -q "| fathom-embedded-shm | 2,500,000 \[2,500,000–2,500,000\] | 2.5 / 7.5 | 25.0 / 75.0 | (in the driver) | 6.0 | 6.0 | 2 |" \
  "$doc" || fail "the embedded row counts its process twice"
[[ "$(grep -n "| fathom-deployed-shm | 2,000" "$doc" | head -1 | cut -d: -f1)" -lt "$(grep -n "| redis | 100,000" "$doc" | head -1 | cut -d: -f1)" ]] \
  || fail "the deployed rows do not lead"
grep -q "unknown-system" "$doc" && fail "a report of an unknown system was read"
grep -q "Ratio to redis (the faster baseline): fathom-deployed-shm = \*\*20.0×\*\*; fathom-deployed-tcp = \*\*1.2×\*\*; fathom-embedded-shm = \*\*25.0×\*\*" "$doc" \
  || fail "ratios against the faster baseline"
grep -q "Deployed over shm, YCSB-B ≥ 5× the faster baseline: 20.0× redis, \*\*met\*\*" "$doc" || fail "deployed shm target"
grep -Eq "Deployed over shm, YCSB-B update p50 ≤ 50 µs: 60.0 µs at 8 clients, \*\*not met\*\* \(8 clients at 2,000,000 ops/s: 4 µs per operation on average by Little's law, and with 10.0 µs of CPU per operation on [0-9]+ cores never under [0-9]+ µs\); service time \(one client, node threads polling, below\): 25.0 µs, \*\*met\*\*\.$" "$doc" \
  || fail "update p50 target, its queueing bound or its service time"
grep -q "Deployed over shm, YCSB-B read p50 ≤ 10 µs: 2.5 µs at 8 clients, \*\*met\*\*; service time (one client, node threads polling, below): 2.5 µs, \*\*met\*\*\.$" "$doc" \
  || fail "read p50 target"
grep -q "| fathom-deployed-shm-polled | 1 node thread per process, every one polling 1 ms after its last work | 80,000 | 2.5 / 7.5 | 25.0 / 75.0 | 10.0 |" "$doc" \
  || fail "the service-time row of the polled cluster (the median of its reps)"
grep -q "| fathom-deployed-shm | defaults: fathomd sleep when idle, the driver polls 50 µs | 500,000 |" "$doc" \
  || fail "the service-time row of the sleeping cluster (the sweep's one-client run)"
grep -q "| fathom-deployed-shm-polled | [0-9,]* \[" "$doc" && fail "the polled cluster got a row in the 8-client tables"
grep -q "Deployed over tcp, YCSB-B ≥ 1.5× Redis: 1.2×, \*\*not met\*\*" "$doc" || fail "deployed tcp target"
grep -q "Embedded, YCSB-B ≥ 20× Redis: 25.0×, \*\*met\*\*; the driver's ceiling (driver-ceiling, below: its own in-process hash map) reaches 18.0× Redis\.$" "$doc" \
  || fail "embedded target, beside the driver's ceiling"
grep -q "| driver-ceiling | 1,800,000 \[1,800,000–1,800,000\] | 2.5 / 7.5 | 25.0 / 75.0 | (in the driver) | 6.0 | 6.0 | 2 |" "$doc" \
  || fail "the ceiling's row (its store is the driver's process)"
grep -q "fathom-embedded-shm = \*\*25.0×\*\*. The driver's ceiling (driver-ceiling): 18.0×." "$doc" || fail "the ceiling's ratio"
grep -q "driver-ceiling = " "$doc" && fail "the ceiling counted among Fathom's ratios"
grep -q "| fathom-deployed-shm | 1,000 | 4.8 | 5,000 | 1,400 | 2 (f = 1) |" "$doc" || fail "memory per record: the median of the reps"
grep -q "| redis | 1,000 | 1.2 | 1,250 | 1,200 | 1 |" "$doc" || fail "redis' memory per record"
grep -q "| memcached | 1,000 |" "$doc" && fail "a memory row without a memory figure"
grep -q "| fathom-embedded-shm | 1,000 |" "$doc" && fail "a memory row without a memory figure"
grep -q "Memory per record ≤ 1.2× Redis's, both copies counted: taken 4.00×, \*\*not met\*\*; allocated 1.167×, \*\*met\*\*." "$doc" \
  || fail "memory target"
grep -q "Embedded, bank transfers ≥ 10× Redis WATCH/MULTI/EXEC: 9.0×, \*\*not met\*\*" "$doc" || fail "bank target"
grep -q "| memcached | not run: no multi-key transactions" "$doc" || fail "memcached's bank row"
grep -q "tools/compare_ycsb.sh --test" "$doc" || fail "the command is not quoted"
grep -q "| redis | 10,000 | 90,000 | 2.5 / 7.5 | 25.0 / 75.0 | 95,000 | 2.5 / 7.5 | 4 |" "$doc" || fail "scale row"
grep -q "| redis | 100,000 | 80,000 |" "$doc" || fail "scale row at 100,000"
grep -q "| fathom-embedded-shm | 10,000 | 400,000 | 2.5 / 7.5 | 25.0 / 75.0 | failed |" "$doc" || fail "a missing C run shows as failed"
grep -q "| fathom-embedded-shm | 100,000 | failed |" "$doc" || fail "a record count with no run shows as failed"
for png in ycsb_b_throughput_vs_clients.png ycsb_b_read_latency_cdf.png ycsb_throughput_vs_records.png; do
  [[ -s "$dir/docs/img/$png" ]] || fail "no plot $png"
  grep -q "(img/$png)" "$doc" || fail "plot $png not linked relative to the doc"
done
echo PASS

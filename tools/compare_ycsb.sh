#!/usr/bin/env bash
# The side-by-side comparison: YCSB workloads A, B, C, F and the transactional bank on Fathom, memcached and
# Redis, all in one run on this machine, every system with the same number of concurrent clients. Fathom runs
# four ways:
#   fathom-deployed-shm / -tcp   3 fathomd processes (tools/cluster.sh, a fresh cluster for every run) and the
#                                driver as a separate process joined as a client-only member (--zk), over UCX
#                                shared memory / tcp: what users run
#   fathom-embedded-shm / -tcp   the driver's own 3-node cluster, its clients on the node threads, one process
#   fathom-deployed-shm-polled   service time: deployed over shared memory with one client, one node thread
#                                per process, every node thread polling 1 ms after its last work (fathomd
#                                --busy_poll, ycsb --fathom_busy_poll): YCSB-B only, --reps runs, with
#                                fathom-deployed-shm
#   driver-ceiling               no store: the driver against its own in-process hash map (--backend=memory),
#                                the most any store can show through it; the tables' runs only, with ten
#                                times --ops (it runs ~10x faster than the stores)
# memcached and Redis are started by the driver on free loopback ports, persistence off. CPU is measured for
# every process: the servers (the three fathomd, memcached, redis-server; an embedded cluster is the driver
# itself) and the driver; memory per record from each server's own accounting after the load, taken and
# allocated (the driver's [MEMORY] lines; bench/ycsb/server_memory.h). Writes the tables into docs/benchmarks.md (between the "ycsb-comparison" markers) and PNG
# plots into docs/img/: throughput against client threads (YCSB-B) and read latency CDFs.
#
#   tools/compare_ycsb.sh                 the full run (about half an hour on 2 cores)
#   tools/compare_ycsb.sh --quick         a small run into /tmp, docs untouched (a smoke test of the script)
#
# Options: --records N (100000) --ops N (200000) --threads N (16: every system gets N concurrent clients)
#          --sweep "1 4 16 64" (client counts for the throughput plot, workload B) --reps N (3; the tables
#          quote the median run) --scale "10000 100000 1000000" (record counts for the scale table and plot,
#          workloads B and C, one run each; "" skips them) --systems "..." (all seven) --out DIR (raw JSON
#          reports) --doc FILE (docs/benchmarks.md) --img DIR --hugepages N (2 MiB pages the host reserves for
#          the run, vm.nr_hugepages, put back afterwards: fathomd's regions take them, as a deployment
#          should (docs/benchmarks.md, "Huge pages"), and memcached gets -L; default, when run as root,
#          3072 or a third of the host's memory if less, else none; 0: none)
set -euo pipefail
cd "$(dirname "$0")/.."

records=100000 ops=200000 threads=16 sweep="1 2 4 8 16 32 64" reps=3 scale="10000 100000 1000000"
default_systems="fathom-deployed-shm fathom-deployed-tcp fathom-embedded-shm fathom-embedded-tcp memcached redis driver-ceiling"
systems="$default_systems"
out="" doc="docs/benchmarks.md" img="docs/img" quick=0 hugepages=auto
while [[ $# -gt 0 ]]; do
  case "$1" in
    --records) records="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --sweep) sweep="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --systems) systems="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --doc) doc="$2"; shift 2 ;;
    --img) img="$2"; shift 2 ;;
    --hugepages) hugepages="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "compare_ycsb: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
if [[ $quick -eq 1 ]]; then
  records=2000 ops=4000 threads=4 sweep="1 4" reps=1 scale="1000 4000"
  doc="/tmp/compare_ycsb_quick.md" img="/tmp/compare_ycsb_quick_img"
fi
for system in $systems; do
  [[ " $default_systems " == *" $system "* ]] || { echo "compare_ycsb: unknown system $system (want: $default_systems)" >&2; exit 2; }
done
[[ -n "$out" ]] || out="$(mktemp -d /tmp/compare_ycsb.XXXXXX)"
mkdir -p "$out" "$img"

# Huge pages: UCX allocates fathomd's regions (and an embedded cluster's) as SysV shared memory and
# takes huge pages for them when the host has some free; the driver then maps the servers' memory with
# 512 times fewer page faults. Reserved for the run and put back after it.
hugepages_before=""
restore_hugepages() {
  [[ -n "$hugepages_before" ]] && echo "$hugepages_before" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
}
trap restore_hugepages EXIT
if [[ "$hugepages" == auto ]]; then
  # 6 GiB (the 100K-record runs take ~2 GiB of regions), at most a third of the host's memory.
  hugepages=0
  third=$(( $(awk '/^MemTotal/ {print $2}' /proc/meminfo) / 3 / 2048 ))
  [[ $(id -u) -eq 0 && $quick -eq 0 ]] && hugepages=$(( third < 3072 ? third : 3072 ))
fi
[[ "$hugepages" =~ ^[0-9]+$ ]] || { echo "compare_ycsb: --hugepages wants a number of 2 MiB pages" >&2; exit 2; }
memcached_flags=()
if [[ "$hugepages" -gt 0 ]]; then
  current=$(cat /proc/sys/vm/nr_hugepages)
  if [[ "$current" -lt "$hugepages" ]]; then
    echo "$hugepages" >/proc/sys/vm/nr_hugepages 2>/dev/null \
      || { echo "compare_ycsb: cannot reserve $hugepages huge pages (root only; --hugepages 0 runs without)" >&2; exit 2; }
    hugepages_before="$current"
  fi
fi
# memcached gets its large-pages option whenever fathomd can have huge pages.
reserved=$(awk '/^HugePages_Total/ {print $2}' /proc/meminfo)
if [[ "$reserved" -gt 0 ]]; then
  echo "compare_ycsb: $reserved huge pages of 2 MiB reserved" >&2
  memcached_flags=(--memcached_large_pages)
fi

tools/bootstrap.sh
bazel build -c opt //bench:ycsb //server:fathomd //tools/fathomctl:fathomctl
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/ycsb"

# A deployed run's cluster, stopped also when the script is interrupted.
cluster=""
stop_cluster() {
  [[ -n "$cluster" && -d "$cluster" ]] || return 0
  tools/cluster.sh stop "$cluster" >/dev/null 2>&1 || true
  rm -rf "$cluster"
  cluster=""
}
trap 'stop_cluster; restore_hugepages' EXIT
trap 'stop_cluster; restore_hugepages; exit 130' INT TERM

# run <system> <workload> <threads> <rep> [<records>]: one driver run (load + run) into
# $out/<system>_<workload>_<threads>_<rep>.json, or with <records> (a scale run) into
# $out/scale/<system>_<workload>_<records>_1.json.
run() {
  local system="$1" workload="$2" n="$3" rep="$4" count="${5:-$records}" args=() operations="$ops"
  local json="$out/${system}_${workload}_${n}_${rep}.json"
  [[ -n "${5:-}" ]] && json="$out/scale/${system}_${workload}_${count}_1.json"
  # A deployed cluster's nodes hold both copies of count/4 2 KiB buckets and count 2 KiB records (each on
  # one of three nodes), with room to spare: ~3 KiB per record per node, at least cluster.sh's 256M.
  local memory_mib=$(( count * 3 / 1024 > 256 ? count * 3 / 1024 : 256 ))
  echo "compare_ycsb: $system workload=$workload threads=$n rep=$rep" >&2
  case "$system" in
    fathom-embedded-shm) args=(--backend=fathom --fathom_fabric=shm) ;;
    fathom-embedded-tcp) args=(--backend=fathom --fathom_fabric=tcp) ;;
    fathom-deployed-shm | fathom-deployed-tcp | fathom-deployed-shm-polled)
      # A fresh cluster for every run: each run loads its own records into an empty table.
      local fabric=shm polling=()
      [[ "$system" == fathom-deployed-tcp ]] && fabric=tcp
      [[ "$system" == *-polled ]] && polling=(--threads=1 --busy_poll=1ms)
      cluster="$(mktemp -d /tmp/compare_ycsb_cluster.XXXXXX)"
      if ! tools/cluster.sh start --dir="$cluster" --nodes=3 --transports="$([[ $fabric == shm ]] && echo sm || echo tcp)" \
          --memory="${memory_mib}M" ${polling[@]+"${polling[@]}"} \
          >"${json%.json}.cluster" 2>&1; then
        echo "compare_ycsb: FAILED to start a cluster for $system (see ${json%.json}.cluster)" >&2
        rm -rf "$cluster"
        cluster=""
        return 0
      fi
      args=(--backend=fathom --fathom_fabric="$fabric" --zk="$(cat "$cluster/zk")" --cluster=local
            --token_file="$cluster/token" --server_pids="$(cat "$cluster"/node-*.pid | paste -sd,)")
      [[ "$system" == *-polled ]] && args+=(--fathom_busy_poll=1ms) ;;
    memcached) args=(--backend=memcached ${memcached_flags[@]+"${memcached_flags[@]}"}) ;;
    # Ten times the operations: at ~1.5M ops/s the others' count would be over in a tenth of a second.
    driver-ceiling) args=(--backend=memory); operations=$((ops * 10)) ;;
    *) args=(--backend="$system") ;;
  esac
  "$bin" "${args[@]}" --workload="$workload" --threads="$n" --seed=$((rep * 1000 + n)) --status_interval_s=60 \
    -p recordcount="$count" -p operationcount="$operations" --json_out="$json" >"${json%.json}.txt" 2>"${json%.json}.err" \
    || { echo "compare_ycsb: FAILED: $system $workload threads=$n (see ${json%.json}.err)" >&2; rm -f "$json"; }
  if [[ -n "$cluster" ]]; then
    tools/cluster.sh stop "$cluster" >>"${json%.json}.cluster" 2>&1 || true
    for log in "$cluster"/node-*.log; do cp "$log" "${json%.json}.$(basename "$log")" || true; done
    stop_cluster
  fi
}

for rep in $(seq 1 "$reps"); do
  for workload in a b c f bank; do
    for system in $systems; do
      # memcached has no multi-key transactions: the bank would only count NOT_IMPLEMENTED.
      [[ "$workload" == bank && "$system" == memcached ]] && continue
      run "$system" "$workload" "$threads" "$rep"
    done
  done
done
# Service time: one client, every node thread polling (the latency targets without 16 clients queueing for
# 2 cores); the sleeping cluster's one-client run is the sweep's.
if [[ " $systems " == *" fathom-deployed-shm "* ]]; then
  for rep in $(seq 1 "$reps"); do run fathom-deployed-shm-polled b 1 "$rep"; done
fi
# The sweep and the scale runs are the stores'; the ceiling bounds the tables' figures only.
stores="${systems/driver-ceiling/}"
for n in $sweep; do
  [[ "$n" == "$threads" ]] && continue  # the tables' runs already cover it
  for system in $stores; do run "$system" b "$n" 1; done
done

mkdir -p "$out/scale"
for count in $scale; do
  for workload in b c; do
    for system in $stores; do run "$system" "$workload" "$threads" 1 "$count"; done
  done
done

command="tools/compare_ycsb.sh --records $records --ops $ops --threads $threads --sweep \"$sweep\" --reps $reps --scale \"$scale\""
[[ "$systems" == "$default_systems" ]] || command+=" --systems \"$systems\""
[[ $quick -eq 0 ]] && command+=" --hugepages $hugepages"
[[ $quick -eq 1 ]] && command="tools/compare_ycsb.sh --quick"
python3 tools/ycsb_report.py --runs "$out" --doc "$doc" --img "$img" --threads "$threads" --command "$command"
echo "compare_ycsb: raw reports in $out; tables in $doc; plots in $img" >&2

#!/usr/bin/env python3
"""Turns a directory of YCSB driver JSON reports (tools/compare_ycsb.sh) into the comparison section of
docs/benchmarks.md (between "<!-- ycsb-comparison:begin -->" and "<!-- ycsb-comparison:end -->") and PNG
plots drawn with gnuplot.

Report files are named <system>_<workload>_<threads>_<rep>.json (system: one of SYSTEMS). Tables quote,
per workload and system, the run with the median throughput of its reps. The scale runs (YCSB-B and C at
several record counts) are in the subdirectory scale/, named <system>_<workload>_<records>_1.json.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys

# Deployed first: what users run.
SYSTEMS = ["fathom-deployed-shm", "fathom-deployed-tcp", "fathom-embedded-shm", "fathom-embedded-tcp",
           "memcached", "redis", "driver-ceiling"]
# The driver against its own in-process hash map (ycsb --backend=memory): no server, nothing replicated;
# what any store can show through this driver at most.
CEILING = "driver-ceiling"
# Systems whose servers run inside the driver's process: their server CPU is the driver's.
IN_PROCESS = {"fathom-embedded-shm", "fathom-embedded-tcp", CEILING}
FATHOM = [s for s in SYSTEMS if s.startswith("fathom-")]
BASELINES = ["memcached", "redis"]
WORKLOADS = [("a", "YCSB-A (50% reads, 50% updates, zipfian)"),
             ("b", "YCSB-B (95% reads, 5% updates, zipfian)"),
             ("c", "YCSB-C (100% reads, zipfian)"),
             ("f", "YCSB-F (50% reads, 50% read-modify-writes, zipfian)"),
             ("bank", "Bank (100% two-account transfers, zipfian; Redis: WATCH/MULTI/EXEC)")]
# The write-side operation reported for each workload.
WRITE_OP = {"a": "UPDATE", "b": "UPDATE", "c": None, "f": "READ-MODIFY-WRITE", "bank": "TRANSFER"}
# Service time (compare_ycsb.sh): deployed over shared memory, one client, every node thread polling.
POLLED = "fathom-deployed-shm-polled"
BEGIN, END = "<!-- ycsb-comparison:begin -->", "<!-- ycsb-comparison:end -->"
NAME = re.compile(r"^(" + "|".join(map(re.escape, SYSTEMS + [POLLED])) + r")_([a-z]+)_(\d+)_(\d+)\.json$")


def load_runs(directory):
    runs = {}
    for name in sorted(os.listdir(directory)):
        m = NAME.match(name)
        if not m:
            continue
        with open(os.path.join(directory, name)) as f:
            report = json.load(f)
        run = [p for p in report["phases"] if p["phase"] == "run"]
        if not run:
            continue
        key = (m.group(1), m.group(2), int(m.group(3)))
        runs.setdefault(key, []).append(run[0])
    return runs


def load_memory(directory, threads):
    """Per system: (bytes taken per loaded record, bytes allocated per record or None, records) from the load
    phases of workload B, the median of the reps by bytes taken."""
    per_system = {}
    for name in sorted(os.listdir(directory)):
        m = NAME.match(name)
        if not m or m.group(2) != "b" or int(m.group(3)) != threads:
            continue
        with open(os.path.join(directory, name)) as f:
            report = json.load(f)
        records = int(report.get("config", {}).get("property.recordcount", "0") or 0)
        for p in report["phases"]:
            if p["phase"] == "load" and p.get("server_memory_bytes", -1) >= 0 and records > 0:
                allocated = p.get("server_allocated_bytes", -1)
                per_system.setdefault(m.group(1), []).append(
                    (p["server_memory_bytes"] / records, allocated / records if allocated >= 0 else None, records))
    return {s: sorted(v)[(len(v) - 1) // 2] for s, v in per_system.items()}


def memory_table(memory):
    if not memory:
        return []
    rows = ["| system | records | memory taken after the load (MiB) | bytes taken per record | bytes allocated per record | copies held |",
            "| --- | --- | --- | --- | --- | --- |"]
    for system in SYSTEMS:
        if system in memory:
            per_record, allocated, records = memory[system]
            copies = "2 (f = 1)" if system.startswith("fathom-") else "1"
            shown = f"{allocated:,.0f}" if allocated is not None else "–"
            rows.append(f"| {system} | {records:,} | {per_record * records / 2**20:,.1f} | {per_record:,.0f} | {shown} | {copies} |")
    return ["### Memory per record (YCSB-B load, 10 fields × 100 bytes)", "",
            "What each server's own accounting says after loading, two ways. Taken: what its allocator holds "
            "for the data (memcached `total_malloced`, its slab pages; Fathom the slabs its members carved for "
            "objects; Redis `used_memory`: jemalloc's pages in use, which Redis refreshes only every tick, stay "
            "within 1% of it). Allocated: the sizes of the live allocations, rounding to size classes "
            "included, partly used pages not (Redis `used_memory`; Fathom its slots of live objects: hash "
            "buckets, records, catalog; memcached reports none). Fathom's count both copies (each backup "
            "mirrors its primary's regions byte for byte).", ""] + rows + [""]


def median_run(phases):
    ordered = sorted(phases, key=lambda p: p["throughput_ops_per_sec"])
    return ordered[(len(ordered) - 1) // 2]


def fmt_rate(x):
    return f"{x:,.0f}"


def fmt_us(op):
    if op is None:
        return "–"
    return f"{op['p50_us']:.1f} / {op['p99_us']:.1f}"


def fmt_cpu(seconds, ops):
    if seconds is None or seconds < 0 or ops == 0:
        return "–"
    return f"{seconds * 1e6 / ops:.1f}"


def total_cpu(system, phase):
    """CPU seconds of every process involved: servers and driver (once, when the servers are the driver)."""
    server, driver = phase.get("server_cpu_s"), phase.get("driver_cpu_s")
    if driver is None or driver < 0:
        return None
    if system in IN_PROCESS:
        return driver
    if server is None or server < 0:
        return None
    return server + driver


def errors(phase):
    bad = 0
    for name, m in phase["measurements"].items():
        if name.endswith("-FAILED"):
            continue
        for code, n in m.get("returns", {}).items():
            if code != "OK":
                bad += n
    return bad


def table(runs, workload, threads):
    rows = ["| system | throughput (ops/s), median [min–max] | read p50 / p99 (µs) | "
            f"{(WRITE_OP[workload] or 'write').lower()} p50 / p99 (µs) | server CPU µs / op | "
            "driver CPU µs / op | total CPU µs / op | non-OK returns |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    rates = {}
    for system in SYSTEMS:
        phases = runs.get((system, workload, threads))
        if not phases:
            if system == "memcached" and workload == "bank":
                rows.append("| memcached | not run: no multi-key transactions | | | | | | |")
            continue
        med = median_run(phases)
        all_rates = [p["throughput_ops_per_sec"] for p in phases]
        rates[system] = med["throughput_ops_per_sec"]
        m = med["measurements"]
        write = m.get(WRITE_OP[workload]) if WRITE_OP[workload] else None
        ops = med["operations"]
        server = "(in the driver)" if system in IN_PROCESS else fmt_cpu(med.get("server_cpu_s"), ops)
        rows.append(f"| {system} | {fmt_rate(rates[system])} [{fmt_rate(min(all_rates))}–{fmt_rate(max(all_rates))}]"
                    f" | {fmt_us(m.get('READ'))} | {fmt_us(write)} | {server} | "
                    f"{fmt_cpu(med.get('driver_cpu_s'), ops)} | {fmt_cpu(total_cpu(system, med), ops)} | "
                    f"{errors(med)} |")
    return "\n".join(rows), rates


def service_table(runs):
    """YCSB-B with one client: the sweep's one-client runs and the polled cluster's (the latency targets'
    service time, without clients queueing for the cores)."""
    rows = []
    for system, how in (("fathom-deployed-shm", "defaults: fathomd sleep when idle, the driver polls 50 µs"),
                        (POLLED, "1 node thread per process, every one polling 1 ms after its last work"),
                        ("redis", "one connection"), ("memcached", "one connection")):
        phases = runs.get((system, "b", 1))
        if not phases:
            continue
        med = median_run(phases)
        m = med["measurements"]
        ops = med["operations"]
        rows.append(f"| {system} | {how} | {fmt_rate(med['throughput_ops_per_sec'])} | {fmt_us(m.get('READ'))} | "
                    f"{fmt_us(m.get('UPDATE'))} | {fmt_cpu(total_cpu(system, med), ops)} |")
    if not any(r.startswith(f"| {POLLED} ") for r in rows):
        return []
    return ["### Service time: YCSB-B with one client", "",
            "With one client nothing queues for the cores, so the latencies are the operations' own. Deployed "
            "over shared memory, as above, and with every node thread (the three fathomd's and the driver's) "
            "polling 1 ms after its last work before it sleeps (`tools/cluster.sh start --threads=1 "
            "--busy_poll=1ms`, `ycsb --fathom_busy_poll=1ms`): FaRM's model, a core per polling thread, which this "
            "machine cannot give (4 polling threads on 2 cores) but comes closest to with one client. Median of "
            "the reps for the polled cluster; the others are the throughput sweep's one-client runs.", "",
            "| system | setting | throughput (ops/s) | read p50 / p99 (µs) | update p50 / p99 (µs) | "
            "total CPU µs / op |",
            "| --- | --- | --- | --- | --- | --- |"] + rows + [""]


def faster_baseline(rates):
    baselines = {s: rates[s] for s in BASELINES if s in rates}
    if not baselines:
        return None
    return max(baselines, key=baselines.get)


def ratio_line(rates):
    best = faster_baseline(rates)
    if best is None:
        return ""
    parts = [f"{s} = **{rates[s] / rates[best]:.1f}×**" for s in FATHOM if s in rates]
    if not parts:
        return ""
    line = f"Ratio to {best} (the faster baseline): " + "; ".join(parts) + "."
    if CEILING in rates:
        line += f" The driver's ceiling ({CEILING}): {rates[CEILING] / rates[best]:.1f}×."
    return line


def goal_check(runs, summary, threads, memory=None):
    """The speed targets, each with the figure that meets or misses it."""
    def verdict(ok):
        return "**met**" if ok else "**not met**"

    def p50(system, workload, op, clients=threads):
        phases = runs.get((system, workload, clients))
        m = median_run(phases)["measurements"].get(op) if phases else None
        return m["p50_us"] if m else None

    lines = []
    b = summary.get("b", {})
    best = faster_baseline(b)
    if "fathom-deployed-shm" in b and best:
        r = b["fathom-deployed-shm"] / b[best]
        lines.append(f"- Deployed over shm, YCSB-B ≥ 5× the faster baseline: {r:.1f}× {best}, {verdict(r >= 5)}.")
        # Little's law: with `threads` clients always waiting, an operation takes threads / throughput on
        # average, which CPU per operation and the cores bound from below.
        med = median_run(runs[("fathom-deployed-shm", "b", threads)])
        cpu = total_cpu("fathom-deployed-shm", med)
        queueing = (f" ({threads} clients at {fmt_rate(b['fathom-deployed-shm'])} ops/s: "
                    f"{threads / b['fathom-deployed-shm'] * 1e6:.0f} µs per operation on average by Little's law")
        if cpu is not None:
            per_op = cpu / med["operations"] * 1e6
            queueing += (f", and with {per_op:.1f} µs of CPU per operation on {os.cpu_count()} cores never under "
                         f"{threads * per_op / os.cpu_count():.0f} µs")
        queueing += ")"
        for op, limit in (("UPDATE", 50), ("READ", 10)):
            v = p50("fathom-deployed-shm", "b", op)
            if v is not None:
                line = (f"- Deployed over shm, YCSB-B {op.lower()} p50 ≤ {limit} µs: {v:.1f} µs at {threads} "
                        f"clients, {verdict(v <= limit)}{queueing if v > limit else ''}")
                s = p50(POLLED, "b", op, clients=1)
                if s is not None:
                    line += (f"; service time (one client, node threads polling, below): {s:.1f} µs, "
                             f"{verdict(s <= limit)}")
                lines.append(line + ".")
    if "fathom-deployed-tcp" in b and "redis" in b:
        r = b["fathom-deployed-tcp"] / b["redis"]
        lines.append(f"- Deployed over tcp, YCSB-B ≥ 1.5× Redis: {r:.1f}×, {verdict(r >= 1.5)}.")
    if "fathom-embedded-shm" in b and "redis" in b:
        r = b["fathom-embedded-shm"] / b["redis"]
        line = f"- Embedded, YCSB-B ≥ 20× Redis: {r:.1f}×, {verdict(r >= 20)}"
        if CEILING in b:
            c = b[CEILING] / b["redis"]
            line += (f"; the driver's ceiling ({CEILING}, below: its own in-process hash map) reaches {c:.1f}× "
                     f"Redis{', under 20×: out of reach through this driver on this machine' if c < 20 and r < 20 else ''}")
        lines.append(line + ".")
    bank = summary.get("bank", {})
    if "fathom-embedded-shm" in bank and "redis" in bank:
        r = bank["fathom-embedded-shm"] / bank["redis"]
        lines.append(f"- Embedded, bank transfers ≥ 10× Redis WATCH/MULTI/EXEC: {r:.1f}×, {verdict(r >= 10)}.")
    memory = memory or {}
    fathom_memory = [s for s in ("fathom-deployed-shm", "fathom-embedded-shm") if s in memory]
    if fathom_memory and "redis" in memory:
        fathom, redis = memory[fathom_memory[0]], memory["redis"]
        r = fathom[0] / redis[0]
        line = f"- Memory per record ≤ 1.2× Redis's, both copies counted: taken {r:.2f}×, {verdict(r <= 1.2)}"
        if fathom[1] is not None and redis[1] is not None:
            a = fathom[1] / redis[1]
            line += f"; allocated {a:.3f}×, {verdict(a <= 1.2)}"
        lines.append(line + ".")
    return ["Targets:", ""] + lines + [""] if lines else []


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def plot_lines(img, name, series, settings):
    """A PNG img/name of line plots, one per (title, style, [(x, y), ...]) in series; settings: gnuplot
    'set' lines (title, labels, scales, key)."""
    plots, data = [], []
    for i, (title, style, points) in enumerate(series):
        path = os.path.join(img, f"{name}.{i}.dat")
        with open(path, "w") as f:
            for x, y in points:
                f.write(f"{x} {y}\n")
        data.append(path)
        plots.append(f"'{path}' using 1:2 with {style} title '{title}'")
    out = os.path.join(img, name)
    gnuplot(f"""set terminal pngcairo size 800,500
set output '{out}'
{settings}
set grid
plot {', '.join(plots)}
""")
    for path in data:
        os.remove(path)
    return out


def plot_sweep(runs, img):
    points = {}
    for (system, workload, threads), phases in runs.items():
        if workload == "b":
            points.setdefault(system, []).append((threads, median_run(phases)["throughput_ops_per_sec"]))
    if not points:
        return None
    series = [(system, "linespoints", sorted(points[system])) for system in SYSTEMS if system in points]
    return plot_lines(img, "ycsb_b_throughput_vs_clients.png", series, """set title 'YCSB-B: throughput against concurrent clients'
set xlabel 'concurrent clients (fathom: clients on node threads)'
set ylabel 'operations / s'
set logscale x 2
set logscale y 10
set key left top""")


def plot_cdf(runs, img, threads, workload="b", op="READ"):
    plots, data = [], []
    for system in SYSTEMS:
        if system == CEILING:  # a bound, not a store: its threads block on no network
            continue
        phases = runs.get((system, workload, threads))
        if not phases:
            continue
        m = median_run(phases)["measurements"].get(op)
        if not m or "cdf_us" not in m:
            continue
        path = os.path.join(img, f"cdf_{system}.dat")
        with open(path, "w") as f:
            for pct, us in m["cdf_us"]:
                f.write(f"{max(us, 0.01)} {pct}\n")
        data.append(path)
        plots.append(f"'{path}' using 1:2 with lines lw 2 title '{system}'")
    if not plots:
        return None
    out = os.path.join(img, f"ycsb_{workload}_{op.lower()}_latency_cdf.png")
    gnuplot(f"""set terminal pngcairo size 800,500
set output '{out}'
set title 'YCSB-{workload.upper()}: {op} latency CDF ({threads} clients)'
set xlabel 'latency (µs)'
set ylabel 'percent of operations'
set logscale x 10
set yrange [0:100]
set grid
set key right bottom
plot {', '.join(plots)}
""")
    for path in data:
        os.remove(path)
    return out


def scale_table(scale):
    """Rows per system and record count: YCSB-B and C throughput and read p50 / p99; non-OK returns."""
    counts = sorted({records for (_, _, records) in scale})
    rows = ["| system | records | YCSB-B ops/s | YCSB-B read p50 / p99 (µs) | YCSB-B update p50 / p99 (µs) | "
            "YCSB-C ops/s | YCSB-C read p50 / p99 (µs) | non-OK returns |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    ran = {system for (system, _, _) in scale}
    for system in SYSTEMS:
        if system not in ran:
            continue
        for records in counts:  # a count with no report for this system shows as failed, not missing
            b = scale.get((system, "b", records))
            c = scale.get((system, "c", records))
            b, c = (median_run(b) if b else None), (median_run(c) if c else None)
            rows.append(f"| {system} | {records:,} | "
                        f"{fmt_rate(b['throughput_ops_per_sec']) if b else 'failed'} | "
                        f"{fmt_us(b['measurements'].get('READ')) if b else '–'} | "
                        f"{fmt_us(b['measurements'].get('UPDATE')) if b else '–'} | "
                        f"{fmt_rate(c['throughput_ops_per_sec']) if c else 'failed'} | "
                        f"{fmt_us(c['measurements'].get('READ')) if c else '–'} | "
                        f"{sum(errors(p) for p in (b, c) if p)} |")
    return "\n".join(rows)


def plot_scale(scale, img):
    series = []
    for workload, style in (("b", "linespoints"), ("c", "linespoints dashtype 2")):
        for system in SYSTEMS:
            points = sorted((records, median_run(phases)["throughput_ops_per_sec"])
                            for (s, w, records), phases in scale.items() if s == system and w == workload)
            if points:
                series.append((f"{system} YCSB-{workload.upper()}", style, points))
    if not series:
        return None
    return plot_lines(img, "ycsb_throughput_vs_records.png", series, """set title 'YCSB-B (solid) and C (dashed): throughput against records loaded'
set xlabel 'records'
set ylabel 'operations / s'
set logscale x 10
set logscale y 10
set key outside right""")


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem, huge = "", "no huge pages reserved"
    try:
        with open("/proc/meminfo") as f:
            fields = {k: v.split() for k, v in (line.split(":", 1) for line in f if ":" in line)}
        mem = f"{int(fields['MemTotal'][0]) / 1024 / 1024:.0f} GiB"
        total = int(fields["HugePages_Total"][0])
        if total > 0:
            huge = (f"{total} huge pages of {int(fields['Hugepagesize'][0]) // 1024} MiB reserved "
                    "(fathomd's regions on them, memcached -L)")
    except (OSError, KeyError, ValueError, IndexError):
        pass
    def version(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    return (f"{os.cpu_count()} cores ({cpu}), {mem}, Linux {platform.release()}, {huge}; "
            f"{version(['redis-server', '--version'])}; {version(['memcached', '-V'])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--img", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--command", required=True)
    args = ap.parse_args()
    runs = load_runs(args.runs)
    scale_dir = os.path.join(args.runs, "scale")
    scale = load_runs(scale_dir) if os.path.isdir(scale_dir) else {}
    if not runs and not scale:
        sys.exit(f"ycsb_report: no reports in {args.runs}")
    doc_dir = os.path.dirname(os.path.abspath(args.doc))
    lines = [BEGIN, "", "## YCSB: Fathom beside memcached and Redis", "",
             f"Generated by `{args.command}` on {datetime.date.today().isoformat()}. Machine: {machine()}. "
             "All systems ran on the same machine in the same run, one after another, every one with "
             f"{args.threads} concurrent clients. **fathom-deployed-shm / -tcp** is what users run: three fathomd "
             "processes (tools/cluster.sh defaults: 2 node threads each over shared memory, 1 over tcp polling 20 µs "
             "after its last work, the driver taking the members' number; f = 1, every write replicated; a fresh "
             "cluster for every run) and the YCSB driver as a separate process that joins as a client-only member, "
             "its clients on its node threads, over UCX shared memory or tcp on loopback. "
             "**fathom-embedded-shm / -tcp** is the driver's own 3-node cluster (1 node thread per node) in one "
             "process, clients on the node threads (FaRM's model: the application runs on the nodes). The "
             "driver's node threads, deployed or embedded, poll 50 µs after their last work (its "
             "--fathom_busy_poll default). memcached "
             "and Redis get one driver thread and connection per client (the driver starts the servers on "
             "loopback ports, persistence off). **driver-ceiling** is no store at all: the driver against its own "
             "in-process hash map of encoded records (`--backend=memory`: a read is a lookup and a decode, nothing "
             "is replicated or sent; one OS thread per client, keys spread over 64 locks; ten times the operations, "
             "so that its run lasts as long as the others'), the most any store can show through this driver on "
             "this machine. CPU is per operation of the run phase, for the servers (the "
             "three fathomd together; memcached; redis-server; an embedded cluster is the driver's process), the "
             "driver, and both. Latencies are client-side; p50 / p99 in µs.", ""]
    summary = {}
    tables = []
    for workload, title in WORKLOADS:
        text, rates = table(runs, workload, args.threads)
        if len(text.splitlines()) <= 2:
            continue
        summary[workload] = rates
        tables += [f"### {title}", "", text, "", ratio_line(rates), ""]
    memory = load_memory(args.runs, args.threads)
    lines += goal_check(runs, summary, args.threads, memory) + tables + memory_table(memory) + service_table(runs)
    scale_plot = plot_scale(scale, args.img) if scale else None
    if scale:
        lines += ["### Scale: YCSB-B and C at several record counts", "",
                  f"The same systems and {args.threads} clients, one run each, loading the given number of "
                  "records (1 KB each) into an empty store first; Fathom's table starts at records / 4 buckets, "
                  "its nodes get memory in proportion. \"failed\": the run did not finish (its .err file in the "
                  "raw reports says why).", "", scale_table(scale), ""]
    sweep = plot_sweep(runs, args.img)
    cdf = plot_cdf(runs, args.img, args.threads)
    for path, caption in ((sweep, "YCSB-B throughput against client threads"),
                          (cdf, "YCSB-B read latency CDF"),
                          (scale_plot, "YCSB-B and C throughput against records")):
        if path:
            lines += [f"![{caption}]({os.path.relpath(path, doc_dir)})", ""]
    lines.append(END)
    section = "\n".join(lines) + "\n"
    existing = open(args.doc).read() if os.path.exists(args.doc) else ""
    if BEGIN in existing and END in existing:
        head, rest = existing.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        updated = head + section.rstrip("\n") + tail
    else:
        updated = existing + ("\n" if existing and not existing.endswith("\n") else "") + "\n" + section
    with open(args.doc, "w") as f:
        f.write(updated)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Recovery times and a throughput plot from a fault run's timeline (FaRM SOSP'15 Figure 8 style).

  tools/recovery_timeline.py TIMELINE FAULT_MS [--svg OUT.svg] [--title TEXT]

TIMELINE is the YCSB driver's --timeline_out file ("<unix ms> <operations done>" per line); FAULT_MS the
unix time in ms at which the fault went in (tools/fault_run.sh records both). Prints, relative to the fault:
  before   the median throughput of the 3 s before it (50 ms bins);
  stall    from the first 50 ms bin after it below 10% of before to the next bin at 10% or more (none:
           no bin fell below);
  resumed  the end of that span: operations complete again (the driver's threads all wait on the failed
           node's keys during a stall, so this is when the first of those completes, within a bin);
  90%      the first time after which a 500 ms window runs at 90% of before or more.
The plot: throughput in 100 ms bins, the fault marked.
"""
import argparse
import statistics
import sys


def read_timeline(path):
    samples = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"{path}:{n}: want '<unix ms> <operations>', got {line.strip()!r}")
            samples.append((int(parts[0]), int(parts[1])))
    if len(samples) < 3:
        sys.exit(f"{path}: {len(samples)} samples; the run was too short")
    return samples


def rates(samples, bin_ms):
    """(start ms, ops/s) per bin of about bin_ms, from consecutive samples."""
    out = []
    start_t, start_n = samples[0]
    for t, n in samples[1:]:
        if t - start_t >= bin_ms:
            out.append((start_t, (n - start_n) * 1000.0 / (t - start_t)))
            start_t, start_n = t, n
    return out


def analyse(samples, fault_ms):
    bins = rates(samples, 50)
    before = [r for t, r in bins if fault_ms - 3000 <= t < fault_ms - 100]
    if not before:
        sys.exit("no samples in the 3 s before the fault")
    base = statistics.median(before)
    after = [(t - fault_ms, r) for t, r in bins if t >= fault_ms]
    stall = None
    first_low = next((t for t, r in after if r < 0.1 * base), None)
    if first_low is not None:
        back = next((t for t, r in after if t > first_low and r >= 0.1 * base), None)
        stall = (first_low, back if back is not None else after[-1][0] + 50)
    resumed = stall[1] if stall else 0
    ninety = None
    for i, (t, _) in enumerate(after):
        if t < resumed:
            continue
        window = [r for u, r in after[i:] if u < t + 500]
        if len(window) >= 5 and sum(window) / len(window) >= 0.9 * base:
            ninety = t
            break
    return base, stall, resumed, ninety


def svg(samples, fault_ms, title):
    bins = [((t - fault_ms) / 1000.0, r) for t, r in rates(samples, 100)]
    x0, x1 = bins[0][0], bins[-1][0]
    top = max(r for _, r in bins) * 1.1 or 1
    w, h, left, bottom = 720, 300, 60, 30

    def px(x):
        return left + (x - x0) / (x1 - x0) * (w - left - 10)

    def py(y):
        return h - bottom - y / top * (h - bottom - 20)

    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in bins)
    ticks = "".join(
        f'<text x="{px(s):.1f}" y="{h - 10}" font-size="10" text-anchor="middle">{s:g}</text>'
        for s in range(int(x0), int(x1) + 1, 5))
    yticks = "".join(
        f'<text x="{left - 4}" y="{py(top * k / 4):.1f}" font-size="10" text-anchor="end">'
        f'{top * k / 4 / 1000:.0f}K</text>' for k in range(0, 5))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
            f'<rect width="{w}" height="{h}" fill="white"/>'
            f'<text x="{left}" y="14" font-size="12">{title}</text>'
            f'<line x1="{left}" y1="{h - bottom}" x2="{w - 10}" y2="{h - bottom}" stroke="black"/>'
            f'<line x1="{left}" y1="20" x2="{left}" y2="{h - bottom}" stroke="black"/>{ticks}{yticks}'
            f'<line x1="{px(0):.1f}" y1="20" x2="{px(0):.1f}" y2="{h - bottom}" stroke="red" stroke-dasharray="4"/>'
            f'<text x="{px(0) + 3:.1f}" y="30" font-size="10" fill="red">fault</text>'
            f'<polyline fill="none" stroke="steelblue" stroke-width="1.5" points="{points}"/>'
            f'<text x="{w / 2}" y="{h}" font-size="10" text-anchor="middle">seconds from the fault; ops/s per 100 ms</text>'
            '</svg>\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("timeline")
    parser.add_argument("fault_ms", type=int)
    parser.add_argument("--svg")
    parser.add_argument("--title", default="YCSB-B throughput")
    args = parser.parse_args()
    samples = read_timeline(args.timeline)
    base, stall, resumed, ninety = analyse(samples, args.fault_ms)
    stall_text = f"+{stall[0] / 1000:.2f} .. +{stall[1] / 1000:.2f} s" if stall else "none"
    ninety_text = f"+{ninety / 1000:.2f} s" if ninety is not None else "never (within the run)"
    print(f"before: {base:.0f} ops/s; stall (<10%): {stall_text}; resumed: +{resumed / 1000:.2f} s; "
          f"90%: {ninety_text}")
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg(samples, args.fault_ms, args.title))


if __name__ == "__main__":
    main()

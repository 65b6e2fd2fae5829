#!/usr/bin/env python3
"""Power and SM clock of each run of scripts/gpu/fused_power.sh, from its own files.

  experiments/fused_power.py <dir> [--busy-watts 300]

<dir> holds stamps_<m>.txt (each run's start and end), smipow_<m>.csv (nvidia-smi every 20 ms: clock,
power, the active clock-event mask) and run_<rep>_<name>*_<m>.log (the runs' own times). Prints a
Markdown table: per run, over the samples of every GPU within its window that draw more than
--busy-watts (the run's kernels, not its process start), the median SM clock and power, the share of
samples at the software power cap (event mask bit 0x4), and the run's time per call from its log.
"""
import argparse
import glob
import os
import re
import statistics
import sys
from datetime import datetime

SW_POWER_CAP = 0x4


def parse_time(s):
    return datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f")


def windows(path):
    """[(rep, name, start, end)] from the stamps file, in order; rep counts each name's runs."""
    out, open_ = [], {}
    seen = {}
    for line in open(path):
        kind, name, rest = line.split(" ", 2)
        t = parse_time(rest)
        if kind == "start":
            open_[name] = t
        elif kind == "end" and name in open_:
            seen[name] = seen.get(name, 0) + 1
            out.append((seen[name], name, open_.pop(name), t))
    return out


def samples(path):
    rows = []
    with open(path) as f:
        next(f)
        for line in f:
            p = [x.strip() for x in line.split(",")]
            if len(p) < 5:
                continue
            try:
                rows.append((parse_time(p[0]), int(p[1]), float(p[2]), float(p[3]), int(p[4], 16)))
            except ValueError:
                continue
    return rows


def run_time(d, rep, name, m):
    """The run's time per call (us) as its log prints it: gemm-bench's row (GPU 0's), the fused bench's."""
    logs = glob.glob(os.path.join(d, f"run_{rep}_{name}_gpu0_{m}.log")) or glob.glob(os.path.join(d, f"run_{rep}_{name}_{m}.log"))
    if not logs:
        return None
    for line in open(logs[0]):
        f = line.split()
        if f and f[0] == "bf16" and "graph" in f:  # gemm-bench: ... tile us, cublaslt us, ratio
            nums = [float(x) for x in f if re.fullmatch(r"-?\d+\.\d+", x)]
            return max(nums[:2]) if len(nums) >= 2 else None
        if f and f[0] in ("ag_mm", "mm_rs") and len(f) > 9 and f[1].startswith(f[0] + "."):
            return float(f[7])
    return None


def summarize(d, busy_watts=300.0):
    """Every run's row: {name, rep, us, samples, clock_mhz, power_w, cap_share} (None where it had no
    busy sample), in the stamps' order."""
    st = glob.glob(os.path.join(d, "stamps_*.txt"))
    if not st:
        raise FileNotFoundError("no stamps_<machine>.txt in %s" % d)
    m = os.path.basename(st[0])[len("stamps_"):-len(".txt")]
    smi = samples(os.path.join(d, f"smipow_{m}.csv"))
    out = []
    for rep, name, t0, t1 in windows(st[0]):
        busy = [s for s in smi if t0 <= s[0] <= t1 and s[3] > busy_watts]
        row = {"name": name, "rep": rep, "us": run_time(d, rep, name, m), "samples": len(busy),
               "clock_mhz": None, "power_w": None, "cap_share": None}
        if busy:
            row["clock_mhz"] = statistics.median(s[2] for s in busy)
            row["power_w"] = statistics.median(s[3] for s in busy)
            row["cap_share"] = sum(1 for s in busy if s[4] & SW_POWER_CAP) / len(busy)
        out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--busy-watts", type=float, default=300.0)
    a = ap.parse_args()
    try:
        rows = summarize(a.dir, a.busy_watts)
    except FileNotFoundError as e:  # no stamps file, or no samples file beside it (a compressed one is not read)
        sys.exit(f"fused_power: {e}")
    print("| run | rep | us a call | busy samples | SM clock MHz (median) | power W (median) | at the power cap |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        us = "%.1f" % r["us"] if r["us"] is not None else "-"
        if not r["samples"]:
            print(f"| {r['name']} | {r['rep']} | {us} | 0 | - | - | - |")
            continue
        print(f"| {r['name']} | {r['rep']} | {us} | {r['samples']} | {r['clock_mhz']:.0f} | {r['power_w']:.0f} | "
              f"{100 * r['cap_share']:.0f} % |")


if __name__ == "__main__":
    main()

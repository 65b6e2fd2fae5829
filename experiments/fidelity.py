#!/usr/bin/env python3
"""Held-out validation of the simulator: predict every committed GPU row of one machine.

    experiments/fidelity.py MACHINE [--symmcoll build/apps/symmcoll] [--out experiments/tables/fidelity_MACHINE.md]

Every row of experiments/results/MACHINE/bench_MACHINE.csv and tune_MACHINE.csv that runs one of
our algorithms (NCCL's rows are not ours to predict) is predicted by `symmcoll sweep
--timing-only` on experiments/machines/MACHINE.ini at the row's world, block count and launch mode.
None of these rows is used by the fit (`symmcoll fit` reads only calibration microbenchmarks).
Reports the median and max of |pred - meas| / meas overall, per op, per algorithm, per size band
and per launch mode, and lists every row beyond 20%. Standard library only.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BANDS = [(0, 64 << 10, "<= 64K"), (64 << 10, 1 << 20, "64K-1M"), (1 << 20, 16 << 20, "1M-16M"),
         (16 << 20, 1 << 40, "> 16M")]
LIMIT = 0.20


def band(b):
    for lo, hi, name in BANDS:
        if lo < b <= hi or (b == 0 and lo == 0):
            return name
    return "?"


def size(b):
    for unit, s in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b >= unit and b % unit == 0:
            return "%d%s" % (b // unit, s)
    return str(b)


def measured_rows(machine):
    rows = []
    for kind in ("bench", "tune"):
        path = os.path.join(ROOT, "experiments", "results", machine, "%s_%s.csv" % (kind, machine))
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for r in csv.DictReader(f):
                if "." not in r["algo"] or r["op"] == "barrier":
                    continue  # NCCL's baselines; barriers have no size to sweep
                rows.append({"source": kind, "world": int(r["world"]), "op": r["op"], "algo": r["algo"],
                             "dtype": r["dtype"], "bytes": int(r["bytes"]), "blocks": int(r["blocks"]),
                             "graph": int(r["graph"]), "meas": float(r["time_us_median"])})
    return rows


def predict(symmcoll, machine, rows):
    """Fills r["pred"] for every row: one sweep per (world, algo, dtype, blocks, mode)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["world"], r["algo"], r["dtype"], r["blocks"], r["graph"]), []).append(r)
    with tempfile.TemporaryDirectory() as tmp:
        for i, ((world, algo, dtype, blocks, graph), rs) in enumerate(sorted(groups.items())):
            out = os.path.join(tmp, "%d.csv" % i)
            sizes = ",".join(str(b) for b in sorted({r["bytes"] for r in rs}))
            cmd = [symmcoll, "sweep", "--machine", machine, "--world", str(world), "--op", rs[0]["op"], "--algo", algo,
                   "--dtype", dtype, "--blocks", str(blocks), "--mode", "graph" if graph else "eager",
                   "--sizes", sizes, "--timing-only", "--quiet", "--csv", out]
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                sys.stderr.write("fidelity: %s failed: %s" % (" ".join(cmd), p.stderr))
                continue
            with open(out) as f:
                pred = {int(x["bytes"]): float(x["time_us_median"]) for x in csv.DictReader(f)}
            for r in rs:
                if r["bytes"] in pred:
                    r["pred"] = pred[r["bytes"]]


def stats(rs):
    e = [abs(r["pred"] - r["meas"]) / r["meas"] for r in rs]
    signed = statistics.median([(r["pred"] - r["meas"]) / r["meas"] for r in rs])
    return len(e), statistics.median(e), max(e), signed, sum(x > LIMIT for x in e)


def table(title, key, rows):
    lines = ["### %s" % title, "", "| %s | rows | median | max | median signed | beyond 20%% |" % title.split()[-1],
             "|---|---:|---:|---:|---:|---:|"]
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    order = [b[2] for b in BANDS]
    for k in sorted(groups, key=lambda k: (order.index(k) if k in order else 0, str(k))):
        n, med, mx, sgn, over = stats(groups[k])
        lines.append("| %s | %d | %.1f%% | %.1f%% | %+.1f%% | %d |" % (k, n, 100 * med, 100 * mx, 100 * sgn, over))
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("machine")
    ap.add_argument("--symmcoll", default=os.path.join(ROOT, "build", "apps", "symmcoll"))
    ap.add_argument("--out")
    a = ap.parse_args()
    out = a.out or os.path.join(ROOT, "experiments", "tables", "fidelity_%s.md" % a.machine)
    rows = measured_rows(a.machine)
    if not rows:
        sys.exit("fidelity: no bench/tune rows for machine %s under experiments/results/%s" % (a.machine, a.machine))
    predict(a.symmcoll, a.machine, rows)
    missing = [r for r in rows if "pred" not in r]
    rows = [r for r in rows if "pred" in r]
    n, med, mx, sgn, over = stats(rows)
    ok = "met" if med <= 0.05 and mx <= LIMIT else "NOT met"
    lines = ["# Simulator fidelity on %s (held out)" % a.machine, "",
             "Every committed GPU row of our algorithms (bench and tune CSVs: all sizes, default and tuned block",
             "counts, graph and eager) against `symmcoll sweep --timing-only` on experiments/machines/%s.ini." % a.machine,
             "No row here is used to fit the machine file. Error: |pred - meas| / meas; signed: (pred - meas) / meas",
             "(negative: the simulator is optimistic). Generated by experiments/fidelity.py; do not edit.", "",
             "**Overall: %d rows, median %.1f%%, max %.1f%%, median signed %+.1f%%, %d beyond 20%%.** "
             "Target (median <= 5%%, max <= 20%%): %s." % (n, 100 * med, 100 * mx, 100 * sgn, over, ok), ""]
    if missing:
        lines += ["%d row(s) not predicted: the simulator refuses the combination (run `symmcoll run` on one for the "
                  "reason): %s." % (len(missing), ", ".join("%s %s blocks %d" % (r["algo"], size(r["bytes"]), r["blocks"])
                                                            for r in missing)), ""]
    lines += table("per op", lambda r: r["op"], rows)
    lines += table("per algorithm", lambda r: r["algo"], rows)
    lines += table("per size band", lambda r: band(r["bytes"]), rows)
    lines += table("per launch mode", lambda r: "graph" if r["graph"] else "eager", rows)
    bad = sorted((r for r in rows if abs(r["pred"] - r["meas"]) / r["meas"] > LIMIT),
                 key=lambda r: -abs(r["pred"] - r["meas"]) / r["meas"])
    lines += ["### Rows beyond 20%% (%d)" % len(bad), ""]
    if bad:
        lines += ["| source | algo | dtype | bytes | blocks | mode | measured us | predicted us | error |",
                  "|---|---|---|---:|---:|---|---:|---:|---:|"]
        for r in bad:
            lines.append("| %s | %s | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% |" % (
                r["source"], r["algo"], r["dtype"], size(r["bytes"]), r["blocks"], "graph" if r["graph"] else "eager",
                r["meas"], r["pred"], 100 * (r["pred"] - r["meas"]) / r["meas"]))
    lines.append("")
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("fidelity %s: %d rows, median %.1f%%, max %.1f%%, %d beyond 20%% -> %s" % (a.machine, n, 100 * med, 100 * mx,
                                                                                     over, os.path.relpath(out, ROOT)))


if __name__ == "__main__":
    main()

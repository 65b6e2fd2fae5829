#!/usr/bin/env python3
"""Held-out validation of the simulator: predict every committed GPU row of one machine.

    experiments/fidelity.py MACHINE [--symmcoll build/apps/symmcoll] [--out experiments/tables/fidelity_MACHINE.md]

Every committed GPU row of experiments/results/MACHINE/ that runs one of our algorithms (NCCL's rows
and the fused operations' baselines are not ours to predict) is predicted by `symmcoll sweep
--timing-only` on experiments/machines/MACHINE.ini at the row's world, block count (fused: M, N, K)
and launch mode: the bench CSVs (every *.csv but tune_* and calibrate_*; where runs overlap, each
cell from the newest run, plots/data.py measured_rows), the block-count sweeps (tune_*.csv) and the
fused operations' rows (ag_mm, mm_rs). None of these rows is used by the fit (`symmcoll fit` reads
only calibration microbenchmarks).
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
sys.path.insert(0, os.path.join(ROOT, "plots"))
import data  # noqa: E402
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
    out = []
    rows = data.measured_rows(machine) + data.tune_rows(machine) + data.measured_rows(machine, fused=True)
    for r in rows:
        if "." not in r["algo"] or r["op"] == "barrier":
            continue  # NCCL's rows and the fused baselines; barriers have no size to sweep
        out.append({"source": os.path.basename(r["source"])[:-len(".csv")], "world": r["world"], "op": r["op"],
                    "algo": r["algo"], "dtype": r["dtype"], "bytes": r["bytes"], "blocks": r["blocks"],
                    "graph": r["graph"], "meas": r["time_us_median"], "p90": r["time_us_p90"],
                    "mnk": tuple(int(r.get(k) or 0) for k in ("M", "N", "K"))})
    return out


def predict(symmcoll, machine, rows):
    """Fills r["pred"] for every row: one sweep per (world, algo, dtype, blocks, mode)."""
    groups = {}
    for r in rows:
        fused = r["op"] in data.FUSED_OPS
        groups.setdefault((r["world"], r["algo"], r["dtype"], r["blocks"], r["graph"], r["mnk"][1:] if fused else ()),
                          []).append(r)
    with tempfile.TemporaryDirectory() as tmp:
        for i, ((world, algo, dtype, blocks, graph, nk), rs) in enumerate(sorted(groups.items())):
            out = os.path.join(tmp, "%d.csv" % i)
            mode = "graph" if graph else "eager"
            if nk:  # a fused operation: one sweep per (N, K), its Ms
                ms = ",".join(str(m) for m in sorted({r["mnk"][0] for r in rs}))
                cmd = [symmcoll, "sweep", "--backend", "sim", "--machine", machine, "--world", str(world), "--op",
                       rs[0]["op"], "--algo", algo, "--dtype", dtype, "--n", str(nk[0]), "--k", str(nk[1]), "--m", ms,
                       "--mode", mode, "--timing-only", "--no-baselines", "--csv", out]
            else:
                sizes = ",".join(str(b) for b in sorted({r["bytes"] for r in rs}))
                cmd = [symmcoll, "sweep", "--machine", machine, "--world", str(world), "--op", rs[0]["op"], "--algo",
                       algo, "--dtype", dtype, "--blocks", str(blocks), "--mode", mode,
                       "--sizes", sizes, "--timing-only", "--quiet", "--csv", out]
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                sys.stderr.write("fidelity: %s failed: %s" % (" ".join(cmd), p.stderr))
                continue
            with open(out) as f:
                pred = {(int(x["bytes"]), int(x["M"] or 0)): float(x["time_us_median"]) for x in csv.DictReader(f)}
            for r in rs:
                k = (r["bytes"], r["mnk"][0])
                if k in pred:
                    r["pred"] = pred[k]


def stats(rs):
    e = [abs(r["pred"] - r["meas"]) / r["meas"] for r in rs]
    signed = statistics.median([(r["pred"] - r["meas"]) / r["meas"] for r in rs])
    return len(e), statistics.median(e), max(e), signed, sum(x > LIMIT for x in e)


def ranking(rows):
    """Cells (op, world, dtype, size or M x N x K, launch mode) of the bench runs (default block
    counts; the tune sweeps are left out) where two or more of our algorithms were measured: the
    simulator ranks a cell right when the algorithm it predicts fastest measured within the
    fastest one's p90 (its p10-p90 spread). Returns (cells, right, the wrong ones)."""
    cells = {}
    for r in rows:
        if r["source"].startswith("tune"):
            continue
        cells.setdefault((r["op"], r["world"], r["dtype"], r["bytes"], r["mnk"], r["graph"]), []).append(r)
    n, right, wrong = 0, 0, []
    for k, rs in sorted(cells.items()):
        if len({r["algo"] for r in rs}) < 2:
            continue
        n += 1
        best = min(rs, key=lambda r: r["meas"])
        pick = min(rs, key=lambda r: r["pred"])
        if pick["meas"] <= best["p90"]:
            right += 1
        else:
            wrong.append((k, best, pick))
    return n, right, wrong


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
             "counts, graph and eager; the host plans; the fused operations at their M, N, K; where two runs measured",
             "the same cell, the newer run's row) against `symmcoll sweep --timing-only` on",
             "experiments/machines/%s.ini." % a.machine,
             "No row here is used to fit the machine file. Error: |pred - meas| / meas; signed: (pred - meas) / meas",
             "(negative: the simulator is optimistic). Generated by experiments/fidelity.py; do not edit.", "",
             "**Overall: %d rows, median %.1f%%, max %.1f%%, median signed %+.1f%%, %d beyond 20%%.** "
             "Target (median <= 5%%, max <= 20%%): %s." % (n, 100 * med, 100 * mx, 100 * sgn, over, ok), ""]
    if missing:
        lines += ["%d row(s) not predicted: the simulator refuses the combination (run `symmcoll run` on one for the "
                  "reason): %s." % (len(missing), ", ".join("%s %s blocks %d" % (r["algo"], size(r["bytes"]), r["blocks"])
                                                            for r in missing)), ""]
    cells, right, wrong = ranking(rows)
    if cells:
        lines += ["**Ranking: the algorithm predicted fastest measured fastest (within the fastest's p90) in %d of %d "
                  "cells (%.0f%%).** Target: 90%%." % (right, cells, 100.0 * right / cells), ""]
    lines += table("per op", lambda r: r["op"], rows)
    lines += table("per algorithm", lambda r: r["algo"], rows)
    lines += table("per size band", lambda r: band(r["bytes"]), rows)
    lines += table("per launch mode", lambda r: "graph" if r["graph"] else "eager", rows)
    lines += table("per run", lambda r: r["source"], rows)
    new = sorted((r for r in rows if r["op"] in data.FUSED_OPS or ".ce_" in r["algo"]),
                 key=lambda r: (r["op"], r["algo"], r["mnk"], r["bytes"], -r["graph"]))
    if new:
        lines += ["### Host plans and fused operations, row by row (%d)" % len(new), "",
                  "| source | algo | bytes or M x N x K | blocks | mode | measured us | predicted us | error |",
                  "|---|---|---:|---:|---|---:|---:|---:|"]
        for r in new:
            what = "%d x %d x %d" % r["mnk"] if r["op"] in data.FUSED_OPS else size(r["bytes"])
            lines.append("| %s | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% |" % (
                r["source"], r["algo"], what, r["blocks"], "graph" if r["graph"] else "eager", r["meas"], r["pred"],
                100 * (r["pred"] - r["meas"]) / r["meas"]))
        lines.append("")
    if wrong:
        lines += ["### Cells ranked wrong (%d)" % len(wrong), "",
                  "| op | size | mode | measured fastest (us, p90) | predicted fastest | its measured us |",
                  "|---|---:|---|---|---|---:|"]
        for (op, world, dtype, b, mnk, graph), best, pick in wrong:
            what = "%d x %d x %d" % mnk if op in data.FUSED_OPS else size(b)
            lines.append("| %s | %s | %s | %s (%.2f, %.2f) | %s | %.2f |" % (
                op, what, "graph" if graph else "eager", best["algo"], best["meas"], best["p90"], pick["algo"],
                pick["meas"]))
        lines.append("")
    bad = sorted((r for r in rows if abs(r["pred"] - r["meas"]) / r["meas"] > LIMIT),
                 key=lambda r: -abs(r["pred"] - r["meas"]) / r["meas"])
    lines += ["### Rows beyond 20%% (%d)" % len(bad), ""]
    if bad:
        lines += ["| source | algo | dtype | bytes | blocks | mode | measured us | predicted us | error |",
                  "|---|---|---|---:|---:|---|---:|---:|---:|"]
        for r in bad:
            lines.append("| %s | %s | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% |" % (
                r["source"], r["algo"], r["dtype"],
                "%d x %d x %d" % r["mnk"] if r["op"] in data.FUSED_OPS else size(r["bytes"]), r["blocks"],
                "graph" if r["graph"] else "eager",
                r["meas"], r["pred"], 100 * (r["pred"] - r["meas"]) / r["meas"]))
    lines.append("")
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("fidelity %s: %d rows, median %.1f%%, max %.1f%%, %d beyond 20%% -> %s" % (a.machine, n, 100 * med, 100 * mx,
                                                                                     over, os.path.relpath(out, ROOT)))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The `--algo auto` table of one machine: for every (op, world, dtype, graph, bytes) the fastest
correct algorithm of ours, measured where the machine has GPU results, simulated elsewhere.

  auto_table.py MACHINE OUT.csv

Inputs (paths from plots/data.py):
  experiments/results/<machine>/[round_*/]*.csv           GPU measurements: bench and tune runs (data.result_csvs;
                                                          runs/ is not read)
  experiments/results/sim/<machine>/<op>.csv              the simulator's predictions
  paper/generated/algorithms.md                           the registry (`symmcoll list --markdown`):
                                                          which algorithms need NVLink multicast

Output: one row per (op, world, dtype, graph, bytes), columns
  op, world, dtype, graph, bytes, algo, blocks, source, time_us
source = measured (a GPU row of this machine) or simulated (a prediction of its machine file);
blocks = the block count of the winning row (tune_*.csv rows carry swept block counts, so a
tuned count can win); time_us = that row's median. core/auto_select.cpp reads the file.

Rules, in order:
  - Candidates are our algorithms only: not NCCL (nccl, nccl_symm), and never one that needs
    NVLink multicast (it stays off on the GPU machines; see the README), like the library's rule.
  - Correctness: a row whose max_rel_err exceeds the dtype's bound (core/reference.cpp
    rel_err_bound, mirrored in err_bound() below) is out, and so is every unchecked row
    (max_rel_err = -1) of an (algo, world, dtype, bytes) that failed a checked row in the same
    source. An unchecked row of an algorithm never caught failing competes: sizes above the
    sweeps' --check-up-to and the block-count sweeps run timing-only.
  - Measured wins: a key with at least one correct measured row takes the fastest of them
    (ties: smaller algorithm id, then fewer blocks), and simulated rows are not considered
    there, not even for algorithms with no GPU rows (the host plans until a bench measures
    them). Keys with no measured row (a machine, world, dtype or graph mode never measured)
    take the fastest correct simulated row.
Standard library only (Debian's /usr/bin/python3).
"""

import csv
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plots"))
import data  # noqa: E402

COLUMNS = ["op", "world", "dtype", "graph", "bytes", "algo", "blocks", "source", "time_us"]
ALGORITHMS_MD = os.path.join(data.ROOT, "paper", "generated", "algorithms.md")


def err_bound(dtype, world):
    """core/reference.cpp rel_err_bound: half an ulp of the dtype, plus fp32 accumulation."""
    half_ulp = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11, "fp32": 2.0 ** -24}[dtype]
    return half_ulp * 1.01 + world * 2.0 ** -23 * 2.0 / 1e-2


def multicast_algos(path=ALGORITHMS_MD):
    """Ids of the registry's algorithms that need NVLink multicast (the table's multicast column)."""
    with open(path) as f:
        lines = [line for line in f if line.startswith("|")]
    head = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    out = set()
    for line in lines[2:]:
        cells = dict(zip(head, (c.strip() for c in line.strip().strip("|").split("|"))))
        if cells.get("multicast") == "yes":
            out.add(cells["id"].strip("`"))
    return out


def measured_rows(machine):
    """Every GPU row of the machine's bench and block-count sweeps (runs/ holds older commits)."""
    rows = []
    for path in data.result_csvs(machine):
        if not data.is_run(path) and not os.path.basename(path).startswith("tune"):
            continue  # their own schemas, and the PDL-off ablation (plots/data.py NOT_RUNS)
        rows += [r for r in data.read_rows(path) if r["backend"] == "cuda"]
    return rows


def correct_rows(rows, multicast):
    """Our rows that pass the correctness rule (module docstring)."""
    ours = [r for r in rows if not r["algo"].startswith("nccl") and r["algo"] not in multicast
            and r["op"] in data.OPS and math.isfinite(r["time_us_median"])]
    failed = {(r["algo"], r["world"], r["dtype"], r["bytes"]) for r in ours
              if r["max_rel_err"] >= 0 and r["max_rel_err"] > err_bound(r["dtype"], r["world"])}
    return [r for r in ours if (r["algo"], r["world"], r["dtype"], r["bytes"]) not in failed
            and (r["max_rel_err"] < 0 or r["max_rel_err"] <= err_bound(r["dtype"], r["world"]))]


def fastest(rows):
    """{(op, world, dtype, graph, bytes): winning row}; ties by algorithm id, then blocks."""
    best = {}
    for r in rows:
        k = (r["op"], r["world"], r["dtype"], r["graph"], r["bytes"])
        rank = (r["time_us_median"], r["algo"], r["blocks"])
        if k not in best or rank < best[k][0]:
            best[k] = (rank, r)
    return {k: v[1] for k, v in best.items()}


def choose(measured, simulated, multicast):
    """{key: (row, source)}: measured winners, and simulated winners for keys never measured."""
    out = {k: (r, "measured") for k, r in fastest(correct_rows(measured, multicast)).items()}
    for k, r in fastest(correct_rows(simulated, multicast)).items():
        out.setdefault(k, (r, "simulated"))
    return out


def table(machine):
    return choose(measured_rows(machine), data.sim_rows(machine), multicast_algos())


def write(machine, out):
    chosen = table(machine)
    if not chosen:
        sys.exit("auto_table.py: no measured or simulated rows for %s (run make experiments)" % machine)
    op_order = {op: i for i, op in enumerate(data.OPS)}
    keys = sorted(chosen, key=lambda k: (op_order[k[0]], k[1], k[2], -k[3], k[4]))
    tmp = out + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for k in keys:
            r, source = chosen[k]
            w.writerow([k[0], k[1], k[2], k[3], k[4], r["algo"], r["blocks"], source, "%.3f" % r["time_us_median"]])
    os.replace(tmp, out)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    os.makedirs(os.path.dirname(os.path.abspath(argv[2])), exist_ok=True)
    write(argv[1], argv[2])
    print("wrote", argv[2])


if __name__ == "__main__":
    main(sys.argv)

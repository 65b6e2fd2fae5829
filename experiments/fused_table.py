#!/usr/bin/python3
"""The fused matmuls' table (ag_mm, mm_rs): predicted next to measured, per op, shape and M.

  fused_table.py MACHINE            -> experiments/tables/fused_MACHINE.md
  fused_table.py --paper M1 M2 ...  -> paper/generated/table_fused.tex: until a machine has measured
                                       fused rows, one compact predicted table for all of them (the
                                       measured columns wait for multi-GPU runs); then each machine's
                                       table with its measured columns

Sources (nothing typed by hand):
  experiments/results/sim/MACHINE/fused.csv     the simulator's sweep (experiments/Makefile): every
                                                fused algorithm and the baselines cublaslt (the matmul
                                                alone) and seq_coll_gemm (our SM collective, then the
                                                matmul: the simulator's stand-in for NCCL + cuBLAS)
  experiments/results/MACHINE/[round_*/]fused_*.csv the CUDA bench (scripts/gpu/fused.sh), when committed:
                                                the fused algorithms, cublaslt and nccl_cublaslt
                                                (NCCL's collective, then cuBLASLt), graph and eager
  experiments/results/<gpu>x1/calibrate_<gpu>x1.csv  when committed: the matmul alone measured on one
                                                GPU of the machine's model (h200x1 for h200x*, h100x1 for
                                                h100x*; data.calibration_1gpu; rows bench == "gemm")
  experiments/baselines/seed002_ag_mm_h100x8.csv  the anchor: seed 002's published 8x H100 table (its
                                                fused all-gather + matmul, cuBLAS alone, NCCL + cuBLAS at
                                                70B, M 16384; quoted, experiments/baselines/README.md),
                                                set beside each machine's predictions at that shape
The issue's targets are a status computed from measured rows only (a fused row with no measurement
says "predicted"): ag_mm within 1.05x of the matmul alone at M 16384, mm_rs within 1.10x, and both
faster than NCCL + cuBLAS (nccl_cublaslt) at every shape, each in graph and in eager mode.
"""

import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plots"))
import data  # noqa: E402

TABLES = os.path.join(data.ROOT, "experiments", "tables")
GENERATED = os.path.join(data.ROOT, "paper", "generated")
SHAPES = [("8b", 1792, 4096), ("70b", 3584, 8192)]  # core/fused.h named_shape
MS = [4096, 8192, 16384]
TARGET_M = 16384
WITHIN = {"ag_mm": 1.05, "mm_rs": 1.10}  # of the matmul alone, at TARGET_M
BASELINES = ("cublaslt", "seq_coll_gemm", "nccl_cublaslt", "tile_gemm")
NOT_MEASURED = "not measured"


def fmt(t):
    return "-" if t is None else ("%.0f" % t if t >= 1000 else "%.1f" % t)


def ratio(a, b):
    return None if a is None or not b else a / b


def fmt_x(x):
    return "-" if x is None else "%.2f" % x


def short(algo):
    return algo.split(".", 1)[-1]


def time_of(rows, **match):
    hit = data.by(rows, **match)
    return hit[0]["time_us_median"] if hit else None


class Inputs:
    def __init__(self, machine, sim=None, meas=None, calib=None):
        self.machine = machine
        self.sim = data.with_mnk(data.sim_rows(machine, fused=True)) if sim is None else sim
        self.meas = data.with_mnk(data.measured_rows(machine, fused=True)) if meas is None else meas
        self.calib_path = data.calibration_1gpu(machine)
        self.calib = data.calibration_gemm_rows(self.calib_path) if calib is None else calib
        self.world = self.sim[0]["world"] if self.sim else int(machine.rsplit("x", 1)[-1])

    def group(self, rows, op, n, k, m):
        return data.by(rows, op=op, N=n, K=k, M=m)

    def calib_gemm(self, op, n, k, m, graph):
        """The one-GPU matmul alone of this op's GEMM (ag_mm M x N x K, mm_rs M x N x K/world)."""
        kk = k if op == "ag_mm" else k // self.world
        ts = sorted(r["time_us"] for r in self.calib if (r["m"], r["n"], r["k"], r["graph"]) == (m, n, kk, graph))
        return ts[len(ts) // 2] if ts else None


def status(op, m, meas, graph, eager):
    """The issue's targets for one fused algorithm at one (shape, M), from measured rows only.

    meas: this group's measured rows; graph / eager: this algorithm's measured times."""
    if graph is None and eager is None:
        return "predicted"
    missed, checked = [], []
    for mode, t in (("graph", graph), ("eager", eager)):
        if t is None:
            continue
        g = 1 if mode == "graph" else 0
        nccl, alone = time_of(meas, algo="nccl_cublaslt", graph=g), time_of(meas, algo="cublaslt", graph=g)
        if nccl is not None:
            checked.append(mode)
            if not t < nccl:
                missed.append("%s: %.2fx NCCL+cuBLAS" % (mode, t / nccl))
        if m == TARGET_M and alone is not None:
            checked.append(mode)
            if t > WITHIN[op] * alone:
                missed.append("%s: %.2fx alone > %.2fx" % (mode, t / alone, WITHIN[op]))
    if not checked:
        return "no baseline measured"
    return "missed (%s)" % "; ".join(missed) if missed else "met"


def md_rows(inp, op):
    """One row per algorithm (baselines first) and (shape, M)."""
    body = []
    for shape, n, k in SHAPES:
        for m in MS:
            sim, meas = inp.group(inp.sim, op, n, k, m), inp.group(inp.meas, op, n, k, m)
            if not sim and not meas:
                continue
            p_alone, p_seq = time_of(sim, algo="cublaslt"), time_of(sim, algo="seq_coll_gemm")
            algos = [a for a in BASELINES if data.by(sim + meas, algo=a)]
            algos += sorted({r["algo"] for r in sim + meas} - set(BASELINES))
            for a in algos:
                p = time_of(sim, algo=a)
                mg, me = time_of(meas, algo=a, graph=1), time_of(meas, algo=a, graph=0)
                m_alone = [time_of(meas, algo="cublaslt", graph=g) for g in (1, 0)]
                m_nccl = [time_of(meas, algo="nccl_cublaslt", graph=g) for g in (1, 0)]
                if meas:
                    cells = [fmt(mg) if mg is not None else NOT_MEASURED, fmt(me) if me is not None else NOT_MEASURED,
                             "%s / %s" % (fmt_x(ratio(mg, m_alone[0])), fmt_x(ratio(me, m_alone[1]))),
                             "%s / %s" % (fmt_x(ratio(mg, m_nccl[0])), fmt_x(ratio(me, m_nccl[1])))]
                else:
                    cells = [NOT_MEASURED, NOT_MEASURED, "-", "-"]
                target = "" if a in BASELINES else status(op, m, meas, mg, me)
                body.append([shape, str(m), short(a), fmt(p), fmt_x(ratio(p, p_alone)), fmt_x(ratio(p, p_seq))] +
                            cells + [target])
            if inp.calib:
                cg, ce = inp.calib_gemm(op, n, k, m, 1), inp.calib_gemm(op, n, k, m, 0)
                body.append([shape, str(m), "cublaslt, 1 GPU (calibration)", "-", "-", "-",
                             fmt(cg) if cg is not None else NOT_MEASURED, fmt(ce) if ce is not None else NOT_MEASURED,
                             "-", "-", ""])
    return body


def tex_rows(inp, op):
    """Compact (the paper): one row per (shape, M), the fastest fused algorithm."""
    body = []
    for shape, n, k in SHAPES:
        for m in MS:
            sim, meas = inp.group(inp.sim, op, n, k, m), inp.group(inp.meas, op, n, k, m)
            fused = [r for r in sim if r["algo"] not in BASELINES]
            if not fused:
                continue
            best = min(fused, key=lambda r: r["time_us_median"])
            p_alone, p_seq = time_of(sim, algo="cublaslt"), time_of(sim, algo="seq_coll_gemm")
            t = best["time_us_median"]
            mf = [r for r in meas if r["algo"] not in BASELINES and r["graph"] == 1]
            mbest = min(mf, key=lambda r: r["time_us_median"]) if mf else None
            mg = mbest["time_us_median"] if mbest else None
            me = time_of(meas, algo=mbest["algo"], graph=0) if mbest else None
            body.append([op, shape.upper(), str(m), short(best["algo"]), fmt(t), fmt(p_alone),
                         fmt(p_seq), fmt_x(ratio(t, p_alone)), fmt_x(ratio(t, p_seq)),
                         fmt(mg) if mbest else "n/m",
                         fmt(time_of(meas, algo="cublaslt", graph=1)) if meas else "n/m",
                         fmt(time_of(meas, algo="nccl_cublaslt", graph=1)) if meas else "n/m",
                         status(op, m, meas, mg, me).split(" (")[0] if mbest else "predicted"])
    return body


# ---- the anchor: a published fused kernel, beside our predictions at its shape -----------------
ANCHOR = os.path.join(data.ROOT, "experiments", "baselines", "seed002_ag_mm_h100x8.csv")
ANCHOR_TILE_ALGO = "ag_mm.ce_tile_gemm"  # ours that re-creates it: tiles acquiring the copy engines' chunks


def anchor_rows():
    """The published table's rows (algo fused_tile_gemm, cublas, cublas_nccl), or [] without the file."""
    if not os.path.exists(ANCHOR):
        return []
    with open(ANCHOR, newline="") as f:
        return [dict(r, M=int(r["M"]), N=int(r["N"]), K=int(r["K"]), time_us=float(r["time_us"]))
                for r in csv.DictReader(f)]


def anchor_cells(inp):
    """This machine's rows at the anchor's shape: [(label, algo, time, x alone, x seq or x NCCL)] for
    the predicted fastest fused ag_mm, the predicted tile program, and (measured, graph) the fastest
    fused algorithm where the machine has rows. Empty without the anchor or a prediction."""
    pub = anchor_rows()
    if not pub:
        return []
    n, k, m = pub[0]["N"], pub[0]["K"], pub[0]["M"]
    sim, meas = inp.group(inp.sim, "ag_mm", n, k, m), inp.group(inp.meas, "ag_mm", n, k, m)
    fused = [r for r in sim if r["algo"] not in BASELINES]
    if not fused:
        return []
    alone, seq = time_of(sim, algo="cublaslt"), time_of(sim, algo="seq_coll_gemm")
    best = min(fused, key=lambda r: r["time_us_median"])
    out = [("predicted, fastest", best["algo"], best["time_us_median"], ratio(best["time_us_median"], alone),
            ratio(best["time_us_median"], seq))]
    tile = time_of(sim, algo=ANCHOR_TILE_ALGO)
    if tile is not None and best["algo"] != ANCHOR_TILE_ALGO:
        out.append(("predicted, tile program", ANCHOR_TILE_ALGO, tile, ratio(tile, alone), ratio(tile, seq)))
    mf = [r for r in meas if r["algo"] not in BASELINES and r["graph"] == 1]
    if mf:
        mb = min(mf, key=lambda r: r["time_us_median"])
        t = mb["time_us_median"]
        out.append(("measured (graph), fastest", mb["algo"], t, ratio(t, time_of(meas, algo="cublaslt", graph=1)),
                    ratio(t, time_of(meas, algo="nccl_cublaslt", graph=1))))
    return out


def anchor_markdown(inp):
    pub = anchor_rows()
    cells = anchor_cells(inp)
    if not pub or not cells:
        return []
    t = {r["algo"]: r["time_us"] for r in pub}
    shape = "70B" if (pub[0]["N"], pub[0]["K"]) == (3584, 8192) else "N %d, K %d" % (pub[0]["N"], pub[0]["K"])
    rows = [["published, 8x H100", "fused kernel (seed 002)", fmt(t["fused_tile_gemm"]),
             fmt_x(ratio(t["fused_tile_gemm"], t["cublas"])), fmt_x(ratio(t["fused_tile_gemm"], t["cublas_nccl"]))],
            ["published, 8x H100", "cuBLAS alone", fmt(t["cublas"]), "1.00", fmt_x(ratio(t["cublas"], t["cublas_nccl"]))],
            ["published, 8x H100", "NCCL + cuBLAS", fmt(t["cublas_nccl"]), fmt_x(ratio(t["cublas_nccl"], t["cublas"])),
             "1.00"]]
    rows += [["%s, %s" % (label, inp.machine), short(a), fmt(tt), fmt_x(xa), fmt_x(xs)] for label, a, tt, xa, xs in cells]
    import tables  # experiments/tables.py: the tile GEMM's one-GPU runs
    gpu = inp.machine.split("x", 1)[0]
    pattern = tables.TILE_GEMM_CSVS["symmTileGemmAutoHOne" if gpu == "h100" else "symmTileGemmAuto"]
    ratios, grows, gpath = tables.tile_gemm_ratios(pattern)
    gemm = ("Our tile GEMM alone on one %s (the kernel the tile programs run), measured beside cuBLASLt in one run "
            "(`%s`, git %s): %.3f-%.3f of cuBLASLt's throughput over %d fused shapes and launch modes (bf16).\n"
            % (gpu.upper(), os.path.relpath(gpath, data.ROOT), ", ".join(sorted({r["git_sha"][:7] for r in grows})),
               min(ratios), max(ratios), len(ratios))) if ratios else ""
    return ["\n## The anchor: a published fused all-gather + matmul (ag_mm, %s, M %d)\n" % (shape, pub[0]["M"]),
            "Seed 002's published 8x H100 table (`%s`, quoted: experiments/baselines/README.md), the fused kernel our "
            "`%s` re-creates, beside this machine's rows at the same shape. x alone: over the matmul alone of the "
            "same source (published: cuBLAS; predicted: `cublaslt`; measured: the same run's `cublaslt`); last column: "
            "over NCCL + cuBLAS (published, measured) or over `seq_coll_gemm` (predicted, the simulator's stand-in for "
            "it).\n" % (os.path.relpath(ANCHOR, data.ROOT), short(ANCHOR_TILE_ALGO)),
            md_table(["source", "algo", "us", "x alone", "x NCCL+cuBLAS / x seq"], rows), gemm]


def anchor_tex(inps):
    """The paper's anchor table: the published rows, then each machine's predicted fastest fused ag_mm
    and tile program at the anchor's shape."""
    import tables  # experiments/tables.py: the paper's table style
    pub = anchor_rows()
    if not pub:
        return ""
    t = {r["algo"]: r["time_us"] for r in pub}
    body = [["8x H100 (published)", "fused kernel (seed 002)", fmt(t["fused_tile_gemm"]),
             fmt_x(ratio(t["fused_tile_gemm"], t["cublas"])), fmt_x(ratio(t["fused_tile_gemm"], t["cublas_nccl"]))]]
    for inp in inps:
        for label, a, tt, xa, xs in anchor_cells(inp):
            if label.startswith("predicted"):
                body.append(["%s (predicted)" % inp.machine, short(a), fmt(tt), fmt_x(xa), fmt_x(xs)])
    return tables.tex_table(
        "The anchor (70B, M %d, bf16, µs): seed 002's published fused all-gather + matmul on 8x H100, over cuBLAS "
        "alone and over NCCL + cuBLAS in its table, beside the simulator's fastest fused ag_mm and our tile "
        "program that re-creates it (%s) on each machine, over the predicted matmul alone and over our SM "
        "all-gather then the matmul (standing for NCCL + cuBLAS). experiments/baselines/seed002_ag_mm_h100x8.csv."
        % (pub[0]["M"], short(ANCHOR_TILE_ALGO)),
        "tab:fused-anchor", ["machine", "algorithm", "µs", "x alone", "x NCCL+cuBLAS / x seq"], body)


def measured_sources(inp):
    """The measured rows' CSVs (each cell from the newest run that measured it, plots/data.py
    newest_runs), or where they would be committed."""
    srcs = sorted({os.path.relpath(r["source"], data.ROOT) for r in inp.meas if "source" in r})
    if not srcs:
        return "`experiments/results/%s/fused_%s.csv`" % (inp.machine, inp.machine)
    return ", ".join("`%s`" % s for s in srcs)


def markdown(inp):
    have_meas = bool(inp.meas)
    md = ["# Fused matmuls on `%s`: predicted next to measured (bf16, µs)\n" % inp.machine,
          "Generated by `experiments/fused_table.py %s`. *Predicted*: the simulator's sweep "
          "`experiments/results/sim/%s/fused.csv` (world %d, CUDA-graph launch); *measured*: the CUDA bench, "
          "%s (median per call, max over ranks; graph and eager%s). "
          "Baselines: `cublaslt` is the matmul alone (ag_mm M x N x K, mm_rs M x N x K/world), measured in the same "
          "run on the GPU; `seq_coll_gemm` is the simulator's stand-in for NCCL + cuBLAS (our SM all-gather / "
          "reduce-scatter, then the matmul), predicted only; `nccl_cublaslt` is NCCL's collective, then cuBLASLt, "
          "measured only. x alone / x seq: predicted time over the predicted `cublaslt` / `seq_coll_gemm`; "
          "measured x alone / x NCCL: graph / eager, over the same run's `cublaslt` / `nccl_cublaslt`. "
          "Target (measured rows only): ag_mm <= 1.05x the matmul alone at M = 16384, mm_rs <= 1.10x, and both "
          "faster than NCCL + cuBLAS at every shape.%s\n"
          % (inp.machine, inp.machine, inp.world, measured_sources(inp),
             "" if have_meas else "; not committed yet, so every measured cell says \"not measured\"",
             "" if not inp.calib else " `cublaslt, 1 GPU (calibration)`: the matmul alone from the one-GPU "
             "calibration run of the same GPU model, `%s` (rows bench = gemm or gemm_fused)."
             % os.path.relpath(inp.calib_path, data.ROOT))]
    header = ["shape", "M", "algo", "predicted", "x alone", "x seq", "measured graph", "measured eager",
              "x alone (g / e)", "x NCCL (g / e)", "target"]
    for op in data.FUSED_OPS:
        body = md_rows(inp, op)
        if body:
            md += ["\n## %s\n" % op, md_table(header, body)]
    if len(md) == 2:
        md.append("\nNo fused simulator results for %s yet: run `make experiments`.\n" % inp.machine)
    md += floor_markdown(inp)
    md += anchor_markdown(inp)
    return "\n".join(md)


def floor_rows(inp):
    """Per op and shape at TARGET_M: the bytes each GPU's links carry, the time they take at the
    machine's calibrated rate, and the floor that puts under a fused op: max(matmul, link) over the
    matmul alone (a collective that costs no SM time and hides wholly behind the matmul)."""
    if data.machine_param(inp.machine, "team") or inp.world < 2:
        return []
    out = []
    for op in data.FUSED_OPS:
        for name, n, k in SHAPES:
            meas = inp.group(inp.meas, op, n, k, TARGET_M)
            sim = inp.group(inp.sim, op, n, k, TARGET_M)
            alone, src = time_of(meas, algo="cublaslt", graph=1), "measured"
            if alone is None:
                alone, src = time_of(sim, algo="cublaslt"), "predicted"
            if alone is None:
                continue
            # ag_mm: every GPU receives the other shards of A (M x K); mm_rs: sends the other owners'
            # rows of its partial C (M x N), bf16.
            moved = (inp.world - 1) / inp.world * TARGET_M * (k if op == "ag_mm" else n) * 2
            # The machine file's calibrated rates (copy_incast / copy_scatter), all links together.
            rate = data.machine_param(inp.machine, "nvlink_ingress_GBps" if op == "ag_mm" else "nvlink_egress_GBps")
            link = moved / (rate * 1e3)
            floor = max(alone, link) / alone
            fused = [r["time_us_median"] for r in meas if r["graph"] == 1 and r["algo"] not in BASELINES]
            best = min(fused) / alone if fused and src == "measured" else None
            verdict = ("within reach: the link time hides behind the matmul" if floor <= 1.0 else
                       "within reach: the link alone takes %.2fx the matmul" % floor if floor <= WITHIN[op] else
                       "out of reach: the link alone takes %.2fx the matmul" % floor)
            out.append([op, name, str(TARGET_M), "%.1f" % (moved / 1e6), "%.0f" % rate, fmt(link),
                        "%s (%s)" % (fmt(alone), src), "%.2fx" % floor, "%.2fx" % WITHIN[op],
                        fmt_x(best) + ("x" if best is not None else ""), verdict])
    return out


def floor_markdown(inp):
    rows = floor_rows(inp)
    if not rows:
        return []
    return ["\n## The link floor at M = %d\n" % TARGET_M,
            "What NVLink alone puts under a fused op on `%s` (world %d): each GPU's link bytes (ag_mm: the other "
            "shards of A it receives; mm_rs: the other owners' rows of its partial C it sends; bf16) at the machine "
            "file's calibrated rate (`nvlink_ingress_GBps` / `nvlink_egress_GBps`, calibrate's copy_incast / "
            "copy_scatter), over the matmul alone (measured, graph, where a run measured it). The floor assumes a "
            "collective that costs the matmul no SM time, no HBM bandwidth and hides wholly behind it; a target "
            "below the floor cannot be met by any schedule. Best measured: the fastest fused algorithm of the run, "
            "graph, over the same run's matmul alone.\n" % (inp.machine, inp.world),
            md_table(["op", "shape", "M", "link MB per GPU", "link GB/s", "link us", "matmul alone us", "floor",
                      "target", "best measured", ""], rows)]


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def tex(inp):
    import tables  # experiments/tables.py: the paper's table style
    body = [r for op in data.FUSED_OPS for r in tex_rows(inp, op)]
    if not body:
        return "%% No fused simulator results for %s.\n" % inp.machine
    header = ["op", "shape", "M", "fastest fused", "pred.", "alone", "seq", "x alone", "x seq", "measured",
              "alone meas.", "NCCL+cuBLAS", "target"]
    return tables.tex_table(
        "Fused matmuls on %s (bf16, µs): the fastest predicted fused algorithm, its time over the predicted "
        "matmul alone (alone) and over our SM collective then the matmul (seq, standing for NCCL + cuBLAS); "
        "measured: the fastest measured fused algorithm (named in experiments/tables/fused_%s.md), the matmul "
        "alone and NCCL + cuBLAS in one CUDA-graph run (n/m: not measured). Target: from measured rows only, "
        "graph and eager." % (inp.machine, inp.machine),
        "tab:fused-%s" % inp.machine, header, body)


def predicted_tex(inps):
    """One compact table of predictions for every machine (no fused row measured yet): per op,
    shape and M, each machine's fastest fused algorithm, its time and its ratios."""
    import tables  # experiments/tables.py: the paper's table style
    header = ["op", "shape", "M"]
    for inp in inps:
        header += ["%s fastest" % inp.machine, "µs", "x alone", "x seq"]
    body = []
    for op in data.FUSED_OPS:
        for shape, n, k in SHAPES:
            for m in MS:
                row, any_sim = [op, shape.upper(), str(m)], False
                for inp in inps:
                    sim = inp.group(inp.sim, op, n, k, m)
                    fused = [r for r in sim if r["algo"] not in BASELINES]
                    if not fused:
                        row += ["-"] * 4
                        continue
                    any_sim = True
                    best = min(fused, key=lambda r: r["time_us_median"])
                    t = best["time_us_median"]
                    row += [short(best["algo"]), fmt(t), fmt_x(ratio(t, time_of(sim, algo="cublaslt"))),
                            fmt_x(ratio(t, time_of(sim, algo="seq_coll_gemm")))]
                if any_sim:
                    body.append(row)
    if not body:
        return "% No fused simulator results.\n"
    machines = " and ".join(inp.machine for inp in inps)
    return tables.tex_table(
        "Fused matmuls predicted by the simulator on %s (bf16, CUDA graph, µs): per op, shape and M, the fastest "
        "fused algorithm, its time, and that time over the predicted matmul alone (x alone, the lower bound) and "
        "over our SM collective then the matmul (x seq, standing for NCCL + cuBLAS). The measured columns (and "
        "the targets, judged on measured rows only) wait for multi-GPU runs of the CUDA bench; "
        "experiments/tables/fused_<machine>.md has every algorithm." % machines,
        "tab:fused", header, body)


def paper_tex(inps):
    """paper/generated/table_fused.tex: the compact predicted table until some machine has measured
    fused rows; then every machine's table with its measured columns (the first also labelled
    tab:fused, which the prose refers to)."""
    if not any(inp.meas for inp in inps):
        return predicted_tex(inps) + anchor_tex(inps)
    parts = [tex(inp) for inp in inps]
    parts[0] = parts[0].replace(r"\label{tab:fused-%s}" % inps[0].machine,
                                r"\label{tab:fused-%s}\label{tab:fused}" % inps[0].machine)
    return "".join(parts) + anchor_tex(inps)


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tables import write
    if len(argv) >= 3 and argv[1] == "--paper":
        write(os.path.join(GENERATED, "table_fused.tex"), paper_tex([Inputs(m) for m in argv[2:]]))
        return
    if len(argv) != 2:
        sys.exit(__doc__)
    inp = Inputs(argv[1])
    write(os.path.join(TABLES, "fused_%s.md" % inp.machine), markdown(inp))


if __name__ == "__main__":
    main(sys.argv)

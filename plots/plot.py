#!/usr/bin/python3
"""The paper's figures, one function per figure.

  plot.py NAME OUT.png     NAME is <figure>_<machine>, e.g. predicted_h200x4 -> fig_predicted("h200x4")

experiments/Makefile maps paper/figures/NAME.png to this call with a pattern rule, so a
figure is rebuilt exactly when its inputs change. Runs with Debian's /usr/bin/python3 and
matplotlib's Agg backend (no display needed).

Figures are drawn at the size they are printed (the paper's text width, FIG_W inches), so a
font size here is the size on the page. Bus bandwidth is on a linear axis, as nccl-tests users
read it; latency on a log axis. An algorithm never measured on a GPU (no row in any
experiments/results/<machine>/ CSV: the multimem all-reduce) is dotted and labelled
"simulated only" wherever it appears.
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
import matplotlib.patches  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402

sys.path.insert(0, os.path.join(data.ROOT, "experiments"))
import targets  # noqa: E402  (experiments/targets.py: ours vs NCCL's best and the tie rule, as in the tables)
import auto_table  # noqa: E402  (experiments/auto_table.py: the --algo auto choice)

# Fixed colours per algorithm so the same algorithm looks the same in every figure.
COLORS = {
    "all_reduce.ld_reduce": "C0", "all_reduce.st_reduce": "C1", "all_reduce.rs_ld_ag_st": "C2",
    "all_reduce.rs_ld_ag_ld": "C3", "all_reduce.mc_ld_reduce_mc_st": "C4",
    "reduce_scatter.ld_reduce": "C0", "all_gather.st": "C0", "all_gather.ld": "C2",
    "all_reduce.st_ll_reduce": "C5", "reduce_scatter.st_ll_reduce": "C5", "all_gather.st_ll": "C5",
    "nccl": "k", "nccl_symm": "0.45",
}
OP_COLORS = {"all_reduce": "C0", "reduce_scatter": "C1", "all_gather": "C2"}
OP_ABBR = {"all_reduce": "AR", "reduce_scatter": "RS", "all_gather": "AG"}
OP_SHORT = {"all_reduce": "all-reduce", "reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}
NCCL_LABEL = {"nccl": "NCCL", "nccl_symm": "NCCL symm"}
FIG_W = 7.0  # inches: the paper's \textwidth (letter paper, 0.8 in margins)
LEGEND = dict(fontsize=7, frameon=False, handlelength=2.2, borderaxespad=0.3, labelspacing=0.25)
plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
                     "ytick.labelsize": 7, "lines.markersize": 3})
# PNG metadata carries the matplotlib version only; no dates, so re-running is idempotent.
SAVE = dict(dpi=200, metadata={"Software": None})


def _size_axis(ax, sizes, every=4, label=True):
    """x: message size on a log2 axis, a tick every `every` powers of two."""
    ax.set_xscale("log", base=2)
    first = sizes[0].bit_length()
    ticks = [s for s in sizes if (s.bit_length() - first) % every == 0]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: data.fmt_size(int(v))))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    if label:
        ax.set_xlabel("bytes (nccl-tests size)")
    ax.grid(True, which="both", alpha=0.3, lw=0.5)


def _style(algo, measured):
    """Line style and label suffix: dotted with open markers for a simulated-only algorithm."""
    if algo in measured:
        return dict(ls="-", marker=".", lw=1.2, color=COLORS.get(algo)), ""
    return dict(ls=":", marker="x", lw=1.6, color=COLORS.get(algo)), "\n(simulated only)"


def fig_predicted(machine, out):
    """The simulator's latency (top, log) and bus bandwidth (bottom, linear) per op; nccl-tests
    numbers of NCCL on this machine (experiments/baselines/) as open markers where they exist."""
    sim = data.by(data.sim_rows(machine), graph=1)
    baseline = data.by(data.baseline_rows(), machine=machine, graph=1)
    measured = data.measured_algos()
    ops = [op for op in data.OPS if data.by(sim, op=op)]
    if not ops:
        sys.exit("plot.py: no simulator results for %s (run make experiments)" % machine)
    fig, axes = plt.subplots(2, len(ops), figsize=(FIG_W, 5.3), squeeze=False, sharex="col")
    nccl_marks = {}
    for col, op in enumerate(ops):
        rows = data.by(sim, op=op)
        sizes = sorted({r["bytes"] for r in rows})
        for row, (key, nccl_key, ylabel) in enumerate((("time_us_median", "time_us", "latency (µs)"),
                                                       ("busbw_GBps", "busbw_GBps", "busbw (GB/s)"))):
            ax = axes[row][col]
            for algo, pts in sorted(data.series(rows, key).items(), key=lambda kv: data.ordered(list(data.series(rows))).index(kv[0])):
                style, suffix = _style(algo, measured)
                ax.plot([b for b, _ in pts], [v for _, v in pts], label=data.alias(algo) + suffix, **style)
            for variant, marker in (("nccl", "s"), ("nccl_symm", "^")):
                pts = sorted((r["bytes"], r[nccl_key]) for r in data.by(baseline, op=op, variant=variant))
                if pts:
                    ax.plot([b for b, _ in pts], [v for _, v in pts], ls="none", marker=marker, ms=5, mfc="none",
                            color=COLORS[variant])
                    nccl_marks[variant] = marker
            _size_axis(ax, sizes, label=(row == 1))
            if row == 0:
                ax.set_yscale("log")
                ax.set_title("%s, %s (world %d)" % (OP_SHORT[op], machine, rows[0]["world"]))
            else:
                ax.set_ylim(bottom=0)
                # Below the column, outside the curves: the column's algorithms, none hidden.
                ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2,
                          **dict(LEGEND, handlelength=1.5, columnspacing=0.6, handletextpad=0.4))
            if col == 0:
                ax.set_ylabel(ylabel)
    if nccl_marks:  # NCCL's nccl-tests points once for the figure, at the bottom
        fig.legend(handles=[Line2D([], [], ls="none", marker=m, ms=5, mfc="none", color=COLORS[v],
                                   label="%s (nccl-tests, 4x H200)" % NCCL_LABEL[v]) for v, m in nccl_marks.items()],
                   loc="lower center", ncol=len(nccl_marks), **LEGEND)
    fig.tight_layout(pad=0.3, h_pad=0.6, w_pad=0.6, rect=(0, 0.03 if nccl_marks else 0, 1, 1))
    fig.savefig(out, **SAVE)


def _held_out(machine):
    """experiments/tables/fidelity_<machine>.csv (experiments/fidelity.py): every measured row with
    the simulator's held-out prediction (leave one algorithm out); {} when absent."""
    path = os.path.join(data.ROOT, "experiments", "tables", "fidelity_%s.csv" % machine)
    if not os.path.exists(path):
        return {}
    import csv
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["source"].startswith("tune") or r["op"] in data.FUSED_OPS:
                continue
            key = (r["op"], r["algo"], int(r["graph"]), r["dtype"], int(r["bytes"]), r["source"])
            out[key] = tuple(float(r[k]) for k in ("meas_us", "p10_us", "p90_us", "pred_loao_us"))
    return out


def fig_measured(machine, out):
    """Measured (solid) vs predicted (dashed) latency, one small panel per algorithm, so each
    panel carries two curves: all-reduce on the first row, reduce-scatter and all-gather after.
    Under each, predicted / measured per size: the simulator's held-out prediction (leave one
    algorithm out, experiments/fidelity.py) over the measured median, with the measurement's own
    p10-p90 band around 1 and the +-20% lines, so the error shows where it is."""
    meas = data.by(data.measured_rows(machine), graph=1)
    if not meas:
        sys.exit("plot.py: no measured GPU results under experiments/results/%s/" % machine)
    sim = data.by(data.sim_rows(machine), graph=1)
    held = _held_out(machine)
    panels = [(op, a) for op in data.OPS
              for a in data.ordered({r["algo"] for r in data.by(meas, op=op) if not targets.is_nccl(r["algo"])})]
    ncols = max(5, len([p for p in panels if p[0] == "all_reduce"]))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(2 * nrows, ncols, figsize=(FIG_W, 2.55 * nrows + 0.45), squeeze=False,
                             sharex=True, gridspec_kw={"height_ratios": [2, 1] * nrows})
    sizes = sorted({r["bytes"] for r in meas})
    for i in range(nrows * ncols):
        ax, rx = axes[2 * (i // ncols)][i % ncols], axes[2 * (i // ncols) + 1][i % ncols]
        if i >= len(panels):
            ax.axis("off")
            rx.axis("off")
            continue
        op, algo = panels[i]
        m = data.series(data.by(meas, op=op, algo=algo))[algo]
        ax.plot([b for b, _ in m], [t for _, t in m], marker="o", ms=2.5, lw=1.2, color=COLORS.get(algo))
        pred = data.series(data.by(sim, op=op, algo=algo)).get(algo)
        if pred:
            ax.plot([b for b, _ in pred], [t for _, t in pred], ls="--", lw=1.1, color=COLORS.get(algo))
        ax.set_yscale("log")
        _size_axis(ax, sizes, every=8, label=False)
        ax.set_title("%s %s" % (OP_ABBR[op], data.alias(algo)))
        if i % ncols == 0:
            ax.set_ylabel("latency (µs)")
        # predicted / measured, held out, with the measurement's p10-p90 band
        pts = sorted((r["bytes"],) + held[k] for r in data.by(meas, op=op, algo=algo)
                     for k in [(op, algo, 1, r["dtype"], r["bytes"], os.path.basename(r["source"])[:-len(".csv")])]
                     if k in held)
        if pts:
            xs = [p[0] for p in pts]
            rx.fill_between(xs, [p[2] / p[1] for p in pts], [p[3] / p[1] for p in pts], color="0.75", lw=0,
                            step=None)
            rx.plot(xs, [p[4] / p[1] for p in pts], marker=".", ms=2.5, lw=1.0, color=COLORS.get(algo))
        rx.axhline(1, color="0.3", lw=0.6)
        for y in (0.8, 1.2):
            rx.axhline(y, color="0.5", lw=0.5, ls=":")
        rx.set_ylim(0.5, 1.5)
        _size_axis(rx, sizes, every=8, label=False)
        if i % ncols == 0:
            rx.set_ylabel("pred / meas")
        else:
            rx.tick_params(labelleft=False)
    fig.supxlabel("bytes (nccl-tests size)", fontsize=8)
    handles = [Line2D([], [], color="0.3", marker="o", ms=2.5, lw=1.2, label="measured on %s" % machine),
               Line2D([], [], color="0.3", ls="--", lw=1.1, label="simulator, machine file %s" % machine),
               Line2D([], [], color="0.3", marker=".", lw=1.0,
                      label="pred / meas, held out (leave one algorithm out)"),
               matplotlib.patches.Patch(color="0.75", label="measured p10-p90 / median")]
    fig.legend(handles=handles, loc="upper center", ncol=2, **LEGEND)
    fig.tight_layout(pad=0.3, h_pad=0.3, w_pad=0.3, rect=(0, 0, 1, 0.955))
    fig.savefig(out, **SAVE)


def fig_speedup(machine, out):
    """Measured: NCCL's best / our best time per op with its noise band (left; open markers: ties
    by the tie rule of experiments/targets.py), and both bus bandwidths on a linear axis (right)."""
    table = targets.compare(data.measured_rows(machine))
    if not table:
        sys.exit("plot.py: no measured GPU results under experiments/results/%s/" % machine)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(FIG_W, 2.7))
    for op in targets.OPS:
        rows = [t for t in table if t["op"] == op]
        if not rows:
            continue
        sizes = [t["bytes"] for t in rows]
        color = OP_COLORS[op]
        # The ratio's noise: NCCL's p10..p90 over ours p90..p10.
        lo = [t["nccl"]["time_us_p10"] / t["ours"]["time_us_p90"] for t in rows]
        hi = [t["nccl"]["time_us_p90"] / t["ours"]["time_us_p10"] for t in rows]
        ax.fill_between(sizes, lo, hi, color=color, alpha=0.25, lw=0)
        ax.plot(sizes, [t["speedup"] for t in rows], lw=1.2, color=color, label=OP_SHORT[op])
        for tie in (False, True):
            pts = [t for t in rows if (t["verdict"] == "tie") == tie]
            ax.plot([t["bytes"] for t in pts], [t["speedup"] for t in pts], ls="none", marker="o",
                    ms=4 if tie else 3, color=color, mfc="white" if tie else color)
        bx.plot(sizes, [t["ours"]["busbw_GBps"] for t in rows], marker=".", lw=1.2, color=color,
                label="%s, ours" % OP_SHORT[op])
        bx.plot(sizes, [t["nccl"]["busbw_GBps"] for t in rows], ls="--", lw=1, color=color,
                label="%s, NCCL best" % OP_SHORT[op])
    ax.axhline(1.0, color="k", lw=0.8)
    sizes = sorted({t["bytes"] for t in table})
    _size_axis(ax, sizes)
    ax.set_ylabel("NCCL best / ours (time)")
    ax.set_title("%s (world %d): speed-up over NCCL, same run" % (machine, table[0]["ours"]["world"]))
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="none", marker="o", ms=4, color="0.3", mfc="white"))
    labels.append("tie (p10-p90 overlap)")
    ax.legend(handles, labels, loc="upper right", **LEGEND)
    _size_axis(bx, sizes)
    bx.set_ylim(bottom=0)
    bx.set_ylabel("busbw (GB/s)")
    bx.set_title("%s: bus bandwidth, ours vs NCCL best" % machine)
    bx.legend(loc="upper left", **LEGEND)
    fig.tight_layout(pad=0.3, w_pad=1.0)
    fig.savefig(out, **SAVE)


def fig_auto(machine, out):
    """`--algo auto` vs NCCL's best, measured: per launch mode (columns), the speed-up NCCL best /
    auto time per op (top; open markers: ties by the tie rule of experiments/targets.py) and both
    bus bandwidths on a linear axis (bottom). auto's row is the one experiments/auto_table.py
    chooses for the machine's table, NCCL's the fastest of its rows, from the same CSV rows
    (bench and block-count sweeps of experiments/results/<machine>/)."""
    rows = auto_table.measured_rows(machine)
    chosen = auto_table.choose(rows, [], auto_table.multicast_algos())
    nccl = {}
    for r in rows:
        if targets.is_nccl(r["algo"]):
            k = (r["op"], r["graph"], r["bytes"])
            if k not in nccl or r["time_us_median"] < nccl[k]["time_us_median"]:
                nccl[k] = r
    modes = [g for g in (1, 0) if any(k[3] == g for k in chosen)]
    if not modes:
        sys.exit("plot.py: no measured GPU results under experiments/results/%s/" % machine)
    fig, axes = plt.subplots(2, len(modes), figsize=(FIG_W, 4.6), squeeze=False, sharex=True)
    world = None
    for col, graph in enumerate(modes):
        ax, bx = axes[0][col], axes[1][col]
        all_sizes = set()
        for op in data.OPS:
            pts = sorted((k[4], r) for k, (r, _) in chosen.items() if k[0] == op and k[3] == graph
                         and (op, graph, k[4]) in nccl)
            if not pts:
                continue
            world = pts[0][1]["world"]
            sizes = [b for b, _ in pts]
            all_sizes.update(sizes)
            ours = [r for _, r in pts]
            best = [nccl[(op, graph, b)] for b in sizes]
            color = OP_COLORS[op]
            speedup = [n["time_us_median"] / o["time_us_median"] for o, n in zip(ours, best)]
            ax.fill_between(sizes, [n["time_us_p10"] / o["time_us_p90"] for o, n in zip(ours, best)],
                            [n["time_us_p90"] / o["time_us_p10"] for o, n in zip(ours, best)],
                            color=color, alpha=0.25, lw=0)
            ax.plot(sizes, speedup, lw=1.2, color=color, label=OP_SHORT[op])
            for tie in (False, True):
                sel = [i for i in range(len(sizes)) if targets.tie(ours[i], best[i]) == tie]
                ax.plot([sizes[i] for i in sel], [speedup[i] for i in sel], ls="none", marker="o",
                        ms=4 if tie else 3, color=color, mfc="white" if tie else color)
            bx.plot(sizes, [o["busbw_GBps"] for o in ours], marker=".", lw=1.2, color=color,
                    label="%s, auto" % OP_SHORT[op])
            bx.plot(sizes, [n["busbw_GBps"] for n in best], ls="--", lw=1, color=color,
                    label="%s, NCCL best" % OP_SHORT[op])
        sizes = sorted(all_sizes)
        ax.axhline(1.0, color="k", lw=0.8)
        _size_axis(ax, sizes, label=False)
        _size_axis(bx, sizes)
        mode = "CUDA graph" if graph else "eager"
        ax.set_title("%s (world %s), %s: auto vs NCCL best" % (machine, world, mode))
        bx.set_ylim(bottom=0)
        bx.set_title("%s, %s: bus bandwidth" % (machine, mode))
        if col == 0:
            ax.set_ylabel("NCCL best / auto (time)")
            bx.set_ylabel("busbw (GB/s)")
            handles, labels = ax.get_legend_handles_labels()
            handles.append(Line2D([], [], ls="none", marker="o", ms=4, color="0.3", mfc="white"))
            labels.append("tie (p10-p90 overlap)")
            ax.legend(handles, labels, loc="upper right", **LEGEND)
            bx.legend(loc="upper left", **LEGEND)
    fig.tight_layout(pad=0.3, h_pad=0.6, w_pad=1.0)
    fig.savefig(out, **SAVE)


def main(argv):
    if len(argv) != 3 or "_" not in argv[1]:
        sys.exit(__doc__)
    name, machine = argv[1].rsplit("_", 1)
    fn = globals().get("fig_" + name)
    if fn is None:
        sys.exit("plot.py: no figure function fig_%s (have: %s)" % (
            name, ", ".join(k[4:] for k in globals() if k.startswith("fig_"))))
    os.makedirs(os.path.dirname(os.path.abspath(argv[2])), exist_ok=True)
    fn(machine, argv[2])
    print("wrote", argv[2])


if __name__ == "__main__":
    main(sys.argv)

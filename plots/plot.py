#!/usr/bin/python3
"""The paper's figures, one function per figure.

  plot.py NAME OUT.png     NAME is <figure>_<machine>, e.g. latency_h200x4 -> fig_latency("h200x4")

experiments/Makefile maps paper/figures/NAME.png to this call with a pattern rule, so a
figure is rebuilt exactly when its inputs change. Runs with Debian's /usr/bin/python3 and
matplotlib's Agg backend (no display needed).
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402

sys.path.insert(0, os.path.join(data.ROOT, "experiments"))
import targets  # noqa: E402  (experiments/targets.py: ours vs NCCL's best, as in the tables)

# Fixed colours per algorithm so the same algorithm looks the same in every figure.
COLORS = {
    "all_reduce.ld_reduce": "C0", "all_reduce.st_reduce": "C1", "all_reduce.rs_ld_ag_st": "C2",
    "all_reduce.rs_ld_ag_ld": "C3", "all_reduce.mc_ld_reduce_mc_st": "C4",
    "reduce_scatter.ld_reduce": "C0", "all_gather.st": "C0", "all_gather.ld": "C2",
    "all_reduce.st_ll_reduce": "C5", "reduce_scatter.st_ll_reduce": "C5", "all_gather.st_ll": "C5",
    "nccl": "k", "nccl_symm": "0.45",
}
OP_COLORS = {"all_reduce": "C0", "reduce_scatter": "C1", "all_gather": "C2"}
# PNG metadata carries the matplotlib version only; no dates, so re-running is idempotent.
SAVE = dict(dpi=130, metadata={"Software": None})


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = [s for s in sizes if (s.bit_length() - 1) % 4 == 0] or sizes
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: data.fmt_size(int(v))))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlabel("bytes (nccl-tests size)")
    ax.grid(True, which="both", alpha=0.3)


def _sim_with_nccl_tests(machine, out, sim_key, nccl_key, ylabel, title):
    """One panel per op: the simulator's curves, nccl-tests numbers (docs/hardware.md) as points."""
    sim = data.by(data.sim_rows(machine), graph=1)
    baseline = data.by(data.baseline_rows(), machine=machine, graph=1)
    ops = [op for op in data.OPS if data.by(sim, op=op)]
    if not ops:
        sys.exit("plot.py: no simulator results for %s (run make experiments)" % machine)
    fig, axes = plt.subplots(1, len(ops), figsize=(4.2 * len(ops), 3.6), squeeze=False)
    for ax, op in zip(axes[0], ops):
        rows = data.by(sim, op=op)
        order = data.ordered(list(data.series(rows)))
        for algo, pts in sorted(data.series(rows, sim_key).items(), key=lambda kv: order.index(kv[0])):
            ax.plot([b for b, _ in pts], [v for _, v in pts], marker=".", lw=1.4, color=COLORS.get(algo),
                    label="%s (sim)" % data.alias(algo))
        for variant, marker in (("nccl", "s"), ("nccl_symm", "^")):
            pts = sorted((r["bytes"], r[nccl_key]) for r in data.by(baseline, op=op, variant=variant))
            if pts:
                ax.plot([b for b, _ in pts], [v for _, v in pts], ls="none", marker=marker, ms=6, mfc="none",
                        color=COLORS[variant], label="%s (nccl-tests)" % data.alias(variant))
        _size_axis(ax, sorted({r["bytes"] for r in rows}))
        ax.set_title(title(op, rows))
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, **SAVE)


def fig_latency(machine, out):
    """Predicted latency vs size per op (log-log), NCCL's nccl-tests numbers as points."""
    _sim_with_nccl_tests(machine, out, "time_us_median", "time_us", "latency (us)",
                         lambda op, rows: "%s, %s (world %d)" % (op, machine, rows[0]["world"]))


def fig_busbw(machine, out):
    """Predicted bus bandwidth vs size per op: where each algorithm saturates NVLink."""
    _sim_with_nccl_tests(machine, out, "busbw_GBps", "busbw_GBps", "busbw (GB/s)",
                         lambda op, rows: "%s, %s" % (op, machine))


def fig_measured(machine, out):
    """Measured (solid) vs predicted (dashed) latency per op, NCCL measured in the same run."""
    meas = data.by(data.measured_rows(machine), graph=1)
    if not meas:
        sys.exit("plot.py: no measured GPU results under experiments/results/%s/" % machine)
    sim = data.by(data.sim_rows(machine), graph=1)
    ops = [op for op in data.OPS if data.by(meas, op=op)]
    fig, axes = plt.subplots(1, len(ops), figsize=(4.2 * len(ops), 3.6), squeeze=False)
    for ax, op in zip(axes[0], ops):
        rows = data.by(meas, op=op)
        for algo, pts in sorted(data.series(rows).items(), key=lambda kv: data.ordered(list(data.series(rows))).index(kv[0])):
            ax.plot([b for b, _ in pts], [t for _, t in pts], marker="o", ms=3, lw=1.4,
                    color=COLORS.get(algo), label="%s (measured)" % data.alias(algo))
            pred = data.series(data.by(sim, op=op, algo=algo)).get(algo)
            if pred:
                ax.plot([b for b, _ in pred], [t for _, t in pred], ls="--", lw=1, color=COLORS.get(algo),
                        label="%s (sim)" % data.alias(algo))
        _size_axis(ax, sorted({r["bytes"] for r in rows}))
        ax.set_title("%s, %s: measured vs predicted" % (op, machine))
        ax.set_ylabel("latency (us)")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out, **SAVE)


def fig_speedup(machine, out):
    """Measured: NCCL's best / our best time per op (left), and both bus bandwidths (right)."""
    table = targets.compare(data.measured_rows(machine))
    if not table:
        sys.exit("plot.py: no measured GPU results under experiments/results/%s/" % machine)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.6))
    for op in targets.OPS:
        rows = [t for t in table if t["op"] == op]
        if not rows:
            continue
        sizes = [t["bytes"] for t in rows]
        ax.plot(sizes, [t["speedup"] for t in rows], marker="o", ms=3, lw=1.4, color=OP_COLORS[op], label=op)
        bx.plot(sizes, [t["ours"]["busbw_GBps"] for t in rows], marker="o", ms=3, lw=1.4, color=OP_COLORS[op],
                label="%s, ours" % op)
        bx.plot(sizes, [t["nccl"]["busbw_GBps"] for t in rows], ls="--", lw=1, color=OP_COLORS[op],
                label="%s, NCCL best" % op)
    ax.axhline(1.0, color="k", lw=0.8)
    _size_axis(ax, sorted({t["bytes"] for t in table}))
    ax.set_yscale("linear")
    ax.set_ylabel("NCCL best / ours (time)")
    ax.set_title("%s (world %d): speed-up over NCCL, same run" % (machine, table[0]["ours"]["world"]))
    ax.legend(fontsize=7)
    _size_axis(bx, sorted({t["bytes"] for t in table}))
    bx.set_ylabel("busbw (GB/s)")
    bx.set_title("%s: bus bandwidth, ours vs NCCL best" % machine)
    bx.legend(fontsize=6)
    fig.tight_layout()
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

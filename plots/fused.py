#!/usr/bin/python3
"""The fused matmuls' figure: time over the matmul alone, per op, shape and M.

  fused.py MACHINE OUT.png

One panel per op (ag_mm, mm_rs); on the x axis every (shape, M) of the sweep; bars: the predicted
time of each fused algorithm and of seq_coll_gemm (our SM collective, then the matmul: the
simulator's stand-in for NCCL + cuBLAS), each over the predicted matmul alone (cublaslt = 1, the
dashed line). Where experiments/results/MACHINE/fused_MACHINE.csv is committed, the measured
ratios (CUDA graph, over the same run's cublaslt; nccl_cublaslt for NCCL + cuBLAS) are drawn as
black markers on the bars of the same algorithm; the title says when nothing is measured. The
dotted lines are the issue's targets at M = 16384 (experiments/fused_table.py WITHIN).
Inputs and names come from experiments/fused_table.py, so the figure and the table agree.
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402

sys.path.insert(0, os.path.join(data.ROOT, "experiments"))
import fused_table as ft  # noqa: E402

plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
                     "ytick.labelsize": 7})
SAVE = dict(dpi=200, metadata={"Software": None})  # no dates: re-running writes the same bytes
FIG_W = 7.0


def draw(inp, out):
    fig, axes = plt.subplots(1, 2, figsize=(FIG_W, 3.4), sharey=False)
    for ax, op in zip(axes, data.FUSED_OPS):
        groups = [(s, n, k, m) for s, n, k in ft.SHAPES for m in ft.MS if inp.group(inp.sim, op, n, k, m)]
        fused = sorted({r["algo"] for r in inp.sim if r["op"] == op and r["algo"] not in ft.BASELINES})
        series = ["seq_coll_gemm"] + fused
        width = 0.8 / max(len(series), 1)
        for i, a in enumerate(series):
            xs, ys, mx, my = [], [], [], []
            for j, (s, n, k, m) in enumerate(groups):
                sim, meas = inp.group(inp.sim, op, n, k, m), inp.group(inp.meas, op, n, k, m)
                x = j - 0.4 + width * (i + 0.5)
                r = ft.ratio(ft.time_of(sim, algo=a), ft.time_of(sim, algo="cublaslt"))
                if r is not None:
                    xs.append(x)
                    ys.append(r)
                measured_algo = "nccl_cublaslt" if a == "seq_coll_gemm" else a
                q = ft.ratio(ft.time_of(meas, algo=measured_algo, graph=1), ft.time_of(meas, algo="cublaslt", graph=1))
                if q is not None:
                    mx.append(x)
                    my.append(q)
            label = "seq_coll_gemm (SM coll., then matmul)" if a == "seq_coll_gemm" else ft.short(a)
            ax.bar(xs, ys, width=width * 0.95, label=label, color="0.6" if a == "seq_coll_gemm" else "C%d" % i)
            if mx:
                ax.plot(mx, my, "k_", ms=9, mew=1.6, label="measured, graph (grey: nccl_cublaslt)" if i == 0 else None)
        ax.axhline(1.0, color="k", ls="--", lw=0.8, label="matmul alone (cublaslt)")
        ax.axhline(ft.WITHIN[op], color="k", ls=":", lw=0.8, label="target at M 16K: %.2fx" % ft.WITHIN[op])
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(["%s\nM %dK" % (s.upper(), m // 1024) for s, _, _, m in groups])
        ax.set_ylabel("time / matmul alone")
        ax.set_ylim(bottom=0)
        ax.set_title("%s on %s%s" % (op, inp.machine, "" if inp.meas else " (predicted; not measured)"))
        ax.grid(True, axis="y", alpha=0.3, lw=0.5)
        ax.legend(fontsize=6, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, **SAVE)
    print("wrote", os.path.relpath(out, data.ROOT))


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    draw(ft.Inputs(argv[1]), argv[2])


if __name__ == "__main__":
    main(sys.argv)

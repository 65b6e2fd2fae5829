#!/usr/bin/python3
"""The targets table: per op and size, our best algorithm at its default block count against
NCCL's best (plain, on symmetric windows, or its copy-engine all-gather `nccl_ce` where the run
measured it) measured in the same run, CUDA-graph mode; beside it the host plans (copy engines)
against NCCL's copy-engine all-gather, the fused operations against the matmul alone and NCCL +
cuBLASLt, and a machine's issue targets (GOALS), each met or not.

  targets.py BENCH.csv [TUNE.csv]    print the table (markdown); with TUNE, a last column with the
                                     best flagged-packet (LL) row of that block-count sweep

GOALS lists each target's rows by what they measure, never by file: per target, evaluate() takes
the newest run (one CSV; the caller's run order, plots/data.py run_key) that measured one of our
candidate algorithms there, our best row of that run and the reference (NCCL's, the matmul alone)
from the same run. Newer CSVs of the same schema therefore take over with no code change.

A speed-up within the noise is a tie, not a win: each time's p10..p90 interval over the samples of
its run is its noise, and a size where ours and NCCL's intervals overlap is a tie (tie()).

experiments/tables.py imports compare() for experiments/tables/targets_<machine>.md, the paper's
table and its quoted numbers; scripts/gpu/targets.py is this script's command line on the GPU
machine. One implementation, so the table checked on the device is the table in the paper.
Standard library only (Debian's /usr/bin/python3).
"""

import csv
import re
import sys

OPS = ("all_reduce", "reduce_scatter", "all_gather")


def _f(row, key):
    return float(row[key])


def _i(row, key):
    return int(row[key])


def is_nccl(algo):
    return algo.startswith("nccl")


def tie(ours, nccl):
    """The tie rule: a difference within the run-to-run noise is no win and no loss. Each side's
    p10..p90 interval (over the samples of one run) is its noise; intervals that overlap are a tie."""
    return _f(ours, "time_us_p10") <= _f(nccl, "time_us_p90") and _f(nccl, "time_us_p10") <= _f(ours, "time_us_p90")


def verdict(ours, nccl):
    """'win' (ours faster beyond the noise), 'loss', or 'tie' (see tie())."""
    if tie(ours, nccl):
        return "tie"
    return "win" if _f(ours, "time_us_median") < _f(nccl, "time_us_median") else "loss"


def spread(row):
    """A row's noise: (p90 - p10) / median of its samples."""
    return (_f(row, "time_us_p90") - _f(row, "time_us_p10")) / _f(row, "time_us_median")


def compare(rows):
    """[{op, bytes, ours, nccl, speedup, verdict}] in op order, then by size.

    rows: result rows (core/result.h schema; strings or numbers) of one bench run. Graph-mode rows
    only; `ours` is the fastest of our algorithms (each at the block count the bench ran, the
    registry's default), `nccl` the fastest of NCCL's rows (`nccl`, `nccl_symm`, and `nccl_ce`, its
    copy-engine all-gather, where measured); speedup = nccl / ours time;
    verdict: win / loss / tie by the tie rule (verdict()). Sizes where either side has no row are
    left out."""
    best = {}
    for r in rows:
        if _i(r, "graph") != 1:
            continue
        k = (r["op"], _i(r, "bytes"), "nccl" if is_nccl(r["algo"]) else "ours")
        if k not in best or _f(r, "time_us_median") < _f(best[k], "time_us_median"):
            best[k] = r
    out = []
    for op in OPS:
        for b in sorted({k[1] for k in best if k[0] == op}):
            o, n = best.get((op, b, "ours")), best.get((op, b, "nccl"))
            if o and n:
                out.append(dict(op=op, bytes=b, ours=o, nccl=n,
                                speedup=_f(n, "time_us_median") / _f(o, "time_us_median"),
                                verdict=verdict(o, n)))
    return out


def is_host_plan(algo):
    """Our host plans that move bytes with copy engines (registry ids op.ce_...)."""
    return ".ce_" in algo


def _fastest(rows):
    return min(rows, key=lambda r: _f(r, "time_us_median")) if rows else None


def host_plans(rows):
    """[{op, bytes, plan, sm, nccl_ce, nccl}] per host-plan row of a run (graph mode): the plan's
    row, our fastest SM algorithm, NCCL's copy-engine all-gather and NCCL's fastest SM variant
    (nccl / nccl_symm) at the same op and size (None where not measured)."""
    g = [r for r in rows if _i(r, "graph") == 1 and r["op"] in OPS]
    out = []
    for op in OPS:
        for b in sorted({_i(r, "bytes") for r in g if r["op"] == op and is_host_plan(r["algo"])}):
            at = [r for r in g if r["op"] == op and _i(r, "bytes") == b]
            sm = _fastest([r for r in at if not is_nccl(r["algo"]) and not is_host_plan(r["algo"])])
            ce = _fastest([r for r in at if r["algo"] == "nccl_ce"])
            nc = _fastest([r for r in at if r["algo"] in ("nccl", "nccl_symm")])
            for p in sorted((r for r in at if is_host_plan(r["algo"])), key=lambda r: r["algo"]):
                out.append(dict(op=op, bytes=b, plan=p, sm=sm, nccl_ce=ce, nccl=nc))
    return out


FUSED_BASELINES = ("cublaslt", "nccl_cublaslt", "seq_coll_gemm", "tile_gemm")
SHAPE_NAMES = {(1792, 4096): "8B", (3584, 8192): "70B"}  # core/fused.h named_shape (N, K)


def fused(rows):
    """[{op, M, N, K, graph, best, alone, nccl, tile, tile_gemm}] per fused cell (op, shape, M,
    launch mode): our fastest fused algorithm, the matmul alone (cublaslt), NCCL + cuBLASLt, our
    fastest tile program (an algorithm whose name holds "tile": one persistent kernel on our own GEMM) and that GEMM
    alone (tile_gemm), all of the same run (None where the run has no such row)."""
    out = []
    cells = sorted({(r["op"], _i(r, "N"), _i(r, "K"), _i(r, "M"), -_i(r, "graph")) for r in rows
                    if r["op"] in ("ag_mm", "mm_rs")})
    for op, n, k, m, g in cells:
        at = [r for r in rows if (r["op"], _i(r, "N"), _i(r, "K"), _i(r, "M"), -_i(r, "graph")) == (op, n, k, m, g)]
        best = _fastest([r for r in at if r["algo"] not in FUSED_BASELINES])
        if best is None:
            continue
        out.append(dict(op=op, M=m, N=n, K=k, graph=-g, best=best,
                        alone=_fastest([r for r in at if r["algo"] == "cublaslt"]),
                        nccl=_fastest([r for r in at if r["algo"] == "nccl_cublaslt"]),
                        tile=_fastest([r for r in at if "tile" in r["algo"].partition(".")[2]]),
                        tile_gemm=_fastest([r for r in at if r["algo"] == "tile_gemm"])))
    return out


# ---- issue targets -------------------------------------------------------------------------------
# Per machine, the targets an issue set, each one condition. Fields: op; bytes (collectives) or
# M, N, K (fused); graph (1: CUDA graph, 0: eager); ours: a regex searched in the <name> of our
# candidate ids "op.<name>" ("^ce_": the copy-engine plans, ce_st and any later ce_*); then one of
#   limit_us: ours <= limit_us;
#   below: ours' median < the median of that NCCL row in the same run;
#   ratio_of, limit: ours / (that baseline row of the same run) <= limit;
#   not_measured: a sentence saying why no number can exist here.
# context: an algo (or "nccl": NCCL's fastest variant) of the same run printed beside.
GOALS = {
    "h200x2": [  # issue 20
        dict(name="copy-engine all-gather 256M <= 330 us", op="all_gather", bytes=256 << 20, graph=1,
             ours=r"^ce_", limit_us=330.0, context="nccl_ce"),
        dict(name="copy-engine all-gather 256M below NCCL's copy-engine all-gather (same run)",
             op="all_gather", bytes=256 << 20, graph=1, ours=r"^ce_", below="nccl_ce"),
        dict(name="copy-engine all-gather 1M <= 25 us", op="all_gather", bytes=1 << 20, graph=1,
             ours=r"^ce_", limit_us=25.0, context="nccl_ce",
             explain={"all_gather.ce_sm_st": "ce_sm: below 4 MiB per rank its SM kernel carries every byte"}),
        dict(name="ag_mm 70B M16384 <= 1.05x the matmul alone (graph)", op="ag_mm", M=16384, N=3584, K=8192,
             graph=1, ours=r".", ratio_of="cublaslt", limit=1.05, context="nccl_cublaslt"),
        dict(name="ag_mm 70B M16384 faster than torch's fused op (graph, same call)", op="ag_mm", M=16384,
             N=3584, K=8192, graph=1, ours=r".", below="torch_fused", ref_required=True, context="cublaslt"),
        dict(name="ag_mm 70B M16384 faster than torch's fused op (eager, same call)", op="ag_mm", M=16384,
             N=3584, K=8192, graph=0, ours=r".", below="torch_fused", ref_required=True, context="cublaslt"),
        dict(name="mm_rs 70B M16384 <= 1.10x the matmul alone (graph)", op="mm_rs", M=16384, N=3584, K=8192,
             graph=1, ours=r".", ratio_of="cublaslt", limit=1.10, context="nccl_cublaslt"),
        dict(name="mm_rs 70B M16384 <= 1.10x the matmul alone (eager)", op="mm_rs", M=16384, N=3584, K=8192,
             graph=0, ours=r".", ratio_of="cublaslt", limit=1.10, context="nccl_cublaslt"),
        dict(name="all-reduce 4K <= 2.5 us", op="all_reduce", bytes=4 << 10, graph=1, ours=r".",
             limit_us=2.5, context="nccl"),
    ],
}


def _goal_cell(goal, r):
    """Whether row r measures the goal's cell (any algorithm)."""
    if r["op"] != goal["op"] or _i(r, "graph") != goal["graph"]:
        return False
    if "bytes" in goal:
        return _i(r, "bytes") == goal["bytes"]
    return all(_i(r, k) == goal[k] for k in ("M", "N", "K"))


def _ours(goal, algo):
    return algo.startswith(goal["op"] + ".") and re.search(goal["ours"], algo.split(".", 1)[1]) is not None


def evaluate(goal, rows, run_order):
    """One target: {goal, status ('met' / 'not met' / 'not measured' / 'not judged'), ours, ref,
    context, value, run, note}. rows: every row of the machine's runs (each with "source", its CSV),
    all runs together; run_order(source) -> sort key, larger = newer. The newest run with a
    candidate row of ours decides; the reference and context rows come from that run only."""
    res = dict(goal=goal, status="not measured", ours=None, ref=None, context=None, value=None, run=None,
               note="")
    if "not_measured" in goal:
        res["note"] = goal["not_measured"]
        return res
    cells = [r for r in rows if _goal_cell(goal, r)]
    cand = [r for r in cells if _ours(goal, r["algo"])]
    if goal.get("ref_required"):  # a reference measured in some calls only (torch): those calls
        with_ref = {r["source"] for r in cells if r["algo"] == goal.get("below")}
        cand = [r for r in cand if r["source"] in with_ref]
    if not cand:
        res["note"] = "no row of ours measured there"
        return res
    run = max({r["source"] for r in cand}, key=run_order)
    same = [r for r in cells if r["source"] == run]
    ours = _fastest([r for r in cand if r["source"] == run])
    res.update(ours=ours, run=run, value=_f(ours, "time_us_median"))
    ctx = goal.get("context")
    if ctx:
        res["context"] = _fastest([r for r in same if (is_nccl(r["algo"]) if ctx == "nccl" else r["algo"] == ctx)])
    if "limit_us" in goal:
        res["status"] = "met" if res["value"] <= goal["limit_us"] else "not met"
        res["note"] = goal.get("explain", {}).get(ours["algo"], "")
        return res
    ref_algo = goal.get("below") or goal.get("ratio_of")
    ref = _fastest([r for r in same if r["algo"] == ref_algo])
    res["ref"] = ref
    if ref is None:
        res.update(status="not judged", note="no %s row in the same run" % ref_algo)
    elif "below" in goal:
        res["status"] = "met" if res["value"] < _f(ref, "time_us_median") else "not met"
        if tie(ours, ref):
            res["note"] = "within the noise (p10-p90 intervals overlap)"
    else:
        res["value"] = res["value"] / _f(ref, "time_us_median")
        res["status"] = "met" if res["value"] <= goal["limit"] else "not met"
        # The ratio's noise: ours and the reference each between their p10 and p90 (over the samples of
        # the run); a limit inside that span is not decided beyond the noise, whichever side the medians say.
        lo = _f(ours, "time_us_p10") / _f(ref, "time_us_p90")
        hi = _f(ours, "time_us_p90") / _f(ref, "time_us_p10")
        if lo <= goal["limit"] <= hi:
            res["note"] = "within the noise: p10-p90 spans %.3fx-%.3fx" % (lo, hi)
    return res


def best_ll(tune_rows):
    """{(op, bytes): fastest graph-mode LL row} of a block-count sweep."""
    best = {}
    for r in tune_rows:
        if _i(r, "graph") == 1 and "_ll" in r["algo"]:
            k = (r["op"], _i(r, "bytes"))
            if k not in best or _f(r, "time_us_median") < _f(best[k], "time_us_median"):
                best[k] = r
    return best


def fmt_bytes(n):
    return "%dM" % (n >> 20) if n >= 1 << 20 else "%dK" % (n >> 10)


def markdown(table, tune=None):
    """The table as markdown, one row per compare() entry."""
    head = "| op | bytes | ours (algo, blocks) | us | busbw | NCCL best | us | busbw | speed-up | verdict |"
    sep = "|---|---|---|---|---|---|---|---|---|---|"
    if tune is not None:
        head += " best LL in tune (blocks) |"
        sep += "---|"
    lines = [head, sep]
    for t in table:
        o, n = t["ours"], t["nccl"]
        line = "| %s | %s | %s (%s) | %.2f | %.0f | %s | %.2f | %.0f | %.2fx | %s |" % (
            t["op"], fmt_bytes(t["bytes"]), o["algo"].split(".")[-1], o["blocks"], _f(o, "time_us_median"),
            _f(o, "busbw_GBps"), n["algo"], _f(n, "time_us_median"), _f(n, "busbw_GBps"), t["speedup"],
            t["verdict"])
        if tune is not None:
            ll = tune.get((t["op"], t["bytes"]))
            line += " %s |" % ("%.2f (%s)" % (_f(ll, "time_us_median"), ll["blocks"]) if ll else "")
        lines.append(line)
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    with open(argv[1], newline="") as f:
        table = compare(list(csv.DictReader(f)))
    tune = None
    if len(argv) == 3:
        with open(argv[2], newline="") as f:
            tune = best_ll(list(csv.DictReader(f)))
    sys.stdout.write(markdown(table, tune))


if __name__ == "__main__":
    main(sys.argv)

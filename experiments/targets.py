#!/usr/bin/python3
"""The targets table: per op and size, our best algorithm at its default block count against
NCCL's best (plain or on symmetric windows) measured in the same run, CUDA-graph mode.

  targets.py BENCH.csv [TUNE.csv]    print the table (markdown); with TUNE, a last column with the
                                     best flagged-packet (LL) row of that block-count sweep

A speed-up within the noise is a tie, not a win: each time's p10..p90 interval over the samples of
its run is its noise, and a size where ours and NCCL's intervals overlap is a tie (tie()).

experiments/tables.py imports compare() for experiments/tables/targets_<machine>.md, the paper's
table and its quoted numbers; scripts/gpu/targets.py is this script's command line on the GPU
machine. One implementation, so the table checked on the device is the table in the paper.
Standard library only (Debian's /usr/bin/python3).
"""

import csv
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
    registry's default), `nccl` the fastest of `nccl` / `nccl_symm`; speedup = nccl / ours time;
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

#!/usr/bin/python3
"""The simulator's mma_in_GBps (backends/sim/sim.h): the rate at which a tile's epilogue reads its
input tiles (mma_tile's C_in), the block held meanwhile, from scripts/gpu/acc_inputs.sh's runs:
mm_rs.tile_st_peer_acc as the program against the same without its own tiles' epilogue inputs
(SYMM_DEBUG_MMRS_TILES=acc-no-inputs: the acquires and signals kept), graph, at worlds 2 and 4, 8B and
70B, M 4096 and 16384. Per shape and world: d = the program's time less the other's (each the median
over the runs); the bytes the busiest block reads = its own tiles (ceil(own / sms), own = M/world/128
x N/BN, BN the CUDA kernel's tile width, tile_width below) x (world - 1) slots x a tile's bytes. The
rate is the sum of those bytes over the sum of d (a least-squares line through 0 would weight the
largest shapes alone).
  experiments/mma_in_rate.py [folder]   (default experiments/results/h200x4/acc_inputs_25b1d12)"""

import csv
import glob
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "experiments", "results", "h200x4", "acc_inputs_25b1d12")
SMS = 132  # H200
TILE_M, ELEM = 128, 2


def tile_width(rows, n, blocks=SMS):
    """The CUDA kernel's tile width (backends/cuda/tile_fused.cpp tile_program_width: the width with
    the fewer waves a block over the program's rows, 128 weighed at 0.88 of 256's speed). tiles_acc's
    tiles cover all M rows (world rounds of M/world), so rows = M."""
    def cost(bn, speed):
        tiles = math.ceil(rows / TILE_M) * math.ceil(n / bn)
        return math.ceil(tiles / blocks) * bn / speed
    return 256 if cost(256, 1.0) <= cost(128, 0.88) else 128


def times(folder, mode):
    """{(world, M, N, K): median us over the runs} of one mode's CSVs (w<world>_<rep>_<mode>.csv)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "w*_*_%s.csv" % mode))):
        with open(path) as f:
            for r in csv.DictReader(f):
                key = (int(r["world"]), int(r["M"]), int(r["N"]), int(r["K"]))
                out.setdefault(key, []).append(float(r["time_us_median"]))
    return {k: statistics.median(v) for k, v in out.items()}


def rows(folder=DEFAULT):
    """[(world, M, N, K, bytes the busiest block reads, d us)] for every shape both modes measured."""
    prog, bare = times(folder, "program"), times(folder, "acc-no-inputs")
    out = []
    for key in sorted(prog):
        if key not in bare:
            continue
        w, m, n, _ = key
        bn = tile_width(m, n)
        own = math.ceil(m / w / TILE_M) * math.ceil(n / bn)
        per_block = math.ceil(own / SMS) * (w - 1) * TILE_M * bn * ELEM
        out.append(key + (per_block, prog[key] - bare[key]))
    return out


def rate_GBps(folder=DEFAULT):
    rs = rows(folder)
    if not rs:
        raise SystemExit("mma_in_rate: no runs of both modes under %s" % folder)
    return sum(r[4] for r in rs) / sum(r[5] for r in rs) / 1e3  # bytes per us -> GB/s


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    for w, m, n, k, b, d in rows(folder):
        print("world %d  %5d x %4d x %4d  %7.0f KiB a block  %6.2f us  %5.1f GB/s" % (w, m, n, k, b / 1024, d,
                                                                                      b / d / 1e3))
    print("mma_in_GBps = %.1f" % rate_GBps(folder))


if __name__ == "__main__":
    main()

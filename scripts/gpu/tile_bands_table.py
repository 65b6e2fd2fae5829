#!/usr/bin/env python3
"""The table of scripts/gpu/tile_bands.sh: bands_<cfg>_<pass>_<machine>.log (the fused bench's
stdout table) -> one line per (N, M, mode, algo): each config's median us per pass, and x the
matmul alone (cublaslt, tile_gemm of the same run's first pass).
    tile_bands_table.py <dir> <machine>"""
import collections
import glob
import os
import sys


def rows(path):
    for line in open(path):
        f = line.split()
        if len(f) >= 12 and f[0] in ("ag_mm", "mm_rs") and f[6] in ("0", "1"):
            yield f[0], f[1], f[4], f[3], "graph" if f[6] == "1" else "eager", float(f[7])


def main():
    d, m = sys.argv[1], sys.argv[2]
    t = collections.defaultdict(list)
    cfgs = []
    for path in sorted(glob.glob(os.path.join(d, f"bands_*_*_{m}.log"))):
        cfg = os.path.basename(path).split("_")[1]
        if cfg not in cfgs:
            cfgs.append(cfg)
        for op, algo, n, mm, mode, us in rows(path):
            key = (op, n, mm, mode, algo, cfg if "." in algo else "-")
            t[key].append(us)
    print("op N M mode algo config median_us(per pass) x_cublaslt x_tile_gemm")
    for key in sorted(t):
        op, n, mm, mode, algo, cfg = key
        med = sorted(t[key])[len(t[key]) // 2]
        alone = t.get((op, n, mm, mode, "cublaslt", "-"))
        tile = t.get((op, n, mm, mode, "tile_gemm", "-"))
        xs = [f"{med / a[0]:.3f}" if a else "-" for a in (alone, tile)]
        print(op, n, mm, mode, algo, cfg, " / ".join(f"{v:.1f}" for v in t[key]), *xs)


if __name__ == "__main__":
    main()

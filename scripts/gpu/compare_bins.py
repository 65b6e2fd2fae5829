#!/usr/bin/env python3
"""Old binary against new, cell by cell, from CSVs named <prefix>_<old|new><rep>_....csv (as
scripts/gpu/ll_self.sh writes them): each cell's medians per binary and the change of their mean.

    scripts/gpu/compare_bins.py FILE.csv... > compare.txt

Only our algorithms' rows (NCCL's are left out); a cell is (op, algorithm, world, launch mode,
bytes, blocks)."""
import collections
import csv
import os
import re
import statistics
import sys


def read_cells(paths, by_blocks=False):
    """{(op, algorithm, world, mode, bytes): {"old": [medians], "new": [medians]}} over our rows of
    `paths`, and {"old": {git sha}, "new": {git sha}} of the binaries that made them. With
    `by_blocks`, the key ends with the block count as well (runs that sweep blocks)."""
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    shas = {"old": set(), "new": set()}
    for path in paths:
        m = re.match(r"[^_]+_(old|new)\d*_", os.path.basename(path))
        if not m:
            sys.exit(f"compare_bins.py: {path}: not named <prefix>_<old|new><rep>_...")
        with open(path) as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                if not r["algo"].startswith(r["op"] + "."):
                    continue
                key = (r["op"], r["algo"].split(".", 1)[1], int(r["world"]),
                       "graph" if r["graph"] == "1" else "eager", int(r["bytes"]))
                if by_blocks:
                    key += (int(r["blocks"]),)
                cells[key][m.group(1)].append(float(r["time_us_median"]))
                shas[m.group(1)].add(r["git_sha"])
    return cells, shas


def change(cell):
    """The change of the mean of the new binary's medians over the old's, in %."""
    old, new = cell["old"], cell["new"]
    return 100 * (statistics.mean(new) - statistics.mean(old)) / statistics.mean(old)


def main(paths):
    cells, _ = read_cells(paths, by_blocks=True)
    print(f"{'op':15s} {'algorithm':13s} {'world':>5s} {'mode':5s} {'bytes':>8s} {'blocks':>6s}  "
          f"{'old medians (us)':22s} {'new medians (us)':22s} change")
    for key in sorted(cells):
        old, new = cells[key]["old"], cells[key]["new"]
        if not old or not new:
            continue
        print(f"{key[0]:15s} {key[1]:13s} {key[2]:5d} {key[3]:5s} {key[4]:8d} {key[5]:6d}  "
              f"{' '.join(f'{x:.2f}' for x in old):22s} {' '.join(f'{x:.2f}' for x in new):22s} {change(cells[key]):+.1f}%")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    main(sys.argv[1:])

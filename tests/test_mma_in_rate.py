#!/usr/bin/python3
"""experiments/mma_in_rate.py: the machine files' mma_in_GBps is what the script computes from the
committed runs (experiments/results/h200x4/acc_inputs_25b1d12), never a typed number that drifted from
them; and the script's arithmetic on made-up runs."""

import csv
import glob
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import mma_in_rate  # noqa: E402

HEADER = ["world", "M", "N", "K", "time_us_median"]


def write(folder, world, rep, mode, rows):
    with open(os.path.join(folder, "w%d_%d_%s.csv" % (world, rep, mode)), "w") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for m, n, k, t in rows:
            w.writerow([world, m, n, k, t])


class Rate(unittest.TestCase):
    def test_arithmetic(self):
        with tempfile.TemporaryDirectory() as d:
            # 128 x 256 tiles (the kernel's pick over all M rows at both shapes); world 2, M 4096, N 1792:
            # 16 x 7 = 112 own tiles, one a block, one 64 KiB slot: 10 us more; world 4, M 16384,
            # N 3584: 32 x 14 = 448 own tiles, 4 a block, 3 slots each: 60 us more.
            write(d, 2, 1, "program", [(4096, 1792, 4096, 110.0)])
            write(d, 2, 2, "program", [(4096, 1792, 4096, 130.0)])  # the median of the two: 120
            write(d, 2, 1, "acc-no-inputs", [(4096, 1792, 4096, 110.0)])
            write(d, 4, 1, "program", [(16384, 3584, 8192, 560.0)])
            write(d, 4, 1, "acc-no-inputs", [(16384, 3584, 8192, 500.0)])
            rows = mma_in_rate.rows(d)
            self.assertEqual([r[4] for r in rows], [65536, 4 * 3 * 65536])
            self.assertEqual([r[5] for r in rows], [10.0, 60.0])
            self.assertAlmostEqual(mma_in_rate.rate_GBps(d), (65536 + 12 * 65536) / 70.0 / 1e3)

    def test_tile_width(self):
        # tile_program_width's rule: 4096 x 3584 on 132 blocks, 448 tiles 256 wide (4 a block, 1024)
        # against 896 128 wide (7 a block, 7 x 128 / 0.88 = 1018): 128; 16384 x 3584: 256.
        self.assertEqual(mma_in_rate.tile_width(4096, 3584), 128)
        self.assertEqual(mma_in_rate.tile_width(16384, 3584), 256)
        self.assertEqual(mma_in_rate.tile_width(4096, 1792), 256)

    def test_machine_files_carry_the_committed_rate(self):
        want = round(mma_in_rate.rate_GBps(), 1)
        files = glob.glob(os.path.join(ROOT, "experiments", "machines", "base", "*.ini"))
        self.assertTrue(files)
        for path in files:
            with open(path) as f:
                vals = [line.split("=")[1].split("#")[0].strip() for line in f if line.startswith("mma_in_GBps")]
            self.assertEqual(len(vals), 1, path)
            self.assertAlmostEqual(float(vals[0]), want, places=6, msg=path)


if __name__ == "__main__":
    unittest.main()

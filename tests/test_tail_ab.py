#!/usr/bin/env python3
"""experiments/tail_ab.py (an old-against-new A/B run beside the simulator with the CUDA verbs' old
tail and without) on a run made here by the simulator itself: "old" rows are sweeps with
--serial-tail, "new" rows without, so the table must find every cell's measured change equal to its
predicted one, move exactly the cells whose pieces leave a thread 2-3 vectors, and err by nothing.
Needs the built symmcoll (SYMMCOLL, default build/apps/symmcoll)."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "experiments", "tail_ab.py")
SYMMCOLL = os.environ.get("SYMMCOLL", os.path.join(ROOT, "build", "apps", "symmcoll"))


def sweep(out, tail, blocks):
    # all_gather.ld at 4 ranks: 256K on 4 blocks is 16 KiB a block and peer (2 vectors a thread at
    # 512 threads: the old tail's extra round trip); on 2 blocks 32 KiB (one full step): no change.
    subprocess.run([SYMMCOLL, "sweep", "--machine", "h200x4", "--world", "4", "--op", "all_gather", "--algo", "ld",
                    "--blocks", str(blocks), "--sizes", "256K", "--timing-only", "--quiet", "--csv", out]
                   + (["--serial-tail"] if tail else []), check=True, capture_output=True)


class TailAb(unittest.TestCase):
    def test_the_simulators_own_ab_run_matches_itself(self):
        with tempfile.TemporaryDirectory() as d:
            for name, tail in (("old1", True), ("new1", False)):
                for blocks in (2, 4):
                    sweep(os.path.join(d, "ab_%s_b%d_x.csv" % (name, blocks)), tail, blocks)
            out = os.path.join(d, "t.md")
            r = subprocess.run([sys.executable, TOOL, d, "--machine", "h200x4", "--symmcoll", SYMMCOLL, "--out", out],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(out) as f:
                text = f.read()
            m = re.search(r"\*\*2 cells; the simulator moves 1 of them .*: measured change there median ([-+.\d]+) %,"
                          r" predicted ([-+.\d]+) %; the other 1 cells measured \+0\.0 %", text)
            self.assertIsNotNone(m, text)
            self.assertEqual(m.group(1), m.group(2))
            self.assertLess(float(m.group(1)), -1.0)  # one remote round trip less on a ~10 us call
            self.assertIn("old rows predicted with the old tail: median 0.0 %; new rows without: 0.0 %", text)
            rows = [line for line in text.splitlines() if line.startswith("| all_gather |")]
            self.assertEqual(len(rows), 1)
            self.assertIn("| 262144 | 4 |", rows[0])

    def test_a_folder_without_ab_rows_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, TOOL, d, "--machine", "h200x4", "--symmcoll", SYMMCOLL,
                                "--out", os.path.join(d, "t.md")], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no ab_*.csv", r.stderr)


if __name__ == "__main__":
    unittest.main()

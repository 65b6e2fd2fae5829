#!/usr/bin/env python3
"""experiments/fused_power.py on a run folder made here: two runs' windows, samples of two GPUs inside
and outside them (idle ones below the busy threshold), and the runs' logs; each row's median clock and
power, its share of samples at the software power cap and its time a call must come out as built; a
folder without samples names the file it misses; experiments/tables.py's split_numbers turns such a
folder into the paper's macros."""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "experiments", "fused_power.py")


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def sustained_run(d, names, times, clock0, algo):
    """A sustained run's folder as scripts/gpu/mmrs_power.sh / mmrs_acc.sh leave it: one rep of each
    run, its window stamped, two busy samples (SM clock clock0 + 10 k for the k-th run) and its time a
    call (the first run: the tile GEMM alone, gemm-bench's line; the others: the fused bench's row)."""
    os.mkdir(d)
    stamps, rows = [], ["timestamp, index, clocks.current.sm [MHz], power.draw [W], clocks_event_reasons.active, temperature.gpu"]
    for k, (name, us) in enumerate(zip(names, times)):
        stamps += [f"start {name} 2026/11/28 08:00:{2 * k:02d}.000", f"end {name} 2026/11/28 08:00:{2 * k + 1:02d}.000"]
        rows += [f"2026/11/28 08:00:{2 * k:02d}.500, {g}, {clock0 + 10 * k}, 650.0, 0x0000000000000004, 50" for g in (0, 1)]
        if k == 0:
            write(d, f"run_1_{name}_gpu0_h200x2.log", f"bf16 16384 3584 4096 graph coop 128x256x64 {us}  -1.0  -1.000 -1.0\n")
        else:
            write(d, f"run_1_{name}_h200x2.log", f"mm_rs  {algo}  bf16  16384  3584  8192  1  {us}  {us}  {us}  600.0  -1  -1\n")
    write(d, "stamps_h200x2.txt", "\n".join(stamps) + "\n")
    write(d, "smipow_h200x2.csv", "\n".join(rows) + "\n")


class FusedPower(unittest.TestCase):
    def test_table(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "stamps_h200x4.txt",
                  "start gemm 2026/11/28 08:00:00.000\nend gemm 2026/11/28 08:00:01.000\n"
                  "start fused 2026/11/28 08:00:02.000\nend fused 2026/11/28 08:00:03.000\n")
            rows = ["timestamp, index, clocks.current.sm [MHz], power.draw [W], clocks_event_reasons.active, temperature.gpu"]
            # gemm: GPU 0 and 1 busy (one idle sample below 300 W, left out), one sample at the cap
            rows += ["2026/11/28 08:00:00.100, 0, 1500, 690.0, 0x0000000000000004, 50",
                     "2026/11/28 08:00:00.100, 1, 1600, 680.0, 0x0000000000000000, 50",
                     "2026/11/28 08:00:00.200, 0, 1700, 100.0, 0x0000000000000004, 50",
                     "2026/11/28 08:00:00.300, 1, 1550, 700.0, 0x0000000000000000, 50"]
            # between the runs (outside every window), then fused: every sample at the cap
            rows += ["2026/11/28 08:00:01.500, 0, 1980, 650.0, 0x0000000000000000, 50",
                     "2026/11/28 08:00:02.500, 0, 1400, 600.0, 0x0000000000000005, 50"]
            write(d, "smipow_h200x4.csv", "\n".join(rows) + "\n")
            write(d, "run_1_gemm_gpu0_h200x4.log",
                  "bf16    16384   3584   8192 graph coop 128x256x64, 4 stages    1410.5       -1.0  -1.000 -1.0\n")
            write(d, "run_1_fused_h200x4.log",
                  "ag_mm  ag_mm.ce_tile_gemm  bf16  16384  3584  8192  1  1495.20  1483.16  1592.88  643.4  -1  -1\n")
            out = subprocess.run([sys.executable, TOOL, d], capture_output=True, text=True, check=True).stdout
            lines = [l for l in out.splitlines() if l.startswith("| gemm") or l.startswith("| fused")]
            self.assertEqual(lines[0], "| gemm | 1 | 1410.5 | 3 | 1550 | 690 | 33 % |")
            self.assertEqual(lines[1], "| fused | 1 | 1495.2 | 1 | 1400 | 600 | 100 % |")

    def test_split_numbers(self):
        # experiments/tables.py's split_numbers on a sustained run made here: five runs of one rep,
        # each with its window, two busy samples and its time a call; the paper's macros as built
        self.split_case([725.0, 750.0, 770.0, 790.0, 830.0], side_largest=True)  # the side reduce adds 40 us
        self.split_case([725.0, 780.0, 790.0, 800.0, 830.0], side_largest=False)  # the walk adds 55, the side 30

    def numbers_of(self, name, modes, times, clock, algo, fn):
        """The macros fn(tables, put, folder, top) writes for a sustained run made here (a folder `name`)."""
        sys.path.insert(0, os.path.join(ROOT, "experiments"))
        import tables  # noqa: E402
        with tempfile.TemporaryDirectory() as top:
            d = os.path.join(top, name)
            sustained_run(d, modes, times, clock, algo)
            got = {}
            fn(tables, got.__setitem__, d, top)
            return got

    def split_case(self, times, side_largest):
        got = self.numbers_of("mmrs_power_abc1234", ["tile_rs", "compute_only", "no_reduce", "no_side", "tiles"],
                              times, 1470, "mm_rs.tile_st_ld_reduce",
                              lambda t, put, d, top: t.split_numbers(put, split_run=d,
                                                                     sigwarp_run=os.path.join(top, "none")))
        self.assertEqual([got["symmSplit" + k] for k in ("Gemm", "ComputeOnly", "NoReduce", "NoSide", "Program")],
                         ["%.0f" % t for t in times])
        self.assertEqual((got["symmSplitClockLo"], got["symmSplitClockHi"]), ("1470", "1510"))
        self.assertEqual(got["symmSplitGitSha"], "abc1234")
        self.assertEqual(got.get("symmSplitSideLargest"), "1" if side_largest else None)
        self.assertNotIn("symmSigwarpNew", got)

    def test_acc_numbers(self):
        # experiments/tables.py's acc_numbers on a sustained run made here: the tile GEMM, the three
        # programs and tiles_acc's stores alone, one rep each; symmAccSlowest only where the data says so
        self.acc_case([725.0, 833.0, 841.0, 865.0, 834.0], slowest=True)
        self.acc_case([725.0, 833.0, 841.0, 820.0, 800.0], slowest=False)

    def acc_case(self, times, slowest):
        got = self.numbers_of("mmrs_acc_abc1234", ["tile_rs", "tiles", "tiles_push", "tiles_acc", "acc_compute_only"],
                              times, 1450, "mm_rs.tile_st_peer_acc",
                              lambda t, put, d, top: t.acc_numbers(put, acc_run=d))
        self.assertEqual([got["symmAcc" + k] for k in ("Gemm", "Pull", "Push", "Acc", "Stores")],
                         ["%.0f" % t for t in times])
        self.assertEqual((got["symmAccClockLo"], got["symmAccClockHi"]), ("1450", "1490"))
        self.assertEqual(got["symmAccGitSha"], "abc1234")
        self.assertEqual(got.get("symmAccSlowest"), "1" if slowest else None)

    def test_no_samples(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, "stamps_h200x2.txt", "start a 2026/11/28 08:00:00.000\nend a 2026/11/28 08:00:01.000\n")
            r = subprocess.run([sys.executable, TOOL, d], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("smipow_h200x2.csv", r.stderr)

    def test_no_stamps(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, TOOL, d], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no stamps", r.stderr)


if __name__ == "__main__":
    unittest.main()

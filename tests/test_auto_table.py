#!/usr/bin/python3
"""experiments/auto_table.py's rules on hand-made rows: correctness, NCCL and multicast left out,
measured before simulated. (The committed tables are checked against a regeneration by the
AutoTable.*IsRegenerated tests.)"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
import auto_table  # noqa: E402


def row(algo, bytes_, time, err=-1.0, graph=1, blocks=8, op="all_reduce"):
    return dict(op=op, world=4, dtype="bf16", graph=graph, bytes=bytes_, algo=algo, blocks=blocks,
                time_us_median=time, max_rel_err=err)


KEY = ("all_reduce", 4, "bf16", 1, 4096)


class AutoTable(unittest.TestCase):
    def test_fastest_correct_row_wins(self):
        out = auto_table.choose([row("a.slow", 4096, 5.0, 0.001), row("a.fast", 4096, 3.0, 0.001)], [], set())
        self.assertEqual(out[KEY][0]["algo"], "a.fast")
        self.assertEqual(out[KEY][1], "measured")

    def test_failed_check_excludes_the_algorithm_at_that_size_also_unchecked(self):
        rows = [row("a.bad", 4096, 1.0, 0.5), row("a.bad", 4096, 0.9, -1, blocks=16),
                row("a.good", 4096, 3.0, 0.001)]
        self.assertEqual(auto_table.choose(rows, [], set())[KEY][0]["algo"], "a.good")

    def test_unchecked_rows_compete(self):
        rows = [row("a.tuned", 4096, 2.0, -1, blocks=32), row("a.good", 4096, 3.0, 0.001)]
        best = auto_table.choose(rows, [], set())[KEY][0]
        self.assertEqual((best["algo"], best["blocks"]), ("a.tuned", 32))

    def test_nccl_and_multicast_are_never_chosen(self):
        rows = [row("nccl", 4096, 1.0, 0.001), row("nccl_symm", 4096, 1.0, 0.001),
                row("a.mc", 4096, 1.0, 0.001), row("a.good", 4096, 3.0, 0.001)]
        self.assertEqual(auto_table.choose(rows, [], {"a.mc"})[KEY][0]["algo"], "a.good")

    def test_measured_wins_where_it_exists_simulated_elsewhere(self):
        measured = [row("a.meas", 4096, 3.0, 0.001)]
        simulated = [row("a.plan", 4096, 1.0, 0.001), row("a.plan", 8192, 1.0, 0.001)]
        out = auto_table.choose(measured, simulated, set())
        self.assertEqual((out[KEY][0]["algo"], out[KEY][1]), ("a.meas", "measured"))
        k2 = ("all_reduce", 4, "bf16", 1, 8192)
        self.assertEqual((out[k2][0]["algo"], out[k2][1]), ("a.plan", "simulated"))

    def test_error_bound_mirrors_the_library(self):
        # core/reference.cpp rel_err_bound(bf16, 4): 2^-8 * 1.01 + 4 * 2^-23 * 2 / 1e-2
        self.assertAlmostEqual(auto_table.err_bound("bf16", 4), 0.0040407, places=7)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""plots/timeline.py (one call measured and simulated, verb by verb) on hand-made traces in a temp
dir, in the traces' format (backends/sim/trace.h): which rank each panel shows, and how the verbs
pair up in the table."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plots"))
import timeline  # noqa: E402


def x(pid, tid, name, ts, dur, **args):
    return {"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


class Timeline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, events):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        return path

    def test_the_rank_that_waited_least_at_the_entry_is_shown(self):
        # Rank 0 (pid 1) waits 60 us for rank 1's entry flag; rank 1 starts its GEMM at 20.
        ev = [x(1, 1000, "wait_flag", 5, 60), x(1, 1000, "gemm", 70, 300),
              x(2, 1000, "wait_flag", 5, 10), x(2, 1000, "gemm", 20, 300), x(2, 999, "launch", 0, 1)]
        self.assertEqual(timeline.pick_rank(ev), 2)

    def test_verbs_pair_by_stream_name_and_order_and_copy_engine_tracks_are_left_out(self):
        meas = [x(1, 1000, "gemm", 0, 100), x(1, 1000, "gemm", 100, 110), x(1, 1001, "copy_engine", 100, 50),
                x(1, 1001, "launch", 160, 20)]
        sim = [x(1, 1000, "gemm", 0, 90), x(1, 1000, "gemm", 90, 99), x(1, 1001, "copy_engine", 90, 60),
               x(1, 1100, "copy_engine", 95, 55), x(1, 1001, "launch", 160, 10), x(1, 1001, "wait_event", 0, 90)]
        rows = timeline.paired(meas, sim)
        got = {(t, v, k): (m, s) for (t, v, k), m, s in rows}
        self.assertEqual(got[("stream 0", "gemm", 0)], (100, 90))
        self.assertEqual(got[("stream 0", "gemm", 1)], (110, 99))
        self.assertEqual(got[("stream 1", "copy_engine", 0)], (50, 60))
        self.assertEqual(got[("stream 1", "launch", 0)], (20, 10))
        self.assertEqual(len(rows), 4)  # no copy-engine track, no wait_event

    def test_it_draws_and_writes_the_table(self):
        meas = self.write("m.json", [x(1, 1000, "gemm", 0, 100), x(1, 1001, "write_flag", 100, 5, slot=3)])
        sim = self.write("s.json", [x(1, 1000, "gemm", 0, 80), x(1, 1001, "write_flag", 80, 0)])
        png, md = os.path.join(self.tmp.name, "t.png"), os.path.join(self.tmp.name, "t.md")
        timeline.main([meas, sim, png, "--table", md])
        self.assertGreater(os.path.getsize(png), 1000)
        with open(md) as f:
            text = f.read()
        self.assertIn("| stream 0 | gemm | 0 | 100.0 | 80.0 | 0.80 |", text)
        self.assertIn("| stream 1 | write_flag | 0 | 5.0 | 0.0 | 0.00 |", text)

    def test_a_trace_without_verbs_is_refused(self):
        empty = self.write("e.json", [x(1, 999, "call", 0, 10)])
        ok = self.write("o.json", [x(1, 1000, "gemm", 0, 10)])
        with self.assertRaises(SystemExit):
            timeline.main([empty, ok, os.path.join(self.tmp.name, "t.png")])


if __name__ == "__main__":
    unittest.main()

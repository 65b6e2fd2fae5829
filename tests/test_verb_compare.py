#!/usr/bin/env python3
"""experiments/verb_compare.py (a device program's verbs measured against the simulator's, step by
step) on traces made here: the simulator's own trace read as a measured one must match itself to the
nanosecond, and a hand-made measured trace (two calls, the GPU's 'advance' verb the simulator has no
slice for, a slower wait) must come out with its own medians beside the simulator's.
Needs the built symmcoll (SYMMCOLL, default build/apps/symmcoll)."""

import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "experiments", "verb_compare.py")
SYMMCOLL = os.environ.get("SYMMCOLL", os.path.join(ROOT, "build", "apps", "symmcoll"))
NAME = "all_reduce.all_reduce.st_reduce.bf16.4K.graph.json"


def compare(trace, out_csv):
    r = subprocess.run([sys.executable, TOOL, trace, "--machine", "h200x2", "--symmcoll", SYMMCOLL, "--csv", out_csv],
                       capture_output=True, text=True)
    if r.returncode:
        raise AssertionError(r.stdout + r.stderr)
    with open(out_csv) as f:
        return list(csv.DictReader(f))


class VerbCompare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def sim_trace(self, path):
        subprocess.run([SYMMCOLL, "run", "--machine", "h200x2", "--op", "all_reduce", "--algo", "st_reduce", "--bytes",
                        "4K", "--blocks", "2", "--timing-only", "--trace", path], check=True, capture_output=True)

    def test_the_simulators_own_trace_matches_itself(self):
        path = os.path.join(self.dir, NAME)
        self.sim_trace(path)
        rows = compare(path, os.path.join(self.dir, "o.csv"))
        verbs = [r["verb"] for r in rows if r["step"]]
        self.assertEqual(verbs, ["advance", "copy", "copy", "signal.release", "wait.acquire", "reduce"])
        for r in rows:
            self.assertEqual(float(r["sim_minus_meas_us"]), 0.0, r)
        # The first copy holds its block until its first reach to a peer (peer_kernel_us): its
        # step is longer than the second copy's, which the slice alone would not show.
        self.assertGreater(float(rows[1]["simulated_us"]), float(rows[2]["simulated_us"]))

    def test_a_measured_trace_keeps_its_own_steps_and_medians(self):
        sim_rows = compare(self.own(NAME), os.path.join(self.dir, "s.csv"))
        # Two calls, two ranks, two blocks; each block: advance 0.2, copy 0.5, copy 0.3, release
        # 0.4, wait (1.0 in call 0, 3.0 in call 1), reduce 0.3 us.
        events = []
        for call in range(2):
            for pid in (1, 2):
                for tid in (1, 2):
                    t = 100.0 * call
                    steps = [("advance", 0.2), ("copy", 0.5), ("copy", 0.3), ("signal.release", 0.4),
                             ("wait.acquire", 1.0 + 2.0 * call), ("reduce", 0.3)]
                    total = sum(d for _, d in steps)
                    events.append({"name": "block", "ph": "X", "pid": pid, "tid": tid, "ts": t, "dur": total,
                                   "args": {"call": call}})
                    for name, d in steps:
                        events.append({"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": t, "dur": d,
                                       "args": {"call": call}})
                        t += d
        path = os.path.join(self.dir, "m", NAME)
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        rows = compare(path, os.path.join(self.dir, "m.csv"))
        by_step = [(r["verb"], r["measured_us"], r["simulated_us"]) for r in rows if r["step"]]
        self.assertEqual(by_step[0][:2], ("advance", "0.200"))
        self.assertEqual([v for v, _, _ in by_step[1:]], ["copy", "copy", "signal.release", "wait.acquire", "reduce"])
        self.assertEqual(by_step[4][1], "2.000")  # the wait's median over 1.0 and 3.0
        # The simulated column is the simulator's own, step for step (the advance a local load there).
        self.assertEqual([s for _, _, s in by_step], [r["simulated_us"] for r in sim_rows if r["step"]])
        block = [r for r in rows if r["verb"] == "(block: start to end)"][0]
        self.assertEqual(block["measured_us"], "3.700")

    def test_a_folder_becomes_a_table_and_the_papers_summary(self):
        d = os.path.dirname(self.own(NAME))
        md, tex = os.path.join(self.dir, "verbs.md"), os.path.join(self.dir, "verbs.tex")
        for args in ([d, "--machine", "h200x2", "--table", md],
                     ["2 ranks=" + md, "--machine", "-", "--paper-table", tex]):
            subprocess.run([sys.executable, TOOL, *args, "--symmcoll", SYMMCOLL], check=True, capture_output=True)
        with open(md) as f:
            text = f.read()
        # One case of six verbs, each matching itself: every per-verb median error is zero.
        self.assertIn("| signal.release | 1 |", text)
        self.assertEqual(text.count("| +0.000 |"), 5 + 6 + 2, text)  # 5 verbs summed up, 6 steps, block, call
        with open(tex) as f:
            t = f.read()
        self.assertIn("\\texttt{wait.acquire} &", t)
        self.assertIn("\\begin{table*}", t)

    def test_a_stamps_cost_is_the_traced_call_over_the_timed_one(self):
        # One graph trace of 2 blocks x 4 verbs (6 stamps a block), a call span of 10 us; the timed
        # row beside it 9.5 us, of which h200x2.ini's launch_graph_us is launch.
        traces = os.path.join(self.dir, "run", "traces")
        os.makedirs(traces)
        events = []
        for tid in (1, 2):
            events.append({"name": "block", "ph": "X", "pid": 1, "tid": tid, "ts": 0.0, "dur": 10.0, "args": {"call": 0}})
            for k, name in enumerate(("advance", "copy", "signal.release", "wait.acquire")):
                events.append({"name": name, "ph": "X", "pid": 1, "tid": tid, "ts": 2.5 * k, "dur": 2.5,
                               "args": {"call": 0}})
        with open(os.path.join(traces, NAME), "w") as f:
            json.dump({"traceEvents": events}, f)
        with open(os.path.join(self.dir, "run", "bench_x.csv"), "w") as f:
            f.write("# a comment\nalgo,bytes,graph,time_us_median\nall_reduce.st_reduce,4096,1,9.5\n"
                    "all_reduce.st_reduce,4096,0,12.0\n")
        out = os.path.join(self.dir, "cost.md")
        subprocess.run([sys.executable, TOOL, traces, "--machine", "h200x2", "--stamp-cost", out], check=True,
                       capture_output=True)
        with open(os.path.join(ROOT, "experiments", "machines", "h200x2.ini")) as f:
            launch = next(float(x.split("=")[1].split("#")[0]) for x in f if x.startswith("launch_graph_us"))
        with open(out) as f:
            text = f.read()
        self.assertIn(f"| all_reduce.st_reduce | 4K | 10.000 | 9.500 | 6 | {(10.0 - (9.5 - launch)) / 6:+.3f} |", text)

    def own(self, name):
        path = os.path.join(self.dir, "own", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.sim_trace(path)
        return path


if __name__ == "__main__":
    unittest.main()

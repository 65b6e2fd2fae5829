#!/usr/bin/env python3
"""A device program's verbs, measured against the simulator's, step by step.

    experiments/verb_compare.py TRACE.json --machine MACHINE [--symmcoll build/apps/symmcoll] [--csv OUT]

TRACE.json (or .json.xz) is a measured device-program trace from `symmcoll bench --backend cuda ... --trace DIR`
(DIR/<op>.<algo>.<dtype>.<size>.<graph|eager>.json: every block's verbs stamped inside the kernel,
backends/cuda/verb_trace.h). This runs the same call on the simulator (`symmcoll run --timing-only
--trace` on experiments/machines/MACHINE.ini at the trace's world, block count, size and launch
mode) and prints, for each step of a block's program, the verb's measured duration (median over
calls, ranks and blocks, with p10 and p90) beside the simulator's (median over ranks and blocks).
A verb's span means the same on both sides: from the block's entry into it to its entry into the
next (the simulator's slices are read that way, so a block held between two verbs counts in the
first; stores are posted: a copy's span is its loads and the issue of its stores; their landing
shows in the release that follows). `advance` (the epoch counter) has no slice in the simulator
and is listed as measured only. Also: the block from its start to its end, and the call from the
earliest block start to the latest block end (no launch on either side: the stamps are inside the
kernel).
"""
import argparse
import csv
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_VERBS = {"block", "flag seen", "packets seen", "call"}


def parse_name(path):
    """<op>.<algo id>.<dtype>.<size>.<mode>.json -> (op, algo, dtype, size, mode)."""
    parts = os.path.basename(path).removesuffix(".xz").split(".")
    if len(parts) < 7 or parts[-1] != "json" or parts[-2] not in ("graph", "eager"):
        raise SystemExit(f"{path}: not a trace of bench --trace (<op>.<algo>.<dtype>.<size>.<graph|eager>.json)")
    return parts[0], ".".join(parts[1:-4]), parts[-4], parts[-3], parts[-2]


def block_verbs(events, per_call):
    """{(rank, block, call): [(name, dur_us)]} of the block tracks, in time order; and the blocks'
    and calls' spans."""
    seqs, blocks, calls, ends = {}, [], {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        tid, pid, name = e["tid"], e["pid"], e["name"]
        args = e.get("args", {})
        call = args.get("call", 0) if per_call else 0
        if tid >= 999:
            continue
        key = (pid - 1, tid - 1, call)
        if name == "block":
            blocks.append(e["dur"])
            ends[key] = e["ts"] + e["dur"]
            lo, hi = calls.get((pid, call), (e["ts"], e["ts"] + e["dur"]))
            calls[(pid, call)] = (min(lo, e["ts"]), max(hi, e["ts"] + e["dur"]))
            continue
        if name in NOT_VERBS or e["dur"] == 0 and name.endswith("seen"):
            continue
        seqs.setdefault(key, []).append((e["ts"], name, e["dur"]))
    # A verb lasts from its start to the next verb's (the block's end for the last): the measured
    # spans are that by construction; the simulator's slices end when the verb's own work does, and
    # a block held between verbs (its first reach to a peer, peer_kernel_us) shows in the gap.
    for k, seq in seqs.items():
        seq.sort()
        stops = [t for t, _, _ in seq[1:]] + [ends.get(k, seq[-1][0] + seq[-1][2])]
        seqs[k] = [(n, stop - t) for (t, n, _), stop in zip(seq, stops)]
    return seqs, blocks, [hi - lo for lo, hi in calls.values()]


def steps(seqs):
    """Per step index: the verb's name (the most common at that step) and every duration."""
    out = []
    for seq in seqs.values():
        for i, (name, dur) in enumerate(seq):
            if i == len(out):
                out.append({})
            out[i].setdefault(name, []).append(dur)
    return [max(d.items(), key=lambda kv: len(kv[1])) for d in out]


def quant(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--machine", required=True, help="a name from experiments/machines/ or a path to an .ini")
    ap.add_argument("--symmcoll", default=os.path.join(ROOT, "build", "apps", "symmcoll"))
    ap.add_argument("--csv", help="also write the table here")
    a = ap.parse_args()
    op, algo, dtype, size, mode = parse_name(a.trace)
    with (lzma.open if a.trace.endswith(".xz") else open)(a.trace, "rt") as f:
        meas = json.load(f)["traceEvents"]
    ranks = {e["pid"] for e in meas if e.get("ph") == "X"}
    nblocks = max((e["tid"] for e in meas if e.get("ph") == "X" and e["tid"] < 999), default=0)
    if not nblocks:
        raise SystemExit(f"{a.trace}: no block tracks (a host plan's trace? this compares device programs)")
    with tempfile.TemporaryDirectory() as tmp:
        sim_path = os.path.join(tmp, "sim.json")
        cmd = [a.symmcoll, "run", "--machine", a.machine, "--op", op, "--algo", algo, "--dtype", dtype, "--bytes",
               size, "--blocks", str(nblocks), "--mode", mode, "--world", str(len(ranks)), "--timing-only",
               "--trace", sim_path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(" ".join(cmd) + " failed:\n" + r.stdout + r.stderr)
        with open(sim_path) as f:
            sim = json.load(f)["traceEvents"]
    m_seqs, m_blocks, m_calls = block_verbs(meas, True)
    s_seqs, s_blocks, s_calls = block_verbs(sim, False)
    # Pair the steps in order by name; measured verbs the simulator has no slice for stand alone.
    m_steps, s_steps = steps(m_seqs), steps(s_seqs)
    rows, j = [], 0
    for name, durs in m_steps:
        sim_d = None
        if j < len(s_steps) and s_steps[j][0] == name:
            sim_d = statistics.median(s_steps[j][1])
            j += 1
        rows.append((name, durs, sim_d))
    for name, durs in s_steps[j:]:
        rows.append((name, [], statistics.median(durs)))
    rows.append(("(block: start to end)", m_blocks, statistics.median(s_blocks)))
    rows.append(("(call: first start to last end)", m_calls, statistics.median(s_calls)))
    print(f"{op} {algo} {dtype} {size} {mode}: world {len(ranks)}, {nblocks} blocks; measured {a.trace}, "
          f"simulated on {a.machine}")
    print()
    print("| step | verb | measured median us | p10 | p90 | simulated us | sim - meas |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    table = []
    for i, (name, durs, sim_d) in enumerate(rows):
        med = statistics.median(durs) if durs else None
        cells = [f"{med:.3f}" if med is not None else "-", f"{quant(durs, 0.1):.3f}" if durs else "-",
                 f"{quant(durs, 0.9):.3f}" if durs else "-", f"{sim_d:.3f}" if sim_d is not None else "-",
                 f"{sim_d - med:+.3f}" if med is not None and sim_d is not None else "-"]
        step = str(i + 1) if not name.startswith("(") else ""
        print(f"| {step} | {name} | " + " | ".join(cells) + " |")
        table.append([step, name] + cells)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "verb", "measured_us", "p10_us", "p90_us", "simulated_us", "sim_minus_meas_us"])
            w.writerows(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

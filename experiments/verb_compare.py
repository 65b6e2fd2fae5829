#!/usr/bin/env python3
"""A device program's verbs, measured against the simulator's, step by step.

    experiments/verb_compare.py TRACE.json --machine MACHINE [--symmcoll build/apps/symmcoll] [--csv OUT]
    experiments/verb_compare.py DIR --machine MACHINE --table OUT.md [--mode graph|eager] [--title T]

TRACE.json (or .json.xz) is a measured device-program trace from `symmcoll bench --backend cuda ... --trace DIR`
(DIR/<op>.<algo>.<dtype>.<size>.<graph|eager>.json: every block's verbs stamped inside the kernel,
backends/cuda/verb_trace.h). This runs the same call on the simulator (`symmcoll run --timing-only
--trace` on experiments/machines/MACHINE.ini at the trace's world, block count, size and launch
mode) and prints, for each step of a block's program, the verb's measured duration (median over
calls, ranks and blocks, with p10 and p90) beside the simulator's (median over ranks and blocks).
A verb's span means the same on both sides: from the block's entry into it to its entry into the
next (the simulator's slices are read that way, so a block held between two verbs counts in the
first; stores are posted: a copy's span is its loads and the issue of its stores; their landing
shows in the release that follows). `advance` (the epoch counter) is a local load in the simulator.
Also: the block from its start to its end, and the call from the
earliest block start to the latest block end (no launch on either side: the stamps are inside the
kernel). A calibration microbenchmark's trace (`symmcoll calibrate --backend cuda --trace DIR`,
calibrate.<row>.bf16.n16.<mode>.json) has no call to simulate: its steps are printed measured only.

With --table, every trace of one launch mode in DIR: a summary per verb (the median over the cases
of simulated - measured: where the model's time goes wrong, mechanism by mechanism) and each
case's steps, as markdown (`make experiments` writes experiments/tables/verbs_<machine>.md).
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
    if len(parts) < 6 or parts[-1] != "json" or parts[-2] not in ("graph", "eager"):
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
        seqs.setdefault(key, []).append((e["ts"], name, e["dur"], args))
    # A verb lasts from its start to the next verb's (the block's end for the last): the measured
    # spans are that by construction; the simulator's slices end when the verb's own work does, and
    # a block held between verbs (its first reach to a peer, peer_kernel_us) shows in the gap.
    for k, seq in seqs.items():
        seq.sort(key=lambda x: x[0])
        stops = [x[0] for x in seq[1:]] + [ends.get(k, seq[-1][0] + seq[-1][2])]
        seqs[k] = [(kind(seq, i), stop - x[0]) for i, (x, stop) in enumerate(zip(seq, stops))]
    return seqs, blocks, [hi - lo for lo, hi in calls.values()]


def kind(seq, i):
    """The verb's name, with what sets its cost apart where the trace says it: a release that fenced
    or reused the block's last fence, a copy or reduce with a source in a peer's memory or none (its
    destination may be either: a push to a peer is a copy of an own source)
    (measured traces: their "fence" and "remote" arguments), a signal or wait right after another
    (a flag to the next peer; a flag that has usually arrived by then)."""
    name, args = seq[i][1], seq[i][3]
    fence = args.get("fence")
    after_same = i > 0 and seq[i - 1][1] == name
    if name in ("copy", "reduce") and "remote" in args:
        return name + (" (peer source)" if args["remote"] else " (own source)")
    if name.startswith("signal"):
        q = [] if fence is None else ["fence" if fence else "no fence"]
        if after_same:
            q.append("next")
        return name + (f" ({', '.join(q)})" if q else "")
    if name.startswith("wait") and after_same:
        return name + " (next)"
    return name


def base(name):
    return name.split(" (")[0]


def steps(seqs):
    """Per step index: the verb's name (the most common at that step) and every duration. Ranks
    whose programs differ (a ping-pong's two sides) count at a step only where their verb is that one."""
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


def compare(trace, machine, symmcoll):
    """(op, algo, size, mode, world, blocks, rows): rows are (verb, measured durations, simulated
    median or None), the steps first, then the block and the call."""
    op, algo, dtype, size, mode = parse_name(trace)
    with (lzma.open if trace.endswith(".xz") else open)(trace, "rt") as f:
        meas = json.load(f)["traceEvents"]
    ranks = {e["pid"] for e in meas if e.get("ph") == "X"}
    nblocks = max((e["tid"] for e in meas if e.get("ph") == "X" and e["tid"] < 999), default=0)
    if not nblocks:
        raise SystemExit(f"{trace}: no block tracks (a host plan's trace? this compares device programs)")
    m_seqs, m_blocks, m_calls = block_verbs(meas, True)
    if op == "calibrate":  # a calibration microbenchmark (calibrate --trace): no call to simulate
        rows = [(name, durs, None) for name, durs in steps(m_seqs)]
        rows.append(("(block: start to end)", m_blocks, None))
        rows.append(("(call: first start to last end)", m_calls, None))
        return op, algo, size, mode, len(ranks), nblocks, rows
    with tempfile.TemporaryDirectory() as tmp:
        sim_path = os.path.join(tmp, "sim.json")
        cmd = [symmcoll, "run", "--machine", machine, "--op", op, "--algo", algo, "--dtype", dtype, "--bytes",
               size, "--blocks", str(nblocks), "--mode", mode, "--world", str(len(ranks)), "--timing-only",
               "--trace", sim_path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(" ".join(cmd) + " failed:\n" + r.stdout + r.stderr)
        with open(sim_path) as f:
            sim = json.load(f)["traceEvents"]
    s_seqs, s_blocks, s_calls = block_verbs(sim, False)
    # Pair the steps in order by name; measured verbs the simulator has no slice for stand alone.
    m_steps, s_steps = steps(m_seqs), steps(s_seqs)
    rows, j = [], 0
    for name, durs in m_steps:
        sim_d = None
        if j < len(s_steps) and base(s_steps[j][0]) == base(name):
            sim_d = statistics.median(s_steps[j][1])
            j += 1
        rows.append((name, durs, sim_d))
    for name, durs in s_steps[j:]:
        rows.append((name, [], statistics.median(durs)))
    rows.append(("(block: start to end)", m_blocks, statistics.median(s_blocks)))
    rows.append(("(call: first start to last end)", m_calls, statistics.median(s_calls)))
    return op, algo, size, mode, len(ranks), nblocks, rows


def cells(durs, sim_d):
    med = statistics.median(durs) if durs else None
    return [f"{med:.3f}" if med is not None else "-", f"{quant(durs, 0.1):.3f}" if durs else "-",
            f"{quant(durs, 0.9):.3f}" if durs else "-", f"{sim_d:.3f}" if sim_d is not None else "-",
            f"{sim_d - med:+.3f}" if med is not None and sim_d is not None else "-"]


def size_bytes(size):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)


def table(directory, machine, symmcoll, mode, out, title):
    """Every trace of `mode` in `directory`: a summary per verb (the median over cases of simulated
    - measured) and each case's steps."""
    names = sorted(n for n in os.listdir(directory) if n.endswith((f".{mode}.json", f".{mode}.json.xz")))
    if not names:
        raise SystemExit(f"{directory}: no {mode} traces")
    cases = [compare(os.path.join(directory, n), machine, symmcoll) for n in names]
    cases.sort(key=lambda c: (c[0], c[1], size_bytes(c[2])))
    by_verb = {}
    for _, _, _, _, _, _, rows in cases:
        for name, durs, sim_d in rows:
            if durs and sim_d is not None and not name.startswith("("):
                by_verb.setdefault(name, []).append((statistics.median(durs), sim_d))
            if durs and sim_d is None:
                by_verb.setdefault(name, []).append((statistics.median(durs), None))
    rel = os.path.relpath(directory, ROOT)
    lines = [f"# {title}", "",
             f"Every block's verbs stamped inside the kernel on the GPU (`symmcoll bench --backend cuda --trace`, "
             f"backends/cuda/verb_trace.h: {rel}/, {mode} calls) beside the same call simulated on "
             f"experiments/machines/{machine}.ini (`symmcoll run --trace`). A verb's time is from the block's entry "
             "into it to its entry into the next, on both sides (experiments/verb_compare.py); measured: the median "
             "over calls, ranks and blocks, each verb with one stamp's cost in it (--stamp-cost). Generated by experiments/verb_compare.py; do not edit.",
             "",
             "## Per verb, over the cases below", "",
             "| verb | cases | measured median us | simulated median us | median of sim - meas |",
             "|---|---:|---:|---:|---:|"]
    for name in sorted(by_verb, key=lambda n: -len(by_verb[n])):
        pairs = by_verb[name]
        meas = statistics.median(m for m, _ in pairs)
        sims = [s for _, s in pairs if s is not None]
        diffs = [s - m for m, s in pairs if s is not None]
        lines.append(f"| {name} | {len(pairs)} | {meas:.3f} | " +
                     (f"{statistics.median(sims):.3f} | {statistics.median(diffs):+.3f} |" if sims else "- | - |"))
    lines += ["", "## Each case", "",
              "| algorithm | size | blocks | step | verb | measured median us | p10 | p90 | simulated us | sim - meas |",
              "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for op, algo, size, _, world, blocks, rows in cases:
        for i, (name, durs, sim_d) in enumerate(rows):
            step = str(i + 1) if not name.startswith("(") else ""
            lines.append(f"| {algo} | {size} | {blocks} | {step} | {name} | " + " | ".join(cells(durs, sim_d)) + " |")
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)


def summary(md):
    """The per-verb summary of a table this script wrote: [(verb, cases, measured, simulated, diff)]."""
    out, on = [], False
    with open(md) as f:
        for line in f:
            if line.startswith("## "):
                on = line.startswith("## Per verb")
                continue
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if on and len(c) == 5 and c[1].isdigit():
                out.append(tuple(c))
    if not out:
        raise SystemExit(f"{md}: no per-verb summary (not a table of experiments/verb_compare.py --table)")
    return out


def paper_table(out, tables):
    """The paper's table: the per-verb summaries of `tables` ((label, md) pairs) side by side."""
    sums = [(label, {r[0]: r for r in summary(md)}) for label, md in tables]
    verbs = []
    for _, s in sums:
        verbs += [v for v in s if v not in verbs]
    n = len(sums)
    lines = ["% Generated by experiments/verb_compare.py --paper-table from " +
             ", ".join(os.path.relpath(md, ROOT) for _, md in tables) + "; do not edit.",
             "\\begin{table*}[t]", "\\centering", "\\small" if len(sums) < 3 else "\\footnotesize",
             "\\begin{tabular}{l" + "rrr" * n + "}", "\\toprule",
             " & " + " & ".join(f"\\multicolumn{{3}}{{c}}{{{label}}}" for label, _ in sums) + " \\\\",
             "verb" + " & meas. & sim. & sim$-$meas." * n + " \\\\", "\\midrule"]
    for v in verbs:
        cells = []
        for _, s in sums:
            r = s.get(v)
            cells += [r[2], r[3], r[4].replace("+", "$+$").replace("-", "$-$") if r[4] != "-" else "--"] if r else \
                ["--"] * 3
            cells = [x if x != "-" else "--" for x in cells]
        name = v.replace("_", "\\_")
        lines.append(f"\\texttt{{{name}}} & " + " & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}",
              "\\caption{Device programs verb by verb on H100s and H200s over NVLink (CUDA graph, 4 and 64\\,KiB): each "
              "verb's time measured inside the kernel (\\texttt{bench --trace}: every block stamps its entry into "
              "each verb, and each measured verb carries one stamp's cost) and simulated, in \\textmu s, the median over the traced cases of each; the last column is "
              "the median over cases of the difference. Per case: \\texttt{experiments/tables/verbs\\_<machine>.md}.}",
              "\\label{tab:verbs}", "\\end{table*}"]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def stamp_cost(directory, machine, out):
    """What tracing costs a call: each graph trace's call span (first block start to last block end,
    no launch) against the same case's timed, untraced median (the bench CSVs beside the traces,
    DIR/../bench_*.csv) less the machine file's launch_graph_us, per stamp the trace made."""
    timed = {}
    for path in sorted(os.listdir(os.path.join(directory, os.pardir))):
        if path.startswith("bench_") and path.endswith(".csv"):
            with open(os.path.join(directory, os.pardir, path)) as f:
                for r in csv.DictReader(line for line in f if not line.startswith("#")):
                    if r["graph"] == "1":
                        timed[(r["algo"], int(r["bytes"]))] = float(r["time_us_median"])
    ini = machine if machine.endswith(".ini") else os.path.join(ROOT, "experiments", "machines", machine + ".ini")
    with open(ini) as f:
        launch = next(float(line.split("=")[1].split("#")[0]) for line in f if line.startswith("launch_graph_us"))
    lines = [f"Tracing's cost per stamp: {os.path.relpath(directory, ROOT)}, graph calls; launch_graph_us "
             f"{launch:.3f} from {os.path.relpath(ini, ROOT)}. Generated by experiments/verb_compare.py "
             "--stamp-cost.", "",
             "| algorithm | size | traced call us | timed us | stamps a block | per stamp us |",
             "|---|---:|---:|---:|---:|---:|"]
    per = []
    for n in sorted(os.listdir(directory)):
        if not n.endswith((".graph.json", ".graph.json.xz")):
            continue
        _, algo, _, size, _ = parse_name(n)
        t = timed.get((algo, size_bytes(size)))
        if t is None:
            continue
        with (lzma.open if n.endswith(".xz") else open)(os.path.join(directory, n), "rt") as f:
            events = json.load(f)["traceEvents"]
        seqs, _, call_spans = block_verbs(events, True)
        stamps = statistics.median(len(v) for v in seqs.values()) + 2  # the verbs, the start, the end
        call = statistics.median(call_spans)
        per.append((call - (t - launch)) / stamps)
        lines.append(f"| {algo} | {size} | {call:.3f} | {t:.3f} | {stamps:g} | {per[-1]:+.3f} |")
    if not per:
        raise SystemExit(f"{directory}: no graph trace with a timed row beside it")
    lines += ["", f"Per stamp: median {statistics.median(per):+.3f} us, from {min(per):+.3f} to {max(per):+.3f} "
              f"over {len(per)} cases (negative: the traced call ran faster than the timed one less its launch)."]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="a trace, or with --table a folder of them")
    ap.add_argument("--machine", required=True,
                    help="a name from experiments/machines/ or a path to an .ini (unused with --paper-table)")
    ap.add_argument("--symmcoll", default=os.path.join(ROOT, "build", "apps", "symmcoll"))
    ap.add_argument("--csv", help="also write the table here")
    ap.add_argument("--table", metavar="OUT.md", help="TRACE is a folder: every trace of --mode in it, one table")
    ap.add_argument("--mode", default="graph", choices=("graph", "eager"), help="with --table")
    ap.add_argument("--title", default="Device programs verb by verb: measured and simulated")
    ap.add_argument("--paper-table", metavar="OUT.tex",
                    help="TRACE is LABEL=TABLE.md[,LABEL=TABLE.md...]: their per-verb summaries as one LaTeX table")
    ap.add_argument("--stamp-cost", metavar="OUT.md",
                    help="TRACE is a folder of graph traces with the bench CSVs one folder up: what a stamp costs")
    a = ap.parse_args()
    if a.stamp_cost:
        stamp_cost(a.trace, a.machine, a.stamp_cost)
        return 0
    if a.paper_table:
        paper_table(a.paper_table, [tuple(x.split("=", 1)) for x in a.trace.split(",")])
        return 0
    if a.table:
        table(a.trace, a.machine, a.symmcoll, a.mode, a.table, a.title)
        return 0
    op, algo, size, mode, world, nblocks, rows = compare(a.trace, a.machine, a.symmcoll)
    sim = "measured only (a calibration microbenchmark)" if op == "calibrate" else f"simulated on {a.machine}"
    print(f"{op} {algo} {size} {mode}: world {world}, {nblocks} blocks; measured {a.trace}, {sim}")
    print()
    print("| step | verb | measured median us | p10 | p90 | simulated us | sim - meas |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    table_rows = []
    for i, (name, durs, sim_d) in enumerate(rows):
        step = str(i + 1) if not name.startswith("(") else ""
        c = cells(durs, sim_d)
        print(f"| {step} | {name} | " + " | ".join(c) + " |")
        table_rows.append([step, name] + c)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "verb", "measured_us", "p10_us", "p90_us", "simulated_us", "sim_minus_meas_us"])
            w.writerows(table_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""One host-plan call, measured on the GPU and simulated, as two timelines on one time axis.

  timeline.py MEASURED.json SIMULATED.json OUT.png [--table OUT.md] [--title TEXT]

MEASURED.json: `symmcoll bench --backend cuda ... --trace DIR` (a CUDA-graph call: the verbs'
spans between CUDA events on their streams); SIMULATED.json: `symmcoll run ... --trace` of the
same call on the machine file. Both use the simulator's trace format (a process per rank, a track
per stream, tid 1000 + stream; the simulator adds copy-engine tracks, tid 1100 + engine). Each
panel shows one rank: in each trace the rank whose first piece of work (a GEMM, a copy, a kernel)
started earliest after its call's start, i.e. the one that waited least for its peers at the
entry (the ranks' clocks are not one clock, and a rank whose launch came late makes its peer wait
at the entry; that wait is not the call's own time).

The table (--table) pairs the k-th verb of each name on each stream in both traces (launch,
copy_engine, gemm, wait_flag, write_flag) and gives the measured and the simulated duration, and
their ratio: where the model's time goes wrong, verb by verb.
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
                     "ytick.labelsize": 7})
SAVE = dict(dpi=200, metadata={"Software": None})  # no dates: re-running writes the same bytes
VERBS = ("gemm", "copy_engine", "launch", "wait_flag", "write_flag")
COLORS = {"gemm": "C0", "copy_engine": "C1", "launch": "C2", "wait_flag": "0.75", "write_flag": "C3"}
STREAM_TID, CE_TID = 1000, 1100


def load(path):
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def work_start(events, pid):
    starts = [e["ts"] for e in events if e["pid"] == pid and e["name"] in ("gemm", "copy_engine", "launch")
              and STREAM_TID <= e["tid"] < CE_TID]
    return min(starts) if starts else float("inf")


def pick_rank(events):
    """The pid whose first piece of work started earliest (it waited least at the entry)."""
    pids = sorted({e["pid"] for e in events})
    return min(pids, key=lambda p: (work_start(events, p), p))


def spans(events, pid):
    """(track label, name, start, duration, args) of one rank's verbs, streams then copy engines."""
    out = []
    for e in events:
        if e["pid"] != pid or e["name"] not in VERBS or e["tid"] < STREAM_TID:
            continue
        tid = e["tid"]
        label = "stream %d" % (tid - STREAM_TID) if tid < CE_TID else "copy engine %d" % (tid - CE_TID)
        out.append((label, e["name"], e["ts"], e["dur"], e.get("args", {})))
    return out


def track_order(labels):
    return sorted(set(labels), key=lambda s: (s.startswith("copy engine"), int(s.split()[-1])))


def draw(measured, simulated, out, title, mode="CUDA graph"):
    panels = [("measured (GPU, %s)" % mode, measured), ("simulated", simulated)]
    tracks = [track_order([s[0] for s in spans(ev, pick_rank(ev))]) for _, ev in panels]
    heights = [max(len(t), 1) + 1 for t in tracks]
    fig, axes = plt.subplots(2, 1, figsize=(7.0, 0.45 * sum(heights) + 1.0), sharex=True,
                             gridspec_kw={"height_ratios": heights})
    end = 0.0
    for ax, (name, ev), order in zip(axes, panels, tracks):
        pid = pick_rank(ev)
        row = {t: i for i, t in enumerate(order)}
        for label, verb, ts, dur, _ in spans(ev, pid):
            y = row[label]
            ax.barh(y, max(dur, 0.4), left=ts, height=0.6, color=COLORS[verb], edgecolor="white", linewidth=0.6)
            end = max(end, ts + dur)
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels(order)
        ax.invert_yaxis()
        ax.set_title("%s: rank %d" % (name, pid - 1), loc="left")
        ax.grid(axis="x", color="0.9")
        ax.set_axisbelow(True)
    axes[-1].set_xlim(0, end * 1.02)
    axes[-1].set_xlabel("us from the rank's call start")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[v]) for v in VERBS]
    axes[0].legend(handles, VERBS, ncol=len(VERBS), loc="lower right", bbox_to_anchor=(1.0, 1.08), frameon=False,
                   fontsize=7)
    if title:
        fig.suptitle(title, x=0.01, ha="left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, **SAVE)


def paired(measured, simulated):
    """(track, verb, k, measured us, simulated us) for the k-th verb of each name on each stream."""
    def index(events):
        pid = pick_rank(events)
        seen, out = {}, {}
        for label, verb, ts, dur, _ in sorted(spans(events, pid), key=lambda s: s[2]):
            if not label.startswith("stream"):
                continue
            k = seen.get((label, verb), 0)
            seen[(label, verb)] = k + 1
            out[(label, verb, k)] = dur
        return out
    m, s = index(measured), index(simulated)
    return [(key, m[key], s[key]) for key in sorted(m, key=lambda k: (k[0], k[2], k[1])) if key in s]


def table(measured, simulated, out, mpath, spath):
    rows = paired(measured, simulated)
    lines = ["# One call, measured and simulated, verb by verb", "",
             "Generated by plots/timeline.py from `%s` (measured) and `%s` (simulated); do not edit. The "
             "k-th verb of each name on each stream of the rank that waited least at the entry, in both; "
             "sim / meas < 1: the simulator is optimistic." % (mpath, spath), "",
             "| stream | verb | k | measured us | simulated us | sim / meas |", "|---|---|---:|---:|---:|---:|"]
    for (track, verb, k), mu, su in rows:
        ratio = "%.2f" % (su / mu) if mu > 0 else "-"
        lines.append("| %s | %s | %d | %.1f | %.1f | %s |" % (track, verb, k, mu, su, ratio))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measured")
    ap.add_argument("simulated")
    ap.add_argument("out")
    ap.add_argument("--table")
    ap.add_argument("--title", default="")
    a = ap.parse_args(argv)
    measured, simulated = load(a.measured), load(a.simulated)
    for path, ev in ((a.measured, measured), (a.simulated, simulated)):
        if not any(e["name"] in VERBS for e in ev):
            sys.exit("timeline.py: %s has no verb spans (launch, copy_engine, gemm, flags)" % path)
    draw(measured, simulated, a.out, a.title, "eager" if ".eager." in os.path.basename(a.measured) else "CUDA graph")
    if a.table:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        table(measured, simulated, a.table, os.path.relpath(a.measured, root), os.path.relpath(a.simulated, root))


if __name__ == "__main__":
    main(sys.argv[1:])

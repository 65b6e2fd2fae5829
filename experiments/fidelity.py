#!/usr/bin/env python3
"""Held-out validation of the simulator: predict every committed GPU row of one machine.

    experiments/fidelity.py MACHINE [--symmcoll build/apps/symmcoll] [--out experiments/tables/fidelity_MACHINE.md]
  experiments/fidelity.py --fit-pooled X   the bench keys fitted on every row of both machines

Beside the table, fidelity_MACHINE.csv: every predicted row with its held-out predictions (leave
one algorithm out, leave one machine out) and fold, read by plots/plot.py's measured figure.

Every committed GPU row of experiments/results/MACHINE/ (and its round_*/ folders, plots/data.py
result_csvs) that runs one of our algorithms (NCCL's rows
and the fused operations' baselines are not ours to predict) is predicted by `symmcoll sweep
--timing-only` on experiments/machines/MACHINE.ini at the row's world, block count (fused: M, N, K)
and launch mode: the bench CSVs (every *.csv but tune_* and calibrate_*; where runs overlap, each
cell from the newest run, plots/data.py measured_rows), the block-count sweeps (tune_*.csv) and the
fused operations' rows (ag_mm, mm_rs). None of these rows is used by the fit (`symmcoll fit` reads
only calibration microbenchmarks).
Reports the median and max of |pred - meas| / meas overall, per op, per algorithm, per size band
and per launch mode, and lists every row beyond 20%. Needs numpy for the bench keys' fits (Debian's python3-numpy).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import data  # noqa: E402
BANDS = [(0, 64 << 10, "<= 64K"), (64 << 10, 1 << 20, "64K-1M"), (1 << 20, 16 << 20, "1M-16M"),
         (16 << 20, 1 << 40, "> 16M")]
LIMIT = 0.20
# The targets: held-out median and max error, the ranking's share of cells, and leave one
# machine out's median (the summary JSON carries them to the paper's table, experiments/tables.py).
GOALS = {"median": 0.05, "max": LIMIT, "ranking": 0.90, "lomo_median": 0.10}


def band(b):
    for lo, hi, name in BANDS:
        if lo < b <= hi or (b == 0 and lo == 0):
            return name
    return "?"


def size(b):
    for unit, s in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b >= unit and b % unit == 0:
            return "%d%s" % (b // unit, s)
    return str(b)


# Plan changes the simulator runs but older GPU rows did not: (commit, what changed, {algorithm:
# which of its rows the change alters (a predicate on the row)}, or one predicate for every
# algorithm). A row measured at a commit
# before the change (its git_sha column not a descendant of it) that the change alters times a
# plan the simulator no longer has: it is listed, not predicted, and no fit sees it. Add a line
# whenever a commit changes what an algorithm enqueues, in commit order; changes before eadb0df are
# not listed. The device programs' own kernels count too (their timing moved by 5-23 % an algorithm
# where the same cells were measured before and after: experiments/results/h200x2/README.md,
# round_eeb23eb_sweep).
def _shard_above(limit):
    return lambda r: r["bytes"] // max(1, r["world"]) > limit


def _shard_below(limit):
    return lambda r: r["bytes"] // max(1, r["world"]) < limit


def _always(r):
    return True


def _eager_sharing_a_gpu(r):
    return not r.get("graph", 1) and r.get("gpu_ranks", 1) > 1


def _several_peers(r):
    return r["world"] > 2


def _world(w):
    return lambda r: r["world"] == w


def _band_tile_rows(r, rule):
    """The mm_rs tile programs' default band (tile rows of 128; the owner's tile rows: one band) of
    a row under `rule`: "world2" (until e29fa5c: bands at world 2 only, grid()'s own kMinBands = 8
    bands of at most 16 tile rows), "waves16" (e29fa5c) or "waves8" (51db5d9,
    MmRsTileLayout::default_band_rows). Blocks: 132 SMs, shared by a team's ranks on one GPU."""
    m, n, _ = r.get("mnk", (0, 0, 0))
    w = max(1, r["world"])
    nb = 132 // max(1, r.get("gpu_ranks", 1))
    tm, tn = (m // w + 127) // 128, (n + 127) // 128
    if rule == "world2":
        return max(1, min(tm // 8, 16)) if w == 2 and tm * tn >= 2 * 132 else tm
    per, waves, cap = w * tn, 3 * nb, 16 if rule == "waves16" else 8
    if rule == "waves8" and per * tm < 2 * waves:
        return tm
    band = max(1, min(-(-waves // per), cap))
    if tm // band < 2:
        return tm
    return min(-(-tm // (tm // band)), cap)


def _bands_moved(before, after):
    return lambda r: _band_tile_rows(r, before) != _band_tile_rows(r, after)


def _tile_bands(r):
    m, n, _ = r.get("mnk", (0, 0, 0))
    w = r["world"]
    return w == 2 and m and ((m // w + 127) // 128) * ((n + 127) // 128) >= 2 * 132


# The collectives' device programs measured on the GPUs (the LL ones have no barrier).
DEVICE_PROGRAMS = ["all_gather.st", "all_gather.ld", "all_gather.st_copy", "all_gather.st_ll",
                   "all_reduce.ld_reduce", "all_reduce.st_reduce", "all_reduce.rs_ld_ag_st", "all_reduce.rs_ld_ag_ld",
                   "all_reduce.st_ll_reduce", "reduce_scatter.ld_reduce", "reduce_scatter.st_ll_reduce"]

PLAN_CHANGES = [
    ("eadb0df", "all_gather ce_st / ce_sm_st copy their own slot by SMs (copy_local)",
     {"all_gather.ce_st": _always, "all_gather.ce_sm_st": _always}),
    ("2690712", "all_gather ce_st / ce_sm_st copy up to 128 MiB per copy (32 MiB before)",
     {"all_gather.ce_st": _shard_above(32 << 20), "all_gather.ce_sm_st": _shard_above(32 << 20)}),
    # A peer's chunks all on one side stream: differs only with several chunks per peer (the
    # all-gathers' 128 MiB chunks, the reduce-scatters' 4 MiB (ce_overlap) and 8 MiB (ce)).
    ("4f1e9e1", "a peer's chunks on one side stream (core/plan.h push_chunks)",
     {"all_gather.ce_st": _shard_above(128 << 20), "all_gather.ce_sm_st": _shard_above(128 << 20),
      "reduce_scatter.ce_st_chunk_reduce": _shard_above(4 << 20),
      "reduce_scatter.ce_st_ring_reduce": _shard_above(8 << 20),
      "ag_mm.ce_chunk_gemm": _always, "ag_mm.ce_bulk_gemm": _always, "ag_mm.ce_tile_gemm": _always}),
    # 64 blocks instead of 32 for a reduce of more than 32 x 256 KiB.
    ("b14f106", "the reduce that runs alone after the copies on up to 64 blocks",
     {"reduce_scatter.ce_st_ring_reduce": _shard_above(8 << 20), "mm_rs.gemm_ce_ring_reduce": _always}),
    ("c105723", "the fused plans' default chunk sizes",
     {"ag_mm.ce_chunk_gemm": _always, "ag_mm.ce_bulk_gemm": _always, "ag_mm.ce_tile_gemm": _always,
      "mm_rs.gemm_ce_tile_acc": _always, "mm_rs.gemm_ce_acc": _always}),
    ("a46a5bc", "ag_mm ce and tiles: half a shard per chunk, at least 2048 rows",
     {"ag_mm.ce_chunk_gemm": _always, "ag_mm.ce_tile_gemm": _always}),
    # Every peer's copies on the first side stream: with one peer (world 2) the same streams, but
    # for the mm_rs plans whose chunks alternated streams and ce_acc's waits (now the second).
    ("bcd3ca2", "every peer's copies on the first side stream (all_gather ce, ag_mm, mm_rs)",
     {"all_gather.ce_st": _several_peers, "ag_mm.ce_chunk_gemm": _several_peers,
      "ag_mm.ce_bulk_gemm": _several_peers, "ag_mm.ce_tile_gemm": _several_peers,
      "mm_rs.gemm_ce_ring_reduce": _several_peers, "mm_rs.gemm_ce_acc": _always, "mm_rs.gemm_ce_tile_acc": _always}),
    # At world 2 the LL reductions send packets to their peer only and read their own part as
    # plain data (at more ranks they still send it to themselves: f0c558d).
    ("0b93303", "world 2: the LL reductions read their own part as plain data (no packets to themselves)",
     {"all_reduce.st_ll_reduce": _world(2), "reduce_scatter.st_ll_reduce": _world(2)}),
    # The CUDA verbs every device program calls: a block's small reduces load all their sources
    # before the first add (7492238), the epoch counter stored after the next barrier a verb makes
    # anyway (5bb26ae) and read by every thread itself (bc41760; backends/cuda/block_ctx.cuh).
    ("bc41760", "CUDA device programs: the epoch advance without a barrier of its own, small reduces' loads first",
     {a: _always for a in DEVICE_PROGRAMS}),
    # A side stream forked and joined with no work (the second of the default three where the
    # plan's copies take one): gone, graph and eager alike (in a graph of many calls it had made
    # the graph grow as the square of its calls; experiments/results/h100x2/graph_edges_a5a9111).
    ("f605212", "plans fork and join only the side streams they use",
     {"all_gather.ce_st": _always, "all_gather.ce_sm_st": _shard_below(4 << 20),
      "reduce_scatter.ce_st_ring_reduce": _world(2), "reduce_scatter.ce_st_chunk_reduce": _world(2),
      "ag_mm.ce_chunk_gemm": _always, "ag_mm.ce_bulk_gemm": _always, "ag_mm.ce_tile_gemm": _always,
      "mm_rs.gemm_ce_ring_reduce": _always, "mm_rs.gemm_ce_tile_acc": _always}),
    # The mm_rs tile programs in bands with 16 reduce blocks at world 2 where an owner's rows hold
    # at least 2 x 132 tiles of 128 x 128 (MmRsTileLayout::default_bands); one band, as before,
    # elsewhere (experiments/results/h200x2/tile_bands).
    ("9de2e1f", "mm_rs tile programs: bands and reduce blocks at world 2 on large products",
     {"mm_rs.tile_st_ld_reduce": _tile_bands, "mm_rs.tile_st_peer_reduce": _tile_bands}),
    # The same shapes: bands and no reduce blocks by default (the CUDA kernel's side reduce; the
    # simulator's program reduces the bands after its tiles).
    ("16740f0", "mm_rs tile programs: bands, no reduce blocks (the CUDA kernel's side reduce) at world 2",
     {"mm_rs.tile_st_ld_reduce": _tile_bands, "mm_rs.tile_st_peer_reduce": _tile_bands}),
    # Default bands at every world, each band 3 waves of 128 x 128 tiles over every owner
    # (experiments/results/h100x4/bands_529f156), then at most 8 tile rows a band and one band on
    # small products (h100x2/round_e29fa5c): the rows whose default band moved.
    ("e29fa5c", "mm_rs tile programs: default bands at every world (3 waves a band, at most 16 tile rows)",
     {"mm_rs.tile_st_ld_reduce": _bands_moved("world2", "waves16"),
      "mm_rs.tile_st_peer_reduce": _bands_moved("world2", "waves16")}),
    ("51db5d9", "mm_rs tile programs: default bands of at most 8 tile rows, one band on small products",
     {"mm_rs.tile_st_ld_reduce": _bands_moved("waves16", "waves8"),
      "mm_rs.tile_st_peer_reduce": _bands_moved("waves16", "waves8")}),
    # One walk over every owner's band (a block's tiles numbered across owners, not per owner:
    # 17b4f7d), then reduce tasks of 8 rows (16 before): every shape, every world; one entry, as
    # no committed row measured the walk without the 8-row tasks
    # (experiments/results/h100x4/mmrs_diag_17b4f7d, mmrs_rows_17b4f7d).
    ("a91bb6e", "mm_rs tile programs: one walk over every owner's band, reduce tasks of 8 rows",
     {"mm_rs.tile_st_ld_reduce": _always, "mm_rs.tile_st_peer_reduce": _always}),
    # Barrier waits in the order the flags land, own-peer order in st_reduce and st_copy (048a34b;
    # core/algos/barrier_signal_wait.h, all_reduce_st_reduce.h, all_gather_st_copy.h).
    ("048a34b", "device programs' barrier: waits in the order the flags land",
     {a: _always for a in DEVICE_PROGRAMS if "_ll" not in a}),
    # Ranks sharing a GPU enqueue their eager calls in lockstep (Team::lockstep; c10e405 after each
    # call, 19094a1 also within a host plan's call, measured as c10e405-dirty in
    # h200x1/team/lockstep_4c2fbb2/lockstep7 and 8, the rows of team/run18), and a host plan's flag
    # operations are then not batched (PlanExec::batching): every algorithm's eager rows of a team
    # whose ranks share a GPU. Graph rows are not altered (no lockstep under capture).
    ("c10e405", "ranks sharing a GPU: eager calls in lockstep, a host plan's flags unbatched",
     _eager_sharing_a_gpu),
]


# The commit from which the CUDA bench launches device programs with programmatic dependent launch
# (bench --pdl, default on); rows measured before it were launched without (sim.h pdl_saving_us).
PDL_SINCE = "464a61a"

# The commit from which a CUDA copy's or reduce's last vectors a thread go in one step (all loads in
# flight; backends/cuda/block_ctx.cuh copy); rows measured before it paid a load round trip for each
# (sweep --serial-tail, sim.h RunSpec::serial_tail).
TAIL_SINCE = "ec6ad13"


def stale_change(r):
    """The newest PLAN_CHANGES entry a row's measurement predates (None: it measured the current plan)."""
    for ch in reversed(PLAN_CHANGES):
        # {algorithm: predicate}, or one predicate for a change that alters every algorithm alike.
        alters = ch[2] if callable(ch[2]) else ch[2].get(r["algo"])
        if alters is None or not alters(r):
            continue
        if data.is_ancestor(ch[0], r.get("git_sha", "")) is False:
            return ch
    return None


def measured_rows(machine, stale=None):
    """Our rows of `machine` that measured the current plans; the others go to `stale` (a list) if given."""
    out = []
    team = machine in data.TEAM_MACHINES
    if team:  # one GPU, N ranks: the team runs alone
        rows = data.team_rows(machine) + data.team_tune_rows(machine) + data.team_rows(machine, fused=True)
    else:
        rows = data.measured_rows(machine) + data.tune_rows(machine) + data.measured_rows(machine, fused=True)
    for r in rows:
        if "." not in r["algo"] or r["op"] == "barrier":
            continue  # NCCL's rows and the fused baselines; barriers have no size to sweep
        # A team run is named with its folder (run7/bench_team_h200x1): runs reuse file names.
        name = os.path.relpath(r["source"], os.path.join(data.RESULTS_DIR, machine, "team")) if team \
            else os.path.basename(r["source"])
        out.append({"source": name[:-len(".csv")], "world": r["world"], "op": r["op"],
                    "algo": r["algo"], "dtype": r["dtype"], "bytes": r["bytes"], "blocks": r["blocks"],
                    "graph": r["graph"], "meas": r["time_us_median"], "p10": r["time_us_p10"], "p90": r["time_us_p90"],
                    "mnk": tuple(int(r.get(k) or 0) for k in ("M", "N", "K")), "git_sha": r.get("git_sha", ""),
                    "gpu_ranks": r["world"] if team else 1})
        out[-1]["stale"] = stale_change(out[-1])
        # Launched with programmatic dependent launch (the bench's default since PDL_SINCE) or not:
        # the simulator predicts each row's own launch path (sweep --pdl).
        out[-1]["pdl"] = data.is_ancestor(PDL_SINCE, out[-1]["git_sha"]) is not False
        # Its verbs' last step as its binary ran it: the simulator predicts that (sweep --serial-tail).
        out[-1]["serial_tail"] = data.is_ancestor(TAIL_SINCE, out[-1]["git_sha"]) is False
    if stale is not None:
        stale += [r for r in out if r["stale"]]
    return [r for r in out if not r["stale"]]


def predict(symmcoll, machine, rows, key="pred"):
    """Fills r[key] for every row: one sweep per (world, algo, dtype, blocks, mode). `machine`: a
    name or an .ini path."""
    groups = {}
    for r in rows:
        fused = r["op"] in data.FUSED_OPS
        groups.setdefault((r["world"], r["algo"], r["dtype"], r["blocks"], r["graph"], r["mnk"][1:] if fused else (),
                           r.get("pdl", True), r.get("serial_tail", False)), []).append(r)
    with tempfile.TemporaryDirectory() as tmp:
        for i, ((world, algo, dtype, blocks, graph, nk, pdl, tail), rs) in enumerate(sorted(groups.items())):
            out = os.path.join(tmp, "%d.csv" % i)
            mode = "graph" if graph else "eager"
            if nk:  # a fused operation: one sweep per (N, K), its Ms
                ms = ",".join(str(m) for m in sorted({r["mnk"][0] for r in rs}))
                cmd = [symmcoll, "sweep", "--backend", "sim", "--machine", machine, "--world", str(world), "--op",
                       rs[0]["op"], "--algo", algo, "--dtype", dtype, "--n", str(nk[0]), "--k", str(nk[1]), "--m", ms,
                       "--mode", mode, "--timing-only", "--no-baselines", "--csv", out]
            else:
                sizes = ",".join(str(b) for b in sorted({r["bytes"] for r in rs}))
                cmd = [symmcoll, "sweep", "--machine", machine, "--world", str(world), "--op", rs[0]["op"], "--algo",
                       algo, "--dtype", dtype, "--blocks", str(blocks), "--mode", mode, "--pdl", "on" if pdl else "off",
                       "--sizes", sizes, "--timing-only", "--quiet", "--csv", out] + (["--serial-tail"] if tail else [])
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                sys.stderr.write("fidelity: %s failed: %s" % (" ".join(cmd), p.stderr))
                continue
            with open(out) as f:
                pred = {(int(x["bytes"]), int(x["M"] or 0)): float(x["time_us_median"]) for x in csv.DictReader(f)}
            for r in rs:
                k = (r["bytes"], r["mnk"][0])
                if k in pred:
                    r[key] = pred[k]


# ---- keys fitted from bench rows, judged only on rows the fit did not see -----------------------
# Model keys no calibration of the machine measures (backends/sim: the flagged-packet protocol's
# link cost and polling, packets.cpp, and a block's packet reads where no ll_unpack_chain rows set
# them; where no calibration has it, a copy's or reduce's wait for its local loads, verbs.cpp; the
# link cost of a block's remote loads, verbs.cpp; a copy engine's cold start, copy_engines.cpp; the
# share of acquire_us a release's fence pays and what it pays per other block fencing or waiting,
# verbs.cpp), in groups that move disjoint algorithms; key_groups leaves out the keys a machine's
# file has from a calibration (every shipped file has ll_read_GBps so). Each group is fitted from GPU rows on the
# relative error (numpy), and a row is only ever predicted with values fitted without it:
#   leave one algorithm out (LOAO): the row's own machine, every algorithm but the row's;
#   leave one machine out (LOMO): every row of its partner machine (LOMO_PARTNER: the other
#   machine of the same GPU model, never one of another model).
# Groups of several keys: Gauss-Newton with finite differences (numpy lstsq). One-key groups: the
# predictions on a grid of values (simulated once), interpolated, the least squares over the
# fold's rows on a fine grid. The shipped machine files carry the pooled fit (both H200 machines,
# every row: --fit-pooled) only as the value for machines never measured (h200x8, h100x8; h100x2 and
# h100x4 carry it too, from base/h100x8.ini); this table never judges rows with it.
KEY_GROUPS = [
    [("ll_wire_bytes", 8.0, 1.0, 64.0, 1.0), ("ll_poll_us", 0.0, 0.0, 5.0, 0.1),  # name, start, lo, hi, step
     ("ll_read_GBps", 40.0, 5.0, 400.0, 2.0)],
    # A copy or reduce of local sources only: its loads' round trip (sim.h local_load_us), once
    # part of ll_poll_us. Calibrated by peer_reduce_chain rows (calibrated_keys: every shipped
    # machine has them), fitted only on a machine that has none.
    [("local_load_us", 0.0, 0.0, 3.0, 0.15)],
    [("load_link_factor", 1.0, 1.0, 1.3, 0.05)],
    # The host plans' and fused plans' peer copies (a cold start), and the host's pace (sim.h
    # host_scale: the factor on an eager call's measured host costs, host_launch_us ..
    # host_call_us, for a host that was not measured): both move the host plans' rows.
    [("ce_launch_us", 0.0, 0.0, 12.0, 1.0), ("host_scale", 1.0, 0.2, 1.5, 0.05)],
    # The release's fence against each acquire wait (verbs.cpp, signal / wait): the ping-pong that
    # calibrates acquire_us fences once per acquire, so only programs with several waits per
    # release (a barrier of more than 2 ranks) tell the two apart.
    [("release_fence_share", 0.0, 0.0, 1.0, 0.1)],
    # A release's fence against the GPU's other blocks fencing or waiting (verbs.cpp, signal):
    # what a barrier costs more as more blocks cross it at once. calibrate's barrier_blocks rows
    # give it too (apps/harness/sim/fit.cpp: 0.011 us on 2x H100), but the shipped files take it
    # from here: the bench's one-round barrier grows 0.1 us from 1 to 64 blocks where that value
    # predicts 0.7 (experiments/results/h100x2/README.md, round_6e1fc4c). The rounds' growth that
    # stops at a count of blocks, paid by a fence after an acquire of its kernel (fence_crowd_us,
    # fence_crowd_blocks), is calibrated from those rows on each NVLink machine (fit.cpp).
    [("fence_gap_us", 0.0, 0.0, 0.1, 0.01)],
]
BENCH_KEYS = [k for g in KEY_GROUPS for k in g]
# Rows a group may be fitted on, beyond moving with it (judged all the same): release_fence_share
# on the collectives alone. The fused tile programs wait many times per release too, but their
# waits mostly find the flag already set: a chain of acquires that costs far less than the
# ping-pong's acquire_us (calibrate's acquire_chain: 0.19 us per acquire of a flag the block set,
# one H100, experiments/results/h100x1/calib_5c5c77c; acquire_peer_flags, flags a peer set: 0.20 us,
# experiments/results/h100x2/calib_7e67a7a), a mechanism the key does not stand for. Fitted
# on them it rises to make their waits cheap, and the barriers of the 4-GPU machines go optimistic
# (seen when the tile GEMM got keys of its own, 2026-11-26: h200x2's share 0.015 -> 0.44 and h200x4
# judged on it 7.8 -> 11.6 % median; h100x2's 0.5 -> 0.98, h100x4 7.1 -> 9.4 %). This rule was made
# after that result, from the mechanism: the fused rows stay in every table. With it, leave one
# machine out: h200x4 11.6 -> 7.2 %, h100x4 9.4 -> 11.1 % (a 2-GPU machine's collectives wait once
# per release and barely tell the fence from the acquire: h100x2 has no other rows to say it).
TRAIN_ROWS = {"release_fence_share": lambda r: r["op"] not in data.FUSED_OPS}


def trains(group, r):
    return all(TRAIN_ROWS.get(k[0], lambda _: True)(r) for k in group)
# One GPU, N ranks (data.TEAM_MACHINES) only: a team call's eager launches (sim.h
# Machine::team_launch_us; no effect where each rank has its GPU, so the NVLink tables keep their keys).
TEAM_KEY_GROUPS = [[("team_launch_us", 0.0, 0.0, 3.0, 0.25)]]


def calibrated_keys(machine):
    """The keys experiments/machines/<machine>.ini has from a calibration (symmcoll fit wrote a
    measurement beside them, not "not calibrated"): a bench key among them is not fitted here.
    release_fence_share, where a calibration run has acquire_peer_flags rows (h100x2, h100x4:
    apps/harness/sim/fit.cpp), and local_load_us, from peer_reduce_chain rows (experiments/Makefile
    LOCAL_LOAD_CALIB_H100), are such keys."""
    keys = set()
    with open(os.path.join(ROOT, "experiments", "machines", machine + ".ini")) as f:
        for line in f:
            if "=" in line and not line.startswith("#") and "#" in line:
                k, rest = line.split("=", 1)
                note = rest.split("#", 1)[1].strip()
                if not note.startswith("not calibrated"):
                    keys.add(k.strip())
    return keys


def key_groups(machine):
    """The bench-fitted groups of `machine`, less the keys its file has from a calibration (a group
    keeps its other keys: ll_read_GBps and ll_poll_us calibrated (ll_poll_us as local_load_us,
    apps/harness/sim/fit.cpp), ll_wire_bytes is still fitted, with the calibrated values in place)."""
    groups = KEY_GROUPS + (TEAM_KEY_GROUPS if machine in data.TEAM_MACHINES else [])
    cal = calibrated_keys(machine)
    return [g for g in ([k for k in g if k[0] not in cal] for g in groups) if g]


def bench_keys(machine):
    return [k for g in key_groups(machine) for k in g]
FIT_MACHINES = ["h200x2", "h200x4"]  # --fit-pooled
# Leave one machine out: each measured machine's bench keys fitted on its partner's rows alone, the
# same GPU model at another world (H100 and H200 NVLink rows are never mixed); the one-GPU team
# machines have no such partner and pair across GPU models (h200x1 <-> h100x1).
LOMO_PARTNER = {"h200x2": "h200x4", "h200x4": "h200x2", "h100x2": "h100x4", "h100x4": "h100x2",
                # One GPU, N ranks: no second team machine of the same GPU, so the other GPU's team
                # (the only held-out machine there is; its rows never enter an NVLink fold).
                "h200x1": "h100x1", "h100x1": "h200x1"}


def ini_with(machine, values, tmp, tag):
    """A copy of experiments/machines/<machine>.ini with the keys of `values` replaced (the other
    bench keys at their start values: each group is fitted with the others off)."""
    values = dict({k[0]: k[1] for k in bench_keys(machine)}, **values)
    src = os.path.join(ROOT, "experiments", "machines", machine + ".ini")
    out = []
    with open(src) as f:
        for line in f:
            k = line.split("=")[0].strip()
            if k in values and not line.startswith("#"):
                line = "%s = %.6g  # fold value (experiments/fidelity.py)\n" % (k, values[k])
            out.append(line)
    path = os.path.join(tmp, "%s_%s.ini" % (machine, tag))
    with open(path, "w") as f:
        f.writelines(out)
    return path


def run_rows(symmcoll, machine, rows, values, tmp, tag):
    rs = [dict(r) for r in rows]
    predict(symmcoll, ini_with(machine, values, tmp, tag), rs, "p")
    return [r.get("p") for r in rs]


def fit_gn(symmcoll, group, machine_rows, tmp, tag, moved=None):
    """Gauss-Newton on sum ((pred - meas) / meas)^2 over the rows of every (machine, rows) pair.
    `moved`, a set, receives the names of the keys some row's prediction moved with (the others
    keep their start values: the rows say nothing about them)."""
    import numpy as np
    theta = np.array([k[1] for k in group])
    lo = np.array([k[2] for k in group])
    hi = np.array([k[3] for k in group])
    step = np.array([k[4] for k in group])
    names = [k[0] for k in group]

    def run(th, label):
        out = []
        for m, rows in machine_rows:
            out += run_rows(symmcoll, m, rows, dict(zip(names, th)), tmp, "%s_%s" % (tag, label))
        return out

    meas = [r["meas"] for _, rows in machine_rows for r in rows]
    for it in range(6):
        p0 = run(theta, "it%d" % it)
        cols = []
        for j in range(len(theta)):
            th = theta.copy()
            th[j] = th[j] + step[j] if th[j] + step[j] <= hi[j] else th[j] - step[j]
            pj = run(th, "it%d_%d" % (it, j))
            cols.append([(b - a) / (th[j] - theta[j]) if a is not None and b is not None else 0.0
                         for a, b in zip(p0, pj)])
        ok = [i for i in range(len(meas)) if p0[i] is not None and any(c[i] != 0 for c in cols)]
        if not ok:
            break
        J = np.array([[cols[j][i] / meas[i] for j in range(len(theta))] for i in ok])
        r = np.array([(p0[i] - meas[i]) / meas[i] for i in ok])
        active = [j for j in range(len(theta)) if np.any(J[:, j] != 0)]
        if moved is not None:
            moved.update(names[j] for j in active)
        d = np.zeros(len(theta))
        d[active] = np.linalg.lstsq(J[:, active], -r, rcond=None)[0]
        new = np.clip(theta + d, lo, hi)
        if np.all(np.abs(new - theta) <= 1e-3 * np.maximum(step, np.abs(theta))):
            theta = new
            break
        theta = new
    return dict(zip(names, (float(round(v, 4)) for v in theta)))


class Grid:
    """A one-key group's predictions of a machine's rows on a grid of values (simulated once)."""

    def __init__(self, symmcoll, key, machine, rows, tmp):
        import numpy as np
        name, start, lo, hi, step = key
        self.name, self.xs = name, np.arange(lo, hi + step / 2, step)
        self.rows = rows
        self.preds = [run_rows(symmcoll, machine, rows, {name: float(x)}, tmp, "grid_%s_%g" % (name, x))
                      for x in self.xs]

    def fit(self, keep):
        """The value minimizing sum ((pred - meas) / meas)^2 over the rows i with keep(row)."""
        import numpy as np
        idx = [i for i, r in enumerate(self.rows)
               if keep(r) and all(p[i] is not None for p in self.preds)]
        if not idx:
            return float(self.xs[0])
        P = np.array([[p[i] for i in idx] for p in self.preds])  # grid x rows
        m = np.array([self.rows[i]["meas"] for i in idx])
        fine = np.arange(self.xs[0], self.xs[-1] + 1e-9, (self.xs[1] - self.xs[0]) / 20)
        best, best_x = None, float(self.xs[0])
        for x in fine:
            p = np.array([np.interp(x, self.xs, P[:, j]) for j in range(P.shape[1])])
            e = float(np.sum(((p - m) / m) ** 2))
            if best is None or e < best - 1e-15:
                best, best_x = e, float(x)
        return round(best_x, 4)


def affected(symmcoll, machine, rows, tmp, group):
    """The algorithms whose predictions a group's keys move (its keys off their start values)."""
    probe = {k[0]: min(k[1] + 4 * k[4], k[3]) for k in group}
    a = run_rows(symmcoll, machine, rows, probe, tmp, "probe")
    b = run_rows(symmcoll, machine, rows, {}, tmp, "off")
    return sorted({r["algo"] for r, x, y in zip(rows, a, b) if x is not None and x != y})


def ini_values(machine):
    """Every key = value of experiments/machines/<machine>.ini (numbers only)."""
    vals = {}
    with open(os.path.join(ROOT, "experiments", "machines", machine + ".ini")) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                try:
                    vals[k.strip()] = float(v.split("#")[0])
                except ValueError:
                    pass
    return vals


def fallback_values(machine, group):
    """A group's values for a fold with no rows of its own machine to fit them on (the held-out
    algorithm is the only one the group moves there, e.g. the one LL program measured on the H100
    machines): the machine file's values where they were fitted on other machines' rows only (the
    pooled fit of FIT_MACHINES, which never sees this machine's rows), else the start values (off)."""
    vals = {k[0]: k[1] for k in group}
    if machine in FIT_MACHINES:
        return vals
    return {k: ini_values(machine).get(k, v) for k, v in vals.items()}


class GroupFit:
    """One machine's fitting state for every key group: which algorithms each moves, and (one-key
    groups) the grid."""

    def __init__(self, symmcoll, machine, rows, tmp):
        self.symmcoll, self.machine, self.tmp = symmcoll, machine, tmp
        self.groups = []
        for g in key_groups(machine):
            algos = affected(symmcoll, machine, rows, tmp, g)
            train = [r for r in rows if r["algo"] in algos and trains(g, r)]
            grid = Grid(symmcoll, g[0], machine, train, tmp) if len(g) == 1 and train else None
            self.groups.append((g, algos, train, grid))

    def algos(self):
        return sorted({a for _, algos, _, _ in self.groups for a in algos})

    def fit(self, without=None):
        """Every group's values fitted on this machine's rows, less algorithm `without`'s;
        returns ({key: value}, training rows)."""
        vals, n = {}, 0
        for g, algos, train, grid in self.groups:
            t = [r for r in train if r["algo"] != without]
            n += len(t)
            if not t:  # no other algorithm of this machine to fit on
                vals.update(fallback_values(self.machine, g))
            elif grid:
                vals[g[0][0]] = grid.fit(lambda r: r["algo"] != without)
            else:
                # A key no training row moves (e.g. the packet keys once the one LL program is held
                # out, the group's other keys moving other algorithms) takes the fallback value, as a
                # group with no training rows does.
                moved = set()
                fitted = fit_gn(self.symmcoll, g, [(self.machine, t)], self.tmp, "gn", moved)
                fallback = fallback_values(self.machine, g)
                vals.update({k: (v if k in moved else fallback[k]) for k, v in fitted.items()})
        return vals, n


def held_out(symmcoll, machine, rows):
    """Fills r["pred"] (LOAO) and r["pred_lomo"] for every row, r["fold"]; returns the folds' values."""
    other = [LOMO_PARTNER[machine]] if machine in LOMO_PARTNER else []
    folds = []
    with tempfile.TemporaryDirectory() as tmp:
        gf = GroupFit(symmcoll, machine, rows, tmp)
        algos = gf.algos()
        for a in algos + [None]:  # None: the fold of every algorithm no key moves
            vals, ntrain = gf.fit(without=a)
            test = [r for r in rows if (r["algo"] == a if a else r["algo"] not in algos)]
            predict(symmcoll, ini_with(machine, vals, tmp, "loao_test"), test, "pred")
            name = "LOAO: %s held out" % a if a else "LOAO: the other algorithms (no key moves them)"
            for r in test:
                r["fold"] = "-" + a if a else "-"
            folds.append((name, machine, ntrain, vals))
        if other:
            og = GroupFit(symmcoll, other[0], measured_rows(other[0]), tmp)
            vals, ntrain = og.fit()
            # A key this machine fits that the partner has calibrated (a machine without
            # local_load_us's rows beside one with them) takes the partner's calibrated value.
            for k, v in ini_values(other[0]).items():
                if k not in vals and any(k == b[0] for b in bench_keys(machine)):
                    vals[k] = v
            predict(symmcoll, ini_with(machine, vals, tmp, "lomo_test"), rows, "pred_lomo")
            folds.append(("LOMO: fitted on %s, predicts every row here" % other[0], other[0], ntrain, vals))
    return folds

def stats(rs):
    e = [abs(r["pred"] - r["meas"]) / r["meas"] for r in rs]
    signed = statistics.median([(r["pred"] - r["meas"]) / r["meas"] for r in rs])
    return len(e), statistics.median(e), max(e), signed, sum(x > LIMIT for x in e)


def ranking(rows):
    """Cells (op, world, dtype, size or M x N x K, launch mode) of the bench runs (default block
    counts; the tune sweeps are left out) where two or more of our algorithms were measured: the
    simulator ranks a cell right when the algorithm it predicts fastest measured within the
    fastest one's p90 (its p10-p90 spread). Returns (cells, right, the wrong ones)."""
    cells = {}
    for r in rows:
        if os.path.basename(r["source"]).startswith("tune"):  # a team's: run20/tune_team_...
            continue
        cells.setdefault((r["op"], r["world"], r["dtype"], r["bytes"], r["mnk"], r["graph"]), []).append(r)
    n, right, wrong = 0, 0, []
    for k, rs in sorted(cells.items()):
        if len({r["algo"] for r in rs}) < 2:
            continue
        n += 1
        best = min(rs, key=lambda r: r["meas"])
        pick = min(rs, key=lambda r: r["pred"])
        if pick["meas"] <= best["p90"]:
            right += 1
        else:
            wrong.append((k, best, pick))
    return n, right, wrong


def table(title, key, rows):
    lines = ["### %s" % title, "", "| %s | rows | median | max | median signed | beyond 20%% |" % title.split()[-1],
             "|---|---:|---:|---:|---:|---:|"]
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    order = [b[2] for b in BANDS]
    for k in sorted(groups, key=lambda k: (order.index(k) if k in order else 0, str(k))):
        n, med, mx, sgn, over = stats(groups[k])
        lines.append("| %s | %d | %.1f%% | %.1f%% | %+.1f%% | %d |" % (k, n, 100 * med, 100 * mx, 100 * sgn, over))
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("machine")
    ap.add_argument("--symmcoll", default=os.path.join(ROOT, "build", "apps", "symmcoll"))
    ap.add_argument("--out")
    ap.add_argument("--fit-pooled", action="store_true",
                    help="print the bench keys fitted on every row of %s (the value shipped machine files "
                         "carry for machines never measured) and exit" % " and ".join(FIT_MACHINES))
    a = ap.parse_args()
    if a.fit_pooled:
        with tempfile.TemporaryDirectory() as tmp:
            # Keys both machines' files have from a calibration are not bench-fitted (ll_read_GBps).
            cal_both = calibrated_keys(FIT_MACHINES[0]) & calibrated_keys(FIT_MACHINES[1])
            for g in [[k for k in g if k[0] not in cal_both] for g in KEY_GROUPS]:
                if not g:
                    continue
                mr = []
                for m in FIT_MACHINES:
                    rows = measured_rows(m)
                    algos = affected(a.symmcoll, m, rows, tmp, g)
                    mr.append((m, [r for r in rows if r["algo"] in algos]))
                if len(g) == 1:  # the grid on both machines' rows at once
                    grids = [Grid(a.symmcoll, g[0], m, rs, tmp) for m, rs in mr]
                    both = Grid.__new__(Grid)
                    both.name, both.xs = grids[0].name, grids[0].xs
                    both.rows = grids[0].rows + grids[1].rows
                    both.preds = [p0 + p1 for p0, p1 in zip(grids[0].preds, grids[1].preds)]
                    vals = {g[0][0]: both.fit(lambda r: True)}
                else:
                    vals = fit_gn(a.symmcoll, g, mr, tmp, "pooled")
                print(vals, "from", sum(len(x[1]) for x in mr), "rows")
        return
    out = a.out or os.path.join(ROOT, "experiments", "tables", "fidelity_%s.md" % a.machine)
    stale = []
    rows = measured_rows(a.machine, stale)
    if not rows:
        sys.exit("fidelity: no bench/tune rows for machine %s under experiments/results/%s" % (a.machine, a.machine))
    folds = held_out(a.symmcoll, a.machine, rows)
    missing = [r for r in rows if "pred" not in r]
    rows = [r for r in rows if "pred" in r]
    n, med, mx, sgn, over = stats(rows)
    ok = "met" if med <= GOALS["median"] and mx <= GOALS["max"] else "NOT met"
    lomo = [dict(r, pred=r["pred_lomo"]) for r in rows if "pred_lomo" in r]
    team = a.machine in data.TEAM_MACHINES
    lines = ["# Simulator fidelity on %s (held out)" % (
        a.machine + ": one GPU, N ranks (in-process teams; one GPU's HBM, not NVLink)" if team else a.machine), "",
             *(["The rows: experiments/results/%s/team/run*/ (every rank of a team on one GPU; world = ranks), each" % a.machine,
                "cell from the newest run that measured it (plots/data.py team_rows), predicted on the team machine",
                "file (team = 1: the ranks share the GPU's HBM, copy engines, SMs and tensor rate). They stay apart",
                "from every NVLink table and figure.", ""] if team else []),
             "Every committed GPU row of our algorithms (bench and tune CSVs: all sizes, default and tuned block",
             "counts, graph and eager; the host plans; the fused operations at their M, N, K; where two runs measured",
             "the same cell, the newer run's row) against `symmcoll sweep --timing-only` on",
             "experiments/machines/%s.ini." % a.machine,
             "No row here is used to fit the machine file's calibrated keys (`symmcoll fit` reads only calibration",
             "microbenchmarks). Two keys come from diagnosis runs of the programs they price, not from these rows:",
             "mma_peer_store_GBps (the mm_rs push programs' stores to peers) and mma_in_GBps (tile_st_peer_acc's",
             "epilogue inputs, experiments/mma_in_rate.py), so those programs' rows are not held out from them.",
             "The keys no microbenchmark measures (%s) are fitted from bench rows," % ", ".join(
                 k[0] for k in bench_keys(a.machine)),
             "and every row here is predicted with values fitted without it: the numbers below are leave one",
             "algorithm out (fit on this machine's other algorithms; the fold of each row is in the row tables:",
             "`-ALGO` = fitted without ALGO), and the leave-one-machine-out line fits on the partner machine",
             "(the same GPU model at another world: %s)." % (LOMO_PARTNER.get(a.machine) or "none"),
             *(["A fold with no other algorithm of this machine that a group's keys move takes the machine file's",
                "values for that group (the pooled fit of %s, which never sees this machine's rows)." % " + ".join(
                    FIT_MACHINES)] if a.machine not in FIT_MACHINES else []),
             "Error: |pred - meas| / meas; signed: (pred - meas) / meas",
             "(negative: the simulator is optimistic). Generated by experiments/fidelity.py; do not edit.", "",
             "**Overall (leave one algorithm out): %d rows, median %.1f%%, max %.1f%%, median signed %+.1f%%, %d beyond "
             "20%%.** Target (median <= 5%%, max <= 20%%): %s." % (n, 100 * med, 100 * mx, 100 * sgn, over, ok), ""]
    if lomo:
        ln, lmed, lmx, lsgn, lover = stats(lomo)
        lines += ["**Leave one machine out (bench keys fitted on %s only): %d rows, median %.1f%%, max %.1f%%, median "
                  "signed %+.1f%%, %d beyond 20%%.** Target (median <= 10%%): %s." % (
                      folds[-1][1], ln, 100 * lmed, 100 * lmx, 100 * lsgn, lover, "met" if lmed <= GOALS["lomo_median"] else "NOT met"),
                  ""]
    lines += ["### Folds: the bench keys' fitted values", "",
              "| fold | fitted on | training rows | %s |" % " | ".join(k[0] for k in bench_keys(a.machine)),
              "|---|---|---:|%s" % ("---:|" * len(bench_keys(a.machine)))]
    for name, m, ntrain, vals in folds:
        lines.append("| %s | %s | %d | %s |" % (name, m, ntrain, " | ".join("%.4g" % vals[k[0]] for k in bench_keys(a.machine))))
    lines.append("")
    if missing:
        lines += ["%d row(s) not predicted: the simulator refuses the combination (run `symmcoll run` on one for the "
                  "reason): %s." % (len(missing), ", ".join("%s %s blocks %d" % (r["algo"], size(r["bytes"]), r["blocks"])
                                                            for r in missing)), ""]
    if stale:
        by = {}
        for r in stale:
            by.setdefault(r["stale"][:2], []).append(r)
        lines += ["%d row(s) not predicted: measured before a change to their plan (experiments/fidelity.py "
                  "PLAN_CHANGES), they time a plan or kernel the simulator no longer runs; no fit sees them:" % len(stale), ""]
        for (commit, what), rs in sorted(by.items()):
            algos = sorted({r["algo"] for r in rs})
            lines.append("- %s (%s): %d row(s) of %s" % (commit, what, len(rs), ", ".join(algos)))
        lines.append("")
    cells, right, wrong = ranking(rows)
    if cells:
        lines += ["**Ranking: the algorithm predicted fastest measured fastest (within the fastest's p90) in %d of %d "
                  "cells (%.1f%%).** Target (>= 90%%): %s." % (right, cells, 100.0 * right / cells,
                                                          "met" if right >= GOALS["ranking"] * cells else "NOT met"), ""]
    if lomo:
        lc, lr, _ = ranking(lomo)
        if lc:
            lines += ["Ranking, leave one machine out: %d of %d cells (%.1f%%)." % (lr, lc, 100.0 * lr / lc), ""]
    lines += table("per op", lambda r: r["op"], rows)
    if team:
        lines += table("per world", lambda r: "%d ranks on one GPU" % r["world"], rows)
    lines += table("per algorithm", lambda r: r["algo"], rows)
    lines += table("per size band", lambda r: band(r["bytes"]), rows)
    lines += table("per launch mode", lambda r: "graph" if r["graph"] else "eager", rows)
    lines += table("per run", lambda r: r["source"], rows)
    new = sorted((r for r in rows if r["op"] in data.FUSED_OPS or ".ce_" in r["algo"]),
                 key=lambda r: (r["op"], r["algo"], r["mnk"], r["bytes"], -r["graph"]))
    if new:
        lines += ["### Host plans and fused operations, row by row (%d)" % len(new), "",
                  "| source | algo | bytes or M x N x K | blocks | mode | measured us | predicted us | error | fold |",
                  "|---|---|---:|---:|---|---:|---:|---:|---|"]
        for r in new:
            what = "%d x %d x %d" % r["mnk"] if r["op"] in data.FUSED_OPS else size(r["bytes"])
            lines.append("| %s | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% | %s |" % (
                r["source"], r["algo"], what, r["blocks"], "graph" if r["graph"] else "eager", r["meas"], r["pred"],
                100 * (r["pred"] - r["meas"]) / r["meas"], r.get("fold", "")))
        lines.append("")
    if wrong:
        lines += ["### Cells ranked wrong (%d)" % len(wrong), "",
                  "| op | size | mode | measured fastest (us, p90) | predicted fastest | its measured us |",
                  "|---|---:|---|---|---|---:|"]
        for (op, world, dtype, b, mnk, graph), best, pick in wrong:
            what = "%d x %d x %d" % mnk if op in data.FUSED_OPS else size(b)
            lines.append("| %s | %s | %s | %s (%.2f, %.2f) | %s | %.2f |" % (
                op, what, "graph" if graph else "eager", best["algo"], best["meas"], best["p90"], pick["algo"],
                pick["meas"]))
        lines.append("")
    bad = sorted((r for r in rows if abs(r["pred"] - r["meas"]) / r["meas"] > LIMIT),
                 key=lambda r: -abs(r["pred"] - r["meas"]) / r["meas"])
    lines += ["### Rows beyond 20%% (%d)" % len(bad), ""]
    if bad:
        lines += ["| source | algo | dtype | bytes | blocks | mode | measured us | predicted us | error | fold |",
                  "|---|---|---|---:|---:|---|---:|---:|---:|---|"]
        for r in bad:
            lines.append("| %s | %s | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% | %s |" % (
                r["source"], r["algo"], r["dtype"],
                "%d x %d x %d" % r["mnk"] if r["op"] in data.FUSED_OPS else size(r["bytes"]), r["blocks"],
                "graph" if r["graph"] else "eager",
                r["meas"], r["pred"], 100 * (r["pred"] - r["meas"]) / r["meas"], r.get("fold", "")))
    lines.append("")
    with open(out, "w") as f:
        f.write("\n".join(lines))
    # Every predicted row with its held-out predictions, for the figures (plots/plot.py fig_measured).
    with open(out[:-len(".md")] + ".csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["source", "op", "algo", "dtype", "bytes", "blocks", "graph", "M", "N", "K", "meas_us", "p10_us",
                    "p90_us", "pred_loao_us", "pred_lomo_us", "fold"])
        for r in sorted(rows, key=lambda r: (r["source"], r["op"], r["algo"], r["dtype"], r["mnk"], r["bytes"],
                                             r["blocks"], r["graph"])):
            w.writerow([r["source"], r["op"], r["algo"], r["dtype"], r["bytes"], r["blocks"], r["graph"], *r["mnk"],
                        "%.4f" % r["meas"], "%.4f" % r["p10"], "%.4f" % r["p90"], "%.4f" % r["pred"],
                        "%.4f" % r["pred_lomo"] if "pred_lomo" in r else "", r.get("fold", "")])
    # The summary the paper's fidelity table reads (experiments/tables.py fidelity): the numbers above.
    summary = {"machine": a.machine, "team": bool(team), "rows": n, "lomo_partner": LOMO_PARTNER.get(a.machine),
               "goals": GOALS,
               "loao": {"median": med, "max": mx, "signed": sgn, "beyond": over},
               "ranking": {"right": right, "cells": cells}}
    if lomo:
        summary["lomo"] = {"median": lmed, "max": lmx, "signed": lsgn, "beyond": lover}
        lc, lr, _ = ranking(lomo)
        summary["lomo_ranking"] = {"right": lr, "cells": lc}
    with open(out[:-len(".md")] + ".json", "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    print("fidelity %s: %d rows, median %.1f%%, max %.1f%%, %d beyond 20%% -> %s" % (a.machine, n, 100 * med, 100 * mx,
                                                                                     over, os.path.relpath(out, ROOT)))


if __name__ == "__main__":
    main()

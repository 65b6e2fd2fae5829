"""Loading result CSVs (core/result.h schema) and the NCCL baseline, shared by
plots/plot.py and experiments/tables.py. Standard library only: the scripts run with
Debian's /usr/bin/python3, which has matplotlib but no pandas."""

import csv
import glob
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIM_DIR = os.path.join(ROOT, "experiments", "results", "sim")
RESULTS_DIR = os.path.join(ROOT, "experiments", "results")
BASELINE = os.path.join(ROOT, "experiments", "baselines", "nccl_h200x4_hardware_md.csv")
BASELINES = sorted(glob.glob(os.path.join(ROOT, "experiments", "baselines", "nccl_*_hardware_md.csv")))

OPS = ["all_reduce", "reduce_scatter", "all_gather"]
# Matmul fused with communication (core/fused.h): their rows share the result schema (with M, N,
# K filled) and the result folders, but only experiments/fused_table.py and plots/fused.py read
# them; sim_rows and measured_rows leave them out, so the collectives' tables never mix them in.
FUSED_OPS = ("ag_mm", "mm_rs")
CALIBRATION_1GPU = os.path.join(RESULTS_DIR, "h200x1", "calibrate_h200x1.csv")

# Registry id -> friendly alias (apps/`symmcoll list`); kept here so figures read like the
# text. An id missing here is shown by its own name, never dropped; tests/test_paper_naming.py
# holds every id of the registry (paper/generated/algorithms.md) to its alias here.
ALIASES = {
    "all_reduce.ld_reduce": "one_shot",
    "all_reduce.st_reduce": "one_shot_push",
    "all_reduce.rs_ld_ag_st": "two_shot",
    "all_reduce.rs_ld_ag_ld": "two_shot_ld",
    "all_reduce.mc_ld_reduce_mc_st": "multimem",
    "reduce_scatter.ld_reduce": "pull",
    "all_gather.st": "push",
    "all_gather.ld": "pull",
    "all_reduce.st_ll_reduce": "one_shot_ll",
    "reduce_scatter.st_ll_reduce": "push_ll",
    "all_gather.st_ll": "push_ll",
    "all_gather.st_copy": "push_copy",
    "all_gather.ce_st": "ce",
    "all_gather.ce_sm_st": "ce_sm",
    "reduce_scatter.ce_st_ring_reduce": "ce",
    "reduce_scatter.ce_st_chunk_reduce": "ce_overlap",
    "barrier.signal_wait": "acq_rel",
    "barrier.signal_wait_relaxed": "relaxed",
    "nccl": "NCCL",
    "nccl_symm": "NCCL (symm)",
    "nccl_ce": "NCCL (CE)",
}


def alias(algo):
    return ALIASES.get(algo, algo)


def label(algo):
    """The alias, with its op where two ops share it ("all_gather ce", "reduce_scatter ce")."""
    a = alias(algo)
    shared = sum(1 for k, v in ALIASES.items() if v == a) > 1 and "." in algo
    return "%s %s" % (algo.split(".")[0], a) if shared else a


def ordered(algos):
    """Registry order (the ALIASES table), unknown ids last by name."""
    keys = list(ALIASES)
    return sorted(algos, key=lambda a: (keys.index(a) if a in keys else len(keys), a))


def bus_factor(op, world):
    n = float(world)
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("reduce_scatter", "all_gather"):
        return (n - 1) / n
    return 1.0


def _num(row, key, cast=float):
    return cast(row[key]) if row.get(key, "") != "" else None


def read_rows(path):
    """Rows of one result CSV with numeric columns converted ('#' comment lines skipped)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        for k in ("world", "bytes", "blocks", "graph"):
            r[k] = int(r[k])
        for k in ("time_us_median", "time_us_p10", "time_us_p90", "algbw_GBps", "busbw_GBps", "max_rel_err"):
            r[k] = float(r[k])
        r["source"] = path
    return rows


def sim_rows(machine, fused=False):
    """The simulator's predictions for `machine`: every collective op (fused=True: the fused ops only)."""
    rows = []
    for path in sorted(glob.glob(os.path.join(SIM_DIR, machine, "*.csv"))):
        rows += [r for r in read_rows(path) if (r["op"] in FUSED_OPS) == fused]
    return rows


# Where a machine's GPU CSVs sit: its folder's top level (experiments/results/<machine>/*.csv, the
# first layout), and one subfolder per device call, round_<sha>/*.csv (scripts/gpu/round.sh), read
# in place, never copied. runs/, variant_<sha>/ (kernel variants main did not keep) and the other
# subfolders are not read.
# experiments/Makefile's measured_csvs globs the same two places.
# Files there that are not runs of the result schema, or not of the default configuration:
#   tune_*      block counts swept for one (op, algo, size): tune_rows
#   calibrate_* microbenchmarks of their own schema: the fit's input (experiments/Makefile)
#   torch_*     PyTorch's fused ops, their own schema: torch_rows
#   smi_*       nvidia-smi clock / power samples taken through a round (read by no script)
#   gpu_*       the GPU's name, memory and clock as a one-GPU script starts (scripts/gpu/one_gpu_env.sh)
#   interim_*   rows of a code state changed again before it was committed, measured to decide
#               the change (h100x1/team/run12, run13: the team's host-plan waits in kernels before
#               a team's eager samples started together); as runs they would replace whole cells
#               of complete runs with a few algorithms' rows
#   *_nopdl_*   the same cells with programmatic dependent launch off (scripts/gpu/plans.sh): an
#               ablation beside the default (PDL on, which the simulator models); as a run it would
#               replace the default rows of its cells (same commit, later name), so it is left out.
#   *_streamwaits_*  a one-GPU team's host plans with their flag waits as stream memory operations
#               (SYMM_PLAN_KERNEL_WAITS=0, scripts/gpu/team4_barrier.sh): the control beside the
#               default (waits in kernels, backends/cuda/plan_exec.h), left out as *_nopdl_* is.
NOT_RUNS = ("tune", "calibrate", "torch", "smi", "interim", "gpu_")


def result_csvs(machine, pattern="*.csv"):
    """The CSVs of `machine` matching `pattern`: its folder's top level, then its round_*/ folders
    (sorted paths; the order matters to no reader, newest_runs orders runs by commit)."""
    base = os.path.join(RESULTS_DIR, machine)
    return (sorted(glob.glob(os.path.join(base, pattern)))
            + sorted(glob.glob(os.path.join(base, "round_*", pattern))))


def is_run(path):
    """A CSV of result rows in the default configuration (see NOT_RUNS above)."""
    name = os.path.basename(path)
    return not name.startswith(NOT_RUNS) and "_nopdl_" not in name and "_streamwaits_" not in name


def measured_rows(machine, fused=False, all_runs=False):
    """GPU measurements committed under experiments/results/<machine>/ (may be none): the
    collectives' (fused=True: the fused ops' rows, e.g. fused_<machine>.csv).

    Every CSV there or in its round_*/ folders (result_csvs) is one run (bench_*.csv, fused_*.csv,
    any new name), except tune_*.csv (block counts swept for the same (op, algo, size): taking the
    minimum over them would quote a configuration the benchmark does not run), calibrate_*.csv (their
    own schema, read by calibration_gemm_rows) and the others is_run leaves out. Where several runs measured the same cell (op,
    world, dtype, size or M N K, launch mode), the cell's rows, ours and NCCL's, all come from the
    newest of them (newest_runs), so a comparison never mixes runs; all_runs=True keeps every row."""
    rows = []
    for path in result_csvs(machine):
        if not is_run(path):
            continue
        rows += [r for r in read_rows(path) if r["backend"] == "cuda" and (r["op"] in FUSED_OPS) == fused]
    return rows if all_runs else newest_runs(rows)


# One GPU, N ranks: in-process teams (experiments/results/<gpu>/team/run*/, e.g. h200x1): one GPU's
# HBM shared by N ranks, never NVLink. Read only by team_rows, for the team machine files' own
# fidelity tables (experiments/fidelity.py); no NVLink table or figure reads them.
TEAM_MACHINES = ("h200x1", "h100x1")


def team_rows(machine, fused=False):
    """The team runs' rows of `machine` (h200x1, h100x1): every run*/ CSV of results/<machine>/team/
    that is a run (is_run), each cell from the newest run that measured it (newest_runs), as
    measured_rows does for the NVLink machines: a run before a fix (the 32-queue fix, the team
    graph) is superseded cell by cell by a later one."""
    rows = []
    for path in sorted(glob.glob(os.path.join(RESULTS_DIR, machine, "team", "run*", "*.csv"))):
        if is_run(path):
            rows += [r for r in read_rows(path) if r["backend"] == "cuda" and (r["op"] in FUSED_OPS) == fused]
    return newest_runs(rows)


def team_tune_rows(machine):
    """The team runs' block-count sweeps (results/<machine>/team/run*/tune*.csv), as tune_rows."""
    return sweep_rows(sorted(glob.glob(os.path.join(RESULTS_DIR, machine, "team", "run*", "tune*.csv"))))


def torch_rows(machine):
    """PyTorch's fused operations measured in the same device call as one of our fused runs
    (scripts/gpu/fused_torch.sh): experiments/results/<machine>/torch_fused_<sha>_<machine>.csv,
    its own schema (scripts/gpu/torch_fused.py). Each row's "source" is the fused CSV of the same
    call (fused_<sha>_<machine>.csv), so a comparison with it stays within one call."""
    rows = []
    for path in result_csvs(machine, "torch_fused_*.csv"):
        pair = os.path.join(os.path.dirname(path), os.path.basename(path)[len("torch_"):])
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                for k in ("world", "graph", "M", "N", "K"):
                    r[k] = int(r[k])
                for k in ("time_us_median", "time_us_p10", "time_us_p90", "max_rel_err"):
                    r[k] = float(r[k])
                r["source"] = pair
                rows.append(r)
    return rows


# ---- which run is newest -------------------------------------------------------------------
# A run is one result CSV. Runs are ordered by the commit time of the code they measured (the
# git_sha column; "-dirty" ignored), then by when the CSV was first committed (a CSV git does not
# know yet counts as the newest), then by file name: adding a newer run needs no code change.
_GIT_TIMES = {}


def _git_time(*args):
    """The first %ct line `git log` prints for args in the repository, or None (no git, unknown)."""
    if args in _GIT_TIMES:
        return _GIT_TIMES[args]
    t = None
    try:
        p = subprocess.run(["git", "-C", ROOT, "log", "--format=%ct"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=60)
        lines = p.stdout.split()
        if p.returncode == 0 and lines:
            t = int(lines[-1] if "--diff-filter=A" in args else lines[0])
    except (OSError, ValueError, subprocess.SubprocessError):
        t = None
    _GIT_TIMES[args] = t
    return t


def _commit_of(sha):
    """The commit of a git_sha column value ("-dirty" ignored), or None where it names none."""
    sha = str(sha).split("-")[0].lower()
    return sha if re.fullmatch(r"[0-9a-f]{7,40}", sha) else None


def sha_time(sha):
    """Commit time (s) of a git_sha column value, or None where this repository does not know it."""
    sha = _commit_of(sha)
    return None if sha is None else _git_time("-1", sha + "^{commit}", "--")


_GIT_ANCESTRY = {}


def is_ancestor(commit, sha):
    """True where `commit` is `sha` or an ancestor of it (a git_sha column value; "-dirty" ignored);
    None where this repository cannot tell (no git, an unknown commit)."""
    sha = _commit_of(sha)
    if sha is None:
        return None
    key = (commit, sha)
    if key not in _GIT_ANCESTRY:
        try:
            p = subprocess.run(["git", "-C", ROOT, "merge-base", "--is-ancestor", commit, sha],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            _GIT_ANCESTRY[key] = {0: True, 1: False}.get(p.returncode)
        except (OSError, subprocess.SubprocessError):
            _GIT_ANCESTRY[key] = None
    return _GIT_ANCESTRY[key]


def file_time(path):
    """Time (s) of the commit that first added `path`, or None (not committed, or no git)."""
    return _git_time("--diff-filter=A", "--", os.path.abspath(path))


def run_key(path, rows=None):
    """Sort key of a run (one CSV): larger is newer (see the comment above _GIT_TIMES)."""
    if rows is None:
        rows = read_rows(path)
    inf = float("inf")
    shas = [t for t in (sha_time(s) for s in {r.get("git_sha", "") for r in rows}) if t is not None]
    added = file_time(path)
    added = inf if added is None else added
    return (max(shas) if shas else added, added, os.path.basename(path))


def cell(r):
    """What one measurement is of, apart from the algorithm: a run's rows for one cell compete."""
    return (r["op"], r["world"], r["dtype"], r["bytes"], r["graph"],
            int(r.get("M") or 0), int(r.get("N") or 0), int(r.get("K") or 0))


def newest_runs(rows, cell_of=cell):
    """The rows of every cell (cell_of: cell() by default) from the newest run (run_key) that measured it."""
    by_source = {}
    for r in rows:
        by_source.setdefault(r["source"], []).append(r)
    key = {p: run_key(p, rs) for p, rs in by_source.items()}
    pick = {}
    for r in rows:
        c = cell_of(r)
        if c not in pick or key[r["source"]] > key[pick[c]]:
            pick[c] = r["source"]
    return [r for r in rows if pick[cell_of(r)] == r["source"]]


def with_mnk(rows):
    """Fused rows with their M, N, K columns as ints."""
    for r in rows:
        for k in ("M", "N", "K"):
            r[k] = int(r[k])
    return rows


def calibration_1gpu(machine):
    """The one-GPU calibration run of `machine`'s GPU model (h200x2 -> results/h200x1/calibrate_h200x1.csv,
    h100x4 -> results/h100x1/calibrate_h100x1.csv): the matmul alone on that GPU, never another model's."""
    gpu = machine.split("x", 1)[0] + "x1"
    return os.path.join(RESULTS_DIR, gpu, "calibrate_%s.csv" % gpu)


def calibration_gemm_rows(path=CALIBRATION_1GPU):
    """The matmul alone on one GPU from a calibration run (symmcoll calibrate --backend cuda):
    rows with bench "gemm" (the fit's grid) or "gemm_fused" (the fused operations' shapes, held out
    from the fit), columns bench,world,blocks,graph,x,time_us,m,n,k after '#' comment lines (x:
    FLOPs, time_us: per call, graph 1/0), as {"graph", "time_us", "m", "n", "k"}. [] without the
    file."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                if r.get("bench") in ("gemm", "gemm_fused")]
    return [{"graph": int(r["graph"]), "time_us": float(r["time_us"]), "m": int(r["m"]), "n": int(r["n"]),
             "k": int(r["k"])} for r in rows]


def measured_algos():
    """Every algorithm with a GPU measurement under experiments/results/<machine>/ (any machine):
    the others (multimem) are drawn as simulated only."""
    machines = [d for d in sorted(os.listdir(RESULTS_DIR))
                if d != "sim" and os.path.isdir(os.path.join(RESULTS_DIR, d))]
    return {r["algo"] for m in machines for r in measured_rows(m)}


def earlier_runs(machine):
    """Earlier bench runs kept under experiments/results/<machine>/runs/ (one row list per CSV, CUDA
    rows only): older commits, so only NCCL's rows compare across them (the run-to-run noise)."""
    return [[r for r in read_rows(p) if r["backend"] == "cuda"]
            for p in sorted(glob.glob(os.path.join(RESULTS_DIR, machine, "runs", "*.csv")))]


def baseline_rows():
    """NCCL numbers quoted from docs/hardware.md (every machine's file,
    experiments/baselines/nccl_<machine>_hardware_md.csv); busbw computed where the document omits it."""
    rows = []
    for path in BASELINES:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    for r in rows:
        r["world"] = int(r["world"])
        r["bytes"] = int(r["bytes"])
        r["graph"] = int(r["graph"])
        r["time_us"] = float(r["time_us"])
        stated = _num(r, "busbw_GBps")
        r["busbw_GBps"] = stated if stated is not None else (
            r["bytes"] / (r["time_us"] * 1e3) * bus_factor(r["op"], r["world"]))
    return rows


def machine_param(machine, key):
    """One value of experiments/machines/<machine>.ini (the simulator's machine file), as float."""
    with open(os.path.join(ROOT, "experiments", "machines", machine + ".ini")) as f:
        for line in f:
            k, _, v = line.split("#", 1)[0].partition("=")
            if k.strip() == key:
                return float(v)
    raise KeyError("%s not in experiments/machines/%s.ini" % (key, machine))


def tune_rows(machine):
    """The block-count sweeps (tune_*.csv) under experiments/results/<machine>/ (result_csvs): calibration
    input, never table or figure rows. Where several sweeps measured one algorithm at one block count in
    one cell, the newest sweep's row (run_key), as newest_runs does for the bench rows: a sweep run again
    with a newer binary replaces the rows of the kernels it superseded."""
    return sweep_rows(result_csvs(machine, "tune*.csv"))


def sweep_rows(paths):
    """Our rows of the block-count sweeps in `paths`, each (cell, algorithm, blocks) from the newest sweep."""
    rows = []
    for path in paths:
        rows += [r for r in read_rows(path) if r["backend"] == "cuda"]
    return newest_runs(rows, lambda r: cell(r) + (r["algo"], r["blocks"]))


def by(rows, **match):
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def series(rows, key="time_us_median"):
    """{algo: [(bytes, value), ...] sorted by bytes}."""
    out = {}
    for r in rows:
        out.setdefault(r["algo"], []).append((r["bytes"], r[key]))
    return {a: sorted(v) for a, v in out.items()}


def fmt_size(b):
    for shift, s in ((30, "G"), (20, "M"), (10, "K")):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d%s" % (b >> shift, s)
    return str(b)

"""PyTorch's own fused matmul + communication on this machine, for the same-call comparison with
symmcoll's fused bench (issue targets: ag_mm faster than torch's fused op; the fused table).

Run with torchrun, one process per GPU (multicast off: TORCH_SYMM_MEM_DISABLE_MULTICAST=1):
  torchrun --nproc-per-node 2 scripts/gpu/torch_fused.py --out torch_fused_h200x2.csv --machine h200x2
Shapes as symmcoll's fused bench names them: ag_mm gathers A (M x K, M/world rows per rank) and
multiplies by B (K x N); mm_rs multiplies each rank's A (M x K/world) by its B (K/world x N) and
reduce-scatters the M x N sum by rows. Rows: torch_fused (torch.ops.symm_mem.fused_*), torch_matmul
(the local matmul alone: M x N x K for ag_mm, M x N x K/world for mm_rs) and torch_nccl_matmul
(all_gather_into_tensor then matmul; matmul then reduce_scatter_tensor). Eager, and CUDA graph
where capture works (a row is left out where it does not, with a note). Times: per call, the max
over ranks of each rank's median / p10 / p90 of `iters` samples of `calls` calls between events.
max_rel_err: the fused result against torch_nccl_matmul's, max over ranks and rows of
max|a-b| / max|b| per row.
"""
import argparse
import csv
import os
import sys

import torch
import torch.distributed as dist

SHAPES = {"8b": (1792, 4096), "70b": (3584, 8192)}


def times(fn, iters, calls, graph):
    s = torch.cuda.Stream()
    if graph:
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(s):
            fn()  # warm-up outside the capture
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(calls):
                fn()
        run = g.replay
    else:
        def run():
            for _ in range(calls):
                fn()
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    dist.barrier()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for a, b in ev:
        a.record()
        run()
        b.record()
    torch.cuda.synchronize()
    us = sorted(a.elapsed_time(b) * 1e3 / calls for a, b in ev)
    q = lambda f: us[min(len(us) - 1, int(f * len(us)))]
    t = torch.tensor([q(0.5), q(0.1), q(0.9)], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def rel_err(got, want):
    got, want = got.double(), want.double()
    den = want.abs().amax(dim=1).clamp_min(1e-30)
    e = ((got - want).abs().amax(dim=1) / den).max()
    dist.all_reduce(e, op=dist.ReduceOp.MAX)
    return float(e)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="CSV to write (rank 0)")
    p.add_argument("--machine", required=True, help="machine column, e.g. h200x2")
    p.add_argument("--shape", default="8b,70b")
    p.add_argument("--m", default="4096,16384")
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--modes", default="eager,graph")
    a = p.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    import torch.distributed._symmetric_memory as symm_mem
    group = dist.group.WORLD
    name = group.group_name
    try:
        symm_mem.enable_symm_mem_for_group(name)
    except Exception as e:  # newer torch enables it on first use
        if rank == 0:
            print(f"# enable_symm_mem_for_group: {e}")
    rows = []
    torch.manual_seed(1234 + rank)
    for sh in a.shape.split(","):
        n, k = SHAPES[sh]
        for m in (int(x) for x in a.m.split(",")):
            for op in ("ag_mm", "mm_rs"):
                if op == "ag_mm":
                    A = torch.randn(m // world, k, device="cuda", dtype=torch.bfloat16)
                    B = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / k**0.5
                    Afull = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
                    fused = lambda: torch.ops.symm_mem.fused_all_gather_matmul(A, [B], gather_dim=0, group_name=name)[1][0]
                    def base():
                        dist.all_gather_into_tensor(Afull, A)
                        return Afull @ B
                    alone = lambda: Afull @ B
                    kk = k
                else:
                    A = torch.randn(m, k // world, device="cuda", dtype=torch.bfloat16)
                    B = torch.randn(k // world, n, device="cuda", dtype=torch.bfloat16) / k**0.5
                    out = torch.empty(m // world, n, device="cuda", dtype=torch.bfloat16)
                    fused = lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(A, B, "sum", scatter_dim=0, group_name=name)
                    def base():
                        dist.reduce_scatter_tensor(out, A @ B)
                        return out
                    alone = lambda: A @ B
                    kk = k // world
                err = rel_err(fused(), base().clone())
                for mode in a.modes.split(","):
                    for algo, fn, e in (("torch_matmul", alone, -1), ("torch_nccl_matmul", base, -1), ("torch_fused", fused, err)):
                        try:
                            med, p10, p90 = times(fn, a.iters, a.calls, mode == "graph")
                        except Exception as ex:
                            if rank == 0:
                                print(f"# {op} {sh} M{m} {algo} {mode}: not measured: {type(ex).__name__}: {str(ex)[:160]}")
                            torch.cuda.synchronize()
                            dist.barrier()
                            continue
                        rows.append(["torch", a.machine, world, op, algo, "bf16", m, n, k, int(mode == "graph"),
                                     f"{med:.3f}", f"{p10:.3f}", f"{p90:.3f}", f"{e:.6g}", torch.__version__])
                        if rank == 0:
                            print(f"{op:6s} {sh:4s} M{m:<6d} {mode:5s} {algo:18s} {med:9.2f} us  p10 {p10:9.2f}  p90 {p90:9.2f}  err {e:.3g}", flush=True)
    if rank == 0:
        with open(a.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["backend", "machine", "world", "op", "algo", "dtype", "M", "N", "K", "graph",
                        "time_us_median", "time_us_p10", "time_us_p90", "max_rel_err", "torch_version"])
            w.writerows(rows)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""symmcoll inside a torch.distributed program, one process per GPU: adopt the NCCL communicator of
torch's default process group (symmcoll.from_process_group) and all-reduce bf16 tensors with
symmcoll's "auto" choice, checked against torch.distributed.all_reduce of the same tensors.

    NCCL_NVLS_ENABLE=0 SYMMCOLL_LIBRARY=build/libsymmcoll.so \\
        torchrun --nproc_per_node 2 examples/python/torch_process_group.py"""

import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import symmcoll  # noqa: E402


def main():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", device_id=dev)
    warm = torch.ones(1, device=dev)
    dist.all_reduce(warm)  # the process group's NCCL communicator exists from here
    comm = symmcoll.from_process_group()
    worst = 0.0
    for n in (2048, 1 << 16, 1 << 22):
        g = torch.Generator(device=dev).manual_seed(1000 + rank)
        x = torch.empty(n, dtype=torch.bfloat16, device=dev).uniform_(-1, 1, generator=g)
        want = x.double()
        dist.all_reduce(want)
        out, res = comm.all_reduce(x, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        err = ((out.double() - want).abs().max() / want.abs().max()).item()
        worst = max(worst, err)
        if rank == 0:
            print("all_reduce bf16 %9d B, world %d: %-28s max rel err %.3g (vs torch's float64 all_reduce)"
                  % (2 * n, dist.get_world_size(), res.algo, err))
    comm.close()
    dist.destroy_process_group()
    ok = worst <= 2 ** -6
    if rank == 0:
        print("torch_process_group: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

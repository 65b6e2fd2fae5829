#!/usr/bin/env python3
"""symmcoll's CUDA backend from PyTorch on one GPU: N ranks in this process (symmcoll.CudaNode; NCCL
is not needed, and refuses two ranks on one GPU anyway), an all-reduce of bf16 tensors checked
against torch's own sum in float64. These are one GPU's memory, not NVLink: a correctness check
and a first run, not a performance claim.

    SYMMCOLL_LIBRARY=build/libsymmcoll.so python3 examples/python/torch_one_gpu.py [world]
Multicast stays off (set NCCL_NVLS_ENABLE=0 where the machine is shared)."""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import symmcoll  # noqa: E402


def main():
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    node = symmcoll.CudaNode(world=world, gpus=1)
    worst = 0.0
    for n in (2048, 1 << 16, 1 << 20):
        xs = [torch.empty(n, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1) for _ in range(world)]
        want = torch.stack([x.double() for x in xs]).sum(0)
        torch.cuda.synchronize()
        outs, res = node.all_reduce(xs)
        err = max(((o.double() - want).abs().max() / want.abs().max()).item() for o in outs)
        worst = max(worst, err)
        print("all_reduce bf16 %9d B on %d ranks, one GPU: %-28s max rel err %.3g" % (2 * n, world, res.algo, err))
    node.close()
    ok = worst <= 2 ** -7 * 2
    print("torch_one_gpu: %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

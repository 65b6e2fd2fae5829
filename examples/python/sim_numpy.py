#!/usr/bin/env python3
"""symmcoll's simulator from Python on numpy arrays: every collective and data type on a simulated
2x H200 node (the machine file experiments/machines/h200x2.ini), the algorithm "auto" chose, the
predicted time and the error of the simulated run against a float64 reference of your inputs.

    make build                                           # builds build/libsymmcoll.so
    /usr/bin/python3 examples/python/sim_numpy.py        # from the source tree
    PYTHONPATH=<prefix>/lib/symmcoll/python python3 sim_numpy.py   # after cmake --install

--quick: fewer sizes (the test suite runs it so)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import symmcoll  # noqa: E402


def main():
    quick = "--quick" in sys.argv[1:]
    machine = "h200x2"
    node = symmcoll.SimNode(machine)  # world: the machine's GPU count
    rng = np.random.default_rng(0)
    print("%s; %d simulated ranks on %s" % (symmcoll.version(), node.world, machine))
    print("%-15s %-5s %9s  %-34s %10s %10s" % ("op", "dtype", "bytes", "algorithm (auto)", "pred us", "rel err"))
    sizes = [1 << 12, 1 << 20] if quick else [1 << 12, 1 << 16, 1 << 20, 1 << 24]
    for op in ("all_reduce", "reduce_scatter", "all_gather"):
        for dtype in ("bf16", "fp16", "fp32"):
            for nbytes in sizes:
                elem = 4 if dtype == "fp32" else 2
                n = nbytes // elem if op != "all_gather" else nbytes // elem // node.world
                xs = [rng.uniform(-1, 1, n).astype(np.float32) for _ in range(node.world)]
                if dtype == "bf16":
                    xs = [symmcoll.to_bf16(x) for x in xs]
                elif dtype == "fp16":
                    xs = [x.astype(np.float16) for x in xs]
                outs, res = getattr(node, op)(xs)
                err = "%.2g" % res.max_rel_err if res.max_rel_err >= 0 else "-"
                print("%-15s %-5s %9d  %-34s %10.2f %10s" % (op, dtype, res.bytes, res.algo, res.predicted_us, err))
    return 0


if __name__ == "__main__":
    sys.exit(main())

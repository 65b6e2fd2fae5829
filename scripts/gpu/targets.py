#!/usr/bin/env python3
"""Targets table from a bench CSV (graph mode): ours (best algorithm at registry defaults) vs
NCCL's best (plain or symmetric), per op and size; optionally the best LL row of a tune CSV.
    scripts/gpu/targets.py bench_h200x4.csv [tune_h200x4.csv]
The logic lives in experiments/targets.py (make experiments writes the same table for the paper)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments"))
import targets  # noqa: E402

targets.main(sys.argv)

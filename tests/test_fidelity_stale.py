#!/usr/bin/python3
"""experiments/fidelity.py's stale rows (PLAN_CHANGES): a GPU row measured before a change to its plan
is not predicted, by commit ancestry in this repository's history and by the shard size the change
touches. Rows are built here; the commits are real ones of this repository (skipped where git cannot
tell, e.g. a shallow clone)."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plots"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "experiments"))
import data  # noqa: E402
import fidelity  # noqa: E402

BEFORE = "e6bc023"  # older than PLAN_CHANGES from 4f1e9e1 on
COMMITS = [c[0] for c in fidelity.PLAN_CHANGES]
OWN, BIG, PUSH, CAP, CHUNKS, HALF, ONE, PLAIN = COMMITS[:8]
IDLE, ADVANCE, BARRIER = "f605212", "bc41760", "048a34b"  # an idle side stream; the device programs' kernels
LOCKSTEP = "c10e405"  # ranks sharing a GPU: eager calls in lockstep
assert {IDLE, ADVANCE, BARRIER, LOCKSTEP} <= set(COMMITS)


def row(algo, sha, shard=64 << 20, world=2):
    return {"algo": algo, "git_sha": sha, "bytes": shard * world, "world": world}


class Stale(unittest.TestCase):
    def setUp(self):
        if any(data.is_ancestor(BEFORE, c) is not True
               for c in (PUSH, CAP, CHUNKS, HALF, ONE, IDLE, ADVANCE, BARRIER, LOCKSTEP)):
            self.skipTest("git cannot order this repository's commits here")

    def commit(self, r):
        ch = fidelity.stale_change(r)
        return ch[0] if ch else None

    def test_a_row_before_a_change_is_stale_after_it_is_not(self):
        self.assertEqual(self.commit(row("mm_rs.gemm_ce_acc", PUSH)), ONE)
        self.assertIsNone(self.commit(row("mm_rs.gemm_ce_acc", ONE)))
        self.assertIsNone(self.commit(row("mm_rs.gemm_ce_acc", ONE + "-dirty")))

    def test_the_newest_change_a_row_predates_is_named(self):
        # IDLE (no idle side stream) changed every ag_mm copy-engine plan: it is newer than HALF.
        self.assertEqual(self.commit(row("ag_mm.ce_chunk_gemm", BEFORE)), IDLE)
        self.assertEqual(self.commit(row("ag_mm.ce_chunk_gemm", HALF)), IDLE)
        self.assertIsNone(self.commit(row("ag_mm.ce_chunk_gemm", IDLE)))
        self.assertEqual(self.commit(row("mm_rs.gemm_ce_acc", BEFORE)), ONE)
        self.assertEqual(self.commit(row("reduce_scatter.ce_st_ring_reduce", BEFORE, world=4)), CAP)
        self.assertEqual(self.commit(row("reduce_scatter.ce_st_chunk_reduce", BEFORE, world=4)), PUSH)
        # IDLE touched the reduce-scatters at world 2 only (one peer: one side stream of two used).
        self.assertEqual(self.commit(row("reduce_scatter.ce_st_ring_reduce", CAP)), IDLE)
        self.assertIsNone(self.commit(row("reduce_scatter.ce_st_ring_reduce", CAP, world=4)))
        self.assertEqual(self.commit(row("all_gather.ce_sm_st", BEFORE, shard=16 << 20)), OWN)
        # ... and all_gather ce_sm below 4 MiB a shard (its SMs carry every byte: no copy stream).
        self.assertEqual(self.commit(row("all_gather.ce_sm_st", OWN, shard=1 << 20)), IDLE)

    def test_a_shard_the_change_leaves_alone_stays(self):
        # One 4 MiB chunk per peer: the same verbs before and after push_chunks.
        self.assertIsNone(self.commit(row("reduce_scatter.ce_st_chunk_reduce", BEFORE, shard=4 << 20, world=4)))
        self.assertEqual(self.commit(row("reduce_scatter.ce_st_chunk_reduce", BEFORE, shard=8 << 20, world=4)), PUSH)
        # The all-gathers' chunks are 128 MiB since BIG (32 MiB before it): push_chunks changed
        # nothing for them at 128 MiB a shard.
        self.assertIsNone(self.commit(row("all_gather.ce_sm_st", BIG, shard=128 << 20)))
        self.assertEqual(self.commit(row("all_gather.ce_sm_st", OWN, shard=64 << 20)), BIG)
        self.assertEqual(self.commit(row("all_gather.ce_sm_st", OWN, shard=16 << 20)), None)

    def test_a_change_to_one_world_leaves_the_others(self):
        # IDLE's idle side stream: the ring reduce-scatter's at world 2 only.
        self.assertEqual(self.commit(row("reduce_scatter.ce_st_ring_reduce", CAP, world=2)), IDLE)
        self.assertIsNone(self.commit(row("reduce_scatter.ce_st_ring_reduce", CAP, world=4)))

    def test_a_kernel_change_makes_every_older_row_of_its_programs_stale(self):
        # The epoch advance (ADVANCE) changed every device program at every world; the barrier's
        # wait order (BARRIER) every one but the LL programs, which have no barrier.
        for w in (2, 4):
            self.assertEqual(self.commit(row("all_reduce.st_ll_reduce", ONE, world=w)), ADVANCE)
            self.assertIsNone(self.commit(row("all_reduce.st_ll_reduce", ADVANCE, world=w)))
            self.assertEqual(self.commit(row("all_reduce.ld_reduce", ADVANCE, world=w)), BARRIER)
            self.assertIsNone(self.commit(row("all_reduce.ld_reduce", BARRIER, world=w)))
        # A host plan is not a device program: the kernel changes leave its rows.
        self.assertIsNone(self.commit(row("all_gather.ce_st", BARRIER)))

    def test_the_kernel_entries_name_every_device_program_of_the_collectives(self):
        # The registry's collectives (paper/generated/algorithms.md, `symmcoll list`) less the host
        # plans (ce_*) and the multicast programs (never measured): a device program added later and
        # missing from DEVICE_PROGRAMS would be judged on rows of kernels since changed.
        with open(os.path.join(os.path.dirname(HERE), "paper", "generated", "algorithms.md")) as f:
            rows = [l.split("|") for l in f if l.startswith("| `")]
        programs = {r[1].strip().strip("`") for r in rows
                    if r[3].strip() in ("all_reduce", "reduce_scatter", "all_gather") and r[6].strip() == "no"
                    and ".ce_" not in r[1]}
        self.assertEqual(programs, set(fidelity.DEVICE_PROGRAMS))

    def test_the_team_lockstep_makes_older_eager_rows_of_ranks_sharing_a_gpu_stale(self):
        # Every algorithm alike, eager only, and only where ranks share a GPU (a team's gpu_ranks).
        for algo in ("all_gather.ce_st", "reduce_scatter.ld_reduce", "mm_rs.tile_st_peer_acc"):
            eager = dict(row(algo, BARRIER, world=4), graph=0, gpu_ranks=4)
            self.assertEqual(self.commit(eager), LOCKSTEP)
            self.assertIsNone(self.commit(dict(eager, git_sha=LOCKSTEP + "-dirty")))
            self.assertIsNone(self.commit(dict(eager, graph=1)))
            self.assertIsNone(self.commit(dict(eager, gpu_ranks=1)))

    def test_unlisted_algorithms_and_unknown_commits_stay(self):
        self.assertIsNone(self.commit(row("mm_rs.tile_st_peer_acc", BEFORE)))
        self.assertIsNone(self.commit(row("mm_rs.gemm_ce_acc", "not-a-sha")))
        self.assertIsNone(self.commit(row("mm_rs.gemm_ce_acc", "0000000")))

    def test_rows_before_the_one_step_tail_are_predicted_with_the_old_one(self):
        # Not stale: the simulator models both (sweep --serial-tail), by the same ancestry.
        self.assertIs(data.is_ancestor(fidelity.TAIL_SINCE, "7e12b0b"), False)  # the commit before it
        self.assertIs(data.is_ancestor(fidelity.TAIL_SINCE, "5dd3678-dirty"), True)
        self.assertIsNone(self.commit(row("all_gather.ld", "7e12b0b")))


if __name__ == "__main__":
    unittest.main()

"""The Python package (python/symmcoll) over libsymmcoll.so's C ABI, on the simulator: every op and
dtype moves the caller's numpy bytes and matches a float64 reference computed here; "auto" names
what symmcoll.choose_algo names; errors arrive as SymmcollError with the library's one line.
Run by ctest with SYMMCOLL_LIBRARY set to the build's libsymmcoll.so."""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import symmcoll  # noqa: E402
from symmcoll import SymmcollError  # noqa: E402

RNG = np.random.default_rng(7)


def inputs(world, n, dtype):
    xs = [RNG.uniform(-1, 1, n).astype(np.float32) for _ in range(world)]
    if dtype == "bf16":
        return [symmcoll.to_bf16(x) for x in xs]
    return [x.astype(np.float16 if dtype == "fp16" else np.float32) for x in xs]


def as64(x, dtype):
    return (symmcoll.from_bf16(x) if dtype == "bf16" else x).astype(np.float64)


def rel_err(got, want):
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


BOUND = {"fp32": 1e-6, "fp16": 4e-3, "bf16": 3e-2}


class SimNodeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.node = symmcoll.SimNode("h200x2", world=2)

    def test_node(self):
        self.assertEqual(self.node.world, 2)
        self.assertEqual([c.rank for c in self.node.comms], [0, 1])
        self.assertTrue(all(c.backend == "sim" for c in self.node.comms))

    def test_all_reduce_every_dtype_and_op(self):
        for dtype in ("fp32", "fp16", "bf16"):
            for op, f in (("sum", np.sum), ("max", np.max), ("min", np.min)):
                xs = inputs(2, 4096, dtype)
                outs, res = self.node.all_reduce(xs, op=op)
                want = f(np.stack([as64(x, dtype) for x in xs]), axis=0)
                for o in outs:
                    self.assertEqual(o.dtype, xs[0].dtype)
                    self.assertLessEqual(rel_err(as64(o, dtype), want), BOUND[dtype], (dtype, op))
                self.assertTrue(res.complete)
                self.assertGreater(res.predicted_us, 0)
                self.assertTrue(res.algo.startswith("all_reduce."), res.algo)
                self.assertGreaterEqual(res.max_rel_err, 0)
                self.assertLessEqual(res.max_rel_err, res.err_bound)
                self.assertEqual(res.bytes, 4096 * xs[0].itemsize)

    def test_reduce_scatter_and_all_gather(self):
        for dtype in ("fp32", "bf16"):
            xs = inputs(2, 8192, dtype)
            outs, res = self.node.reduce_scatter(xs)
            total = as64(xs[0], dtype) + as64(xs[1], dtype)
            for r, o in enumerate(outs):
                self.assertEqual(o.size, 4096)
                self.assertLessEqual(rel_err(as64(o, dtype), total[r * 4096:(r + 1) * 4096]), BOUND[dtype])
            self.assertTrue(res.algo.startswith("reduce_scatter."))
            outs, res = self.node.all_gather(xs)
            for o in outs:
                self.assertEqual(o.size, 2 * 8192)
                np.testing.assert_array_equal(o, np.concatenate(xs))  # gathered bytes are copied exactly
            self.assertTrue(res.algo.startswith("all_gather."))

    def test_named_algorithm_and_auto_agree_with_choose_algo(self):
        xs = inputs(2, 1 << 16, "bf16")
        _, res = self.node.all_reduce(xs, algo="two_shot")
        self.assertEqual(res.algo, "all_reduce.rs_ld_ag_st")
        _, res = self.node.all_reduce(xs)
        self.assertEqual(res.algo, symmcoll.choose_algo("all_reduce", 1 << 17, 2, "bf16", "h200x2", True))

    def test_in_place(self):
        xs = inputs(2, 2048, "fp32")
        want = as64(xs[0], "fp32") + as64(xs[1], "fp32")
        outs, _ = self.node.all_reduce(xs, outputs=xs)
        self.assertIs(outs[0], xs[0])
        self.assertLessEqual(rel_err(xs[1].astype(np.float64), want), 1e-6)

    def test_errors_are_one_line(self):
        xs = inputs(2, 1024, "fp32")
        with self.assertRaises(SymmcollError) as e:
            self.node.all_reduce(xs, algo="no_such_algo")
        self.assertIn("no_such_algo", str(e.exception))
        self.assertNotIn("\n", str(e.exception))
        self.assertEqual(e.exception.kind, "invalid argument")
        with self.assertRaises(SymmcollError):
            self.node.reduce_scatter(inputs(2, 1023, "fp32"))
        with self.assertRaises(SymmcollError):
            self.node.all_reduce([np.zeros(16, np.float64)] * 2)
        with self.assertRaises(SymmcollError):
            self.node.all_reduce(xs, op="prod")
        with self.assertRaises(SymmcollError):
            self.node.all_reduce(xs[:1])
        with self.assertRaises(SymmcollError):
            symmcoll.SimNode("no_such_machine")
        with self.assertRaises(SymmcollError):
            symmcoll.choose_algo("broadcast", 4096, 2)


class TraceTest(unittest.TestCase):
    def test_each_call_writes_its_timeline(self):
        import json
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            node = symmcoll.SimNode("h200x2", world=2, trace_dir=d)
            _, res = node.all_reduce(inputs(2, 4096, "bf16"), algo="one_shot")
            self.assertEqual(res.trace_path, os.path.join(d, "call0_all_reduce.ld_reduce.json"))
            with open(res.trace_path) as f:
                events = json.load(f)
            events = events["traceEvents"] if isinstance(events, dict) else events
            self.assertTrue(any(e.get("name") == "block" for e in events))
            _, res = node.all_gather(inputs(2, 4096, "bf16"))
            self.assertTrue(os.path.basename(res.trace_path).startswith("call1_all_gather."))
            node.close()
        self.assertEqual(SimNodeTest.node.all_reduce(inputs(2, 64, "fp32"))[1].trace_path, "")


class LibraryTest(unittest.TestCase):
    def test_version_and_bf16(self):
        self.assertIn("symmcoll", symmcoll.version())
        x = np.array([1.0, -2.5, 3.140625, 0.0], np.float32)
        np.testing.assert_array_equal(symmcoll.from_bf16(symmcoll.to_bf16(x)), x)  # exact in bf16

    def test_cuda_without_a_gpu_is_an_error_not_a_crash(self):
        if not symmcoll.has_cuda():
            with self.assertRaises(SymmcollError) as e:
                symmcoll.CudaNode(2)
            self.assertEqual(e.exception.kind, "unsupported")
            return
        if os.environ.get("SYMM_TEST_HAVE_GPU") == "1":
            self.skipTest("a GPU is present: the CUDA path is tested on the GPU machine")
        with self.assertRaises(SymmcollError) as e:
            symmcoll.CudaNode(2)
        self.assertNotIn("\n", str(e.exception))


if __name__ == "__main__":
    unittest.main()

"""symmcoll from Python: the collectives of libsymmcoll.so (its C ABI, include/symmcoll/symmcoll_c.h)
on numpy arrays (the simulator) and torch CUDA tensors (the CUDA backend), through ctypes.

    import numpy as np, symmcoll
    node = symmcoll.SimNode("h200x4")                       # 4 simulated ranks, this process
    xs = [np.random.uniform(-1, 1, 1 << 16).astype(np.float32) for _ in range(node.world)]
    outs, res = node.all_reduce(xs)                         # algo="auto"
    print(res.algo, res.predicted_us, res.max_rel_err)      # chosen, predicted time, check

Counts follow NCCL: all_reduce keeps the size, reduce_scatter gives each rank 1/world of it,
all_gather world times it. Data types: float32, float16, and bfloat16 as uint16 bit patterns in
numpy (to_bf16 / from_bf16) or torch.bfloat16. Every failure raises SymmcollError carrying the
library's one-line message. `algo` is a registry name (`symmcoll list`) or "auto".

Communicators:
  SimNode(machine, world)     a simulated node; the bytes are the caller's (checked against a
                              float64 reference up to check_up_to bytes)
  CudaNode(world, gpus)       N ranks in this process on one GPU or several (no NCCL needed);
                              every rank's tensors on its GPU (rank r on GPU r % gpus)
  from_nccl(comm_ptr)         one rank adopting an ncclComm_t (one process per GPU)
  from_process_group(pg)      the same for a torch.distributed NCCL process group, where torch
                              exposes the communicator's pointer
"""

import ctypes
from collections import namedtuple

from ._lib import CallInfo, CudaNodeOptions, SimOptions, SymmcollError, check, lib, library_path

__all__ = ["SymmcollError", "Result", "Comm", "SimNode", "CudaNode", "from_nccl", "from_process_group",
           "choose_algo", "has_cuda", "version", "to_bf16", "from_bf16", "library_path"]

DTYPES = {"bf16": 0, "fp16": 1, "fp32": 2}
OPS = {"sum": 0, "max": 1, "min": 2}
ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}

Result = namedtuple("Result", "algo bytes complete predicted_us max_rel_err err_bound trace_path")
Result.__doc__ = ("What a call ran: the algorithm's registry id, the nccl-tests size in bytes, whether the "
                  "collective has run, and (simulator) the predicted time in us, the error against the "
                  "float64 reference (-1: not checked), its bound, and the call's timeline (SimNode's "
                  "trace_dir; a Perfetto JSON, \"\" without).")


def version():
    return lib.symmcollGetVersion().decode()


def has_cuda():
    """True if libsymmcoll.so was built with the CUDA backend."""
    return bool(lib.symmcollHasCuda())


def choose_algo(op, nbytes, world, dtype="bf16", machine="", graph=True):
    """The algorithm "auto" runs for an op ("all_reduce", "reduce_scatter", "all_gather"), size in bytes
    (nccl-tests size), world, dtype and machine (the machine's measured table; "" for the built-in rule)."""
    out = ctypes.c_char_p()
    check(lib.symmcollChooseAlgo(op.encode(), int(nbytes), int(world), _dtype_code(dtype), machine.encode(),
                                 int(bool(graph)), ctypes.byref(out)))
    return out.value.decode()


# ---- bfloat16 in numpy: uint16 bit patterns --------------------------------------------------
def to_bf16(x):
    """float32 values -> bfloat16 bit patterns (uint16), rounded to nearest even."""
    import numpy as np
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    r = ((u >> 16) & 1) + 0x7FFF
    return ((u + r) >> 16).astype(np.uint16)


def from_bf16(b):
    """bfloat16 bit patterns (uint16) -> float32."""
    import numpy as np
    return (np.ascontiguousarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


# ---- buffers: numpy arrays (host) and torch tensors (device) ---------------------------------
def _dtype_code(name):
    if name not in DTYPES:
        raise SymmcollError(1, "symmcoll: dtype '%s' is not bf16, fp16 or fp32" % name)
    return DTYPES[name]


def _is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def _dtype_of(x, dtype=None):
    """The symmcoll dtype of a buffer: numpy float32 / float16 / uint16 (bf16 bits), torch float32 /
    float16 / bfloat16; `dtype` names it where the buffer's own type cannot (uint16 as bf16)."""
    if _is_torch(x):
        name = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}.get(str(x.dtype))
    else:
        name = {"float32": "fp32", "float16": "fp16", "uint16": "bf16"}.get(str(x.dtype))
    if name is None:
        raise SymmcollError(1, "symmcoll: buffers of %s are not supported (float32, float16, bfloat16; "
                               "numpy holds bfloat16 as uint16, see to_bf16)" % x.dtype)
    if dtype is not None and dtype != name:
        raise SymmcollError(1, "symmcoll: dtype '%s' asked for a buffer of %s" % (dtype, x.dtype))
    return name


def _ptr(x):
    if _is_torch(x):
        if not x.is_contiguous():
            raise SymmcollError(1, "symmcoll: a tensor must be contiguous")
        return ctypes.c_void_p(x.data_ptr())
    if not x.flags["C_CONTIGUOUS"]:
        raise SymmcollError(1, "symmcoll: an array must be C-contiguous")
    return ctypes.c_void_p(x.ctypes.data)


def _numel(x):
    return x.numel() if _is_torch(x) else x.size


def _empty_like(x, n):
    if _is_torch(x):
        import torch
        return torch.empty(n, dtype=x.dtype, device=x.device)
    import numpy as np
    return np.empty(n, dtype=x.dtype)


def _result(info):
    return Result(info.algo.decode() if info.algo else "", info.bytes, bool(info.complete), info.predicted_us,
                  info.max_rel_err, info.err_bound, info.trace_path.decode() if info.trace_path else "")


class Comm:
    """One rank's communicator (a handle of the C ABI). Made by SimNode, CudaNode, from_nccl."""

    def __init__(self, handle, owner=None):
        self._h = ctypes.c_void_p(handle)
        self._owner = owner  # keeps the node alive while a rank's handle is used
        r, w, b = ctypes.c_int(), ctypes.c_int(), ctypes.c_char_p()
        check(lib.symmcollCommRank(self._h, ctypes.byref(r)))
        check(lib.symmcollCommWorld(self._h, ctypes.byref(w)))
        check(lib.symmcollCommBackend(self._h, ctypes.byref(b)))
        self.rank, self.world, self.backend = r.value, w.value, b.value.decode()

    def close(self):
        if self._h is not None and self._h.value:
            check(lib.symmcollCommDestroy(self._h))
        self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _handle(self):
        if self._h is None:
            raise SymmcollError(1, "symmcoll: the communicator is closed")
        return self._h

    def _stream(self, stream):
        if stream is None:
            return None
        return ctypes.c_void_p(getattr(stream, "cuda_stream", stream))

    def all_reduce(self, send, recv=None, op="sum", algo="auto", stream=None, dtype=None):
        """recv (same size as send; in place if recv is send); returns (recv, Result)."""
        t = _dtype_of(send, dtype)
        recv = _empty_like(send, _numel(send)) if recv is None else recv
        info = CallInfo()
        check(lib.symmcollAllReduce(_ptr(send), _ptr(recv), _numel(send), DTYPES[t], _op(op), self._handle(),
                                    self._stream(stream), algo.encode(), ctypes.byref(info)))
        return recv, _result(info)

    def reduce_scatter(self, send, recv=None, op="sum", algo="auto", stream=None, dtype=None):
        """This rank's 1/world of the reduced send; returns (recv, Result)."""
        t = _dtype_of(send, dtype)
        n = _numel(send)
        if n % self.world:
            raise SymmcollError(1, "symmcoll: reduce_scatter of %d elements over %d ranks" % (n, self.world))
        recv = _empty_like(send, n // self.world) if recv is None else recv
        info = CallInfo()
        check(lib.symmcollReduceScatter(_ptr(send), _ptr(recv), n // self.world, DTYPES[t], _op(op), self._handle(),
                                        self._stream(stream), algo.encode(), ctypes.byref(info)))
        return recv, _result(info)

    def all_gather(self, send, recv=None, algo="auto", stream=None, dtype=None):
        """Every rank's send, in rank order (world times its size); returns (recv, Result)."""
        t = _dtype_of(send, dtype)
        n = _numel(send)
        recv = _empty_like(send, n * self.world) if recv is None else recv
        info = CallInfo()
        check(lib.symmcollAllGather(_ptr(send), _ptr(recv), n, DTYPES[t], self._handle(), self._stream(stream),
                                    algo.encode(), ctypes.byref(info)))
        return recv, _result(info)

    def synchronize(self):
        check(lib.symmcollSynchronize(self._handle()))


def _op(op):
    if op not in OPS:
        raise SymmcollError(1, "symmcoll: reduction '%s' is not sum, max or min" % op)
    return OPS[op]


class _Node:
    """Communicators of every rank in this process, called rank after rank."""

    def __init__(self, handles):
        self.comms = [Comm(h, self) for h in handles]
        self.world = len(self.comms)

    def _each(self, name, inputs, outputs, **kw):
        if len(inputs) != self.world:
            raise SymmcollError(1, "symmcoll: %d inputs for %d ranks" % (len(inputs), self.world))
        outputs = outputs or [None] * self.world
        outs, res = [], None
        for c, x, y in zip(self.comms, inputs, outputs):
            y, res = getattr(c, name)(x, y, **kw)
            outs.append(y)
        self._after()
        return outs, res

    def _after(self):
        pass

    def all_reduce(self, inputs, outputs=None, op="sum", algo="auto"):
        """inputs: one buffer per rank. Returns (outputs, Result of the call that completed it)."""
        return self._each("all_reduce", inputs, outputs, op=op, algo=algo)

    def reduce_scatter(self, inputs, outputs=None, op="sum", algo="auto"):
        return self._each("reduce_scatter", inputs, outputs, op=op, algo=algo)

    def all_gather(self, inputs, outputs=None, algo="auto"):
        return self._each("all_gather", inputs, outputs, algo=algo)

    def close(self):
        for c in self.comms:
            c.close()


class SimNode(_Node):
    """A simulated node: machine file name (experiments/machines: h200x2, h200x4, h200x8, ...) or path,
    world (0: the machine's GPU count), CUDA-graph or eager launch, checked with data up to
    check_up_to bytes. Buffers are numpy arrays; every rank's input is given at once. trace_dir (an
    existing directory): each collective writes its timeline there (Result.trace_path; open it in
    ui.perfetto.dev)."""

    def __init__(self, machine="h200x4", world=0, graph=True, check_up_to=16 << 20, seed=1, trace_dir=None):
        self._trace_dir = trace_dir.encode() if trace_dir else None  # kept alive: the options point at it
        o = SimOptions(machine.encode(), int(world), int(bool(graph)), int(check_up_to), int(seed), self._trace_dir)
        handles = (ctypes.c_void_p * 64)()
        n = ctypes.c_int()
        check(lib.symmcollSimNodeCreate(ctypes.byref(o), handles, 64, ctypes.byref(n)))
        super().__init__([handles[i] for i in range(n.value)])


class CudaNode(_Node):
    """N ranks in this process on the visible GPUs (rank r on GPU r % gpus; one GPU is enough): buffers
    are torch CUDA tensors (rank r's on its GPU). Each collective is called on every rank, rank after
    rank, on the communicators' own streams, then every rank is synchronized: the results are ready
    when the call returns. Order it after your own GPU work (torch.cuda.synchronize()) first. With
    four or eight ranks on one GPU, the copy-engine plans (all_gather ce and ce_sm, reduce_scatter ce
    and ce_overlap) are not measured through this API: ranks' streams may share a hardware queue
    (include/symmcoll/cuda.h)."""

    def __init__(self, world=2, gpus=0, heap_bytes=0, staging_bytes=0):
        if not has_cuda():
            raise SymmcollError(2, "symmcoll: this libsymmcoll.so was built without the CUDA backend")
        o = CudaNodeOptions(int(world), int(gpus), int(heap_bytes), int(staging_bytes))
        handles = (ctypes.c_void_p * 64)()
        n = ctypes.c_int()
        check(lib.symmcollCudaNodeCreate(ctypes.byref(o), handles, 64, ctypes.byref(n)))
        super().__init__([handles[i] for i in range(n.value)])

    def _after(self):
        for c in self.comms:
            c.synchronize()


def from_nccl(comm_ptr):
    """A Comm adopting an ncclComm_t (its address as an int) of this process's current CUDA device."""
    h = ctypes.c_void_p()
    check(lib.symmcollCudaCommFromNccl(ctypes.c_void_p(int(comm_ptr)), ctypes.byref(h)))
    return Comm(h.value)


def from_process_group(pg=None):
    """A Comm over torch.distributed's NCCL process group (the default group if None), one process per
    GPU (torchrun). Needs a torch whose NCCL backend exposes its communicator (`_comm_ptr()`)."""
    import torch
    import torch.distributed as dist
    pg = pg or dist.distributed_c10d._get_default_group()
    backend = pg._get_backend(torch.device("cuda", torch.cuda.current_device()))
    if not hasattr(backend, "_comm_ptr"):
        raise SymmcollError(2, "symmcoll: this torch's NCCL process group does not expose its communicator "
                               "(_comm_ptr); make an ncclComm_t yourself and use from_nccl")
    return from_nccl(backend._comm_ptr())

"""ctypes bindings of libsymmcoll.so (include/symmcoll/symmcoll_c.h): the library is found, its
functions get their argument and result types, and a failed call raises SymmcollError with the
library's one-line message. No compiled extension: any Python 3 and any torch build can load it."""

import ctypes
import os

__all__ = ["lib", "check", "SymmcollError", "CallInfo", "SimOptions", "CudaNodeOptions", "library_path"]

RESULT_NAMES = {0: "success", 1: "invalid argument", 2: "unsupported", 3: "deadlock", 4: "timeout", 5: "race",
                6: "CUDA error", 7: "I/O error", 8: "internal error"}


class SymmcollError(RuntimeError):
    """A failed symmcoll call: `code` is the C ABI's result (symmcollResult_t), `str()` its one line."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.kind = RESULT_NAMES.get(code, "error %d" % code)


class CallInfo(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_char_p), ("bytes", ctypes.c_size_t), ("complete", ctypes.c_int),
                ("predicted_us", ctypes.c_double), ("max_rel_err", ctypes.c_double), ("err_bound", ctypes.c_double),
                ("trace_path", ctypes.c_char_p)]


class SimOptions(ctypes.Structure):
    _fields_ = [("machine", ctypes.c_char_p), ("world", ctypes.c_int), ("graph", ctypes.c_int),
                ("check_up_to", ctypes.c_size_t), ("seed", ctypes.c_uint64), ("trace_dir", ctypes.c_char_p)]


class CudaNodeOptions(ctypes.Structure):
    _fields_ = [("world", ctypes.c_int), ("gpus", ctypes.c_int), ("heap_bytes", ctypes.c_size_t),
                ("staging_bytes", ctypes.c_size_t)]


def _candidates():
    """Where libsymmcoll.so may be: $SYMMCOLL_LIBRARY, then beside an installed package
    (<prefix>/lib/symmcoll/python/symmcoll -> <prefix>/lib), then a build of the source tree
    (python/symmcoll -> build/), then the loader's own search (LD_LIBRARY_PATH, ldconfig)."""
    env = os.environ.get("SYMMCOLL_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "libsymmcoll.so"))
    yield os.path.normpath(os.path.join(here, "..", "..", "build", "libsymmcoll.so"))
    yield "libsymmcoll.so"


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("symmcoll: libsymmcoll.so not found; build it (make build) or install it (cmake --install), "
                      "or set SYMMCOLL_LIBRARY to its path. Tried: " + "; ".join(tried))


lib, library_path = _load()

_P = ctypes.c_void_p
_R = ctypes.c_int
_SIGNATURES = {
    "symmcollGetLastError": (ctypes.c_char_p, []),
    "symmcollGetVersion": (ctypes.c_char_p, []),
    "symmcollHasCuda": (ctypes.c_int, []),
    "symmcollSimNodeCreate": (_R, [ctypes.POINTER(SimOptions), ctypes.POINTER(_P), ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_int)]),
    "symmcollCudaNodeCreate": (_R, [ctypes.POINTER(CudaNodeOptions), ctypes.POINTER(_P), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int)]),
    "symmcollCudaCommFromNccl": (_R, [_P, ctypes.POINTER(_P)]),
    "symmcollCommDestroy": (_R, [_P]),
    "symmcollCommRank": (_R, [_P, ctypes.POINTER(ctypes.c_int)]),
    "symmcollCommWorld": (_R, [_P, ctypes.POINTER(ctypes.c_int)]),
    "symmcollCommBackend": (_R, [_P, ctypes.POINTER(ctypes.c_char_p)]),
    "symmcollMemAlloc": (_R, [_P, ctypes.c_size_t, ctypes.POINTER(_P)]),
    "symmcollMemFree": (_R, [_P, _P]),
    "symmcollAllReduce": (_R, [_P, _P, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _P, _P, ctypes.c_char_p,
                               ctypes.POINTER(CallInfo)]),
    "symmcollReduceScatter": (_R, [_P, _P, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _P, _P, ctypes.c_char_p,
                                   ctypes.POINTER(CallInfo)]),
    "symmcollAllGather": (_R, [_P, _P, ctypes.c_size_t, ctypes.c_int, _P, _P, ctypes.c_char_p,
                               ctypes.POINTER(CallInfo)]),
    "symmcollSynchronize": (_R, [_P]),
    "symmcollChooseAlgo": (_R, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def check(result):
    """Raises SymmcollError with the library's message unless `result` is symmcollSuccess."""
    if result != 0:
        raise SymmcollError(result, lib.symmcollGetLastError().decode())

/* symmcoll's C ABI: the library's collectives from C, and from any language that loads a shared
 * library (Python's ctypes: the `symmcoll` package in python/). NCCL's style: opaque communicator
 * handles, counts in elements, a result code from every call and the one-line message of the last
 * failure in this thread (symmcollGetLastError). No C++ exception crosses this interface.
 *
 *   libsymmcoll.so        the shared library (`cmake --install` puts it in <prefix>/lib)
 *
 * Communicators come three ways:
 *   symmcollSimNodeCreate     a simulated node in this process (one handle per rank; host buffers)
 *   symmcollCudaNodeCreate    N ranks in this process on one GPU or several (device buffers)
 *   symmcollCudaCommFromNccl  one rank adopting an existing ncclComm_t (one process per GPU)
 * The CUDA ones exist in a library built with the CUDA backend (symmcollHasCuda() says); in one
 * built without it they return symmcollUnsupported.
 *
 * The collectives follow NCCL's count conventions: all-reduce `count` elements; reduce-scatter
 * `recvcount` (the input holds recvcount x world); all-gather `sendcount` (the output holds
 * sendcount x world). `algo` is a registry name (`symmcoll list`: alias, id suffix or full id) or
 * NULL / "auto". `stream` is a cudaStream_t for the CUDA communicators (NULL: the communicator's
 * own) and ignored by the simulator. The simulated node runs a collective when its last rank has
 * called (call rank 0, 1, ... in turn); that call's info has complete = 1 and the prediction.
 * The semantics of every call are those of include/symmcoll/symmcoll.h and cuda.h.
 */
#ifndef SYMMCOLL_C_H
#define SYMMCOLL_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct symmcollComm* symmcollComm_t;

typedef enum {
  symmcollSuccess = 0,
  symmcollInvalidArgument = 1, /* bad input: sizes, names, world, null pointers */
  symmcollUnsupported = 2,     /* valid input this algorithm, machine or build cannot do */
  symmcollDeadlock = 3,        /* the simulator found a wait that can never be satisfied */
  symmcollTimeout = 4,         /* a bounded wait expired on a GPU (the message names rank, block, slot) */
  symmcollRace = 5,            /* the simulator found a read of bytes not yet visible to the reader */
  symmcollCudaError = 6,       /* a CUDA or NCCL call failed */
  symmcollIoError = 7,         /* a file could not be read or written */
  symmcollInternalError = 8
} symmcollResult_t;

typedef enum { symmcollBfloat16 = 0, symmcollFloat16 = 1, symmcollFloat32 = 2 } symmcollDataType_t;
typedef enum { symmcollSum = 0, symmcollMax = 1, symmcollMin = 2 } symmcollRedOp_t;

/* What a call ran (symmcoll.h's CallInfo). */
typedef struct {
  const char* algo;       /* the algorithm's registry id, e.g. "all_reduce.st_ll_reduce" (static storage) */
  size_t bytes;           /* nccl-tests size: all-reduce buffer, reduce-scatter input, all-gather output */
  int complete;           /* 1: the collective has run (simulator: every rank has called) */
  double predicted_us;    /* simulator: predicted latency of the call; -1 otherwise */
  double max_rel_err;     /* simulator: error against the float64 reference; -1: not checked */
  double err_bound;       /* simulator: the bound max_rel_err is held to */
  const char* trace_path; /* simulator with trace_dir: the call's timeline (Perfetto JSON); "" otherwise.
                             Valid until the communicator's next call */
} symmcollCallInfo_t;

typedef struct {
  const char* machine;   /* machine file name or path; NULL: "h200x4" */
  int world;             /* 0: the machine's GPU count */
  int graph;             /* 1: CUDA-graph launch latency (the default), 0: eager */
  size_t check_up_to;    /* run with the caller's data up to this many bytes; 0: 16 MiB */
  uint64_t seed;         /* 0: 1 */
  const char* trace_dir; /* NULL or "": no traces; else each collective's timeline goes there
                            (call<N>_<algorithm id>.json; the directory must exist) */
} symmcollSimOptions_t;

typedef struct {
  int world;            /* 2..8 */
  int gpus;             /* 0: every visible GPU */
  size_t heap_bytes;    /* symmetric memory per rank; 0: 256 MiB */
  size_t staging_bytes; /* of it, for buffers from outside it; 0: 64 MiB */
} symmcollCudaNodeOptions_t;

/* The one-line message of the last failed call in this thread ("" if none). */
const char* symmcollGetLastError(void);
/* The library's version and commit, e.g. "symmcoll 0.4 (git 1a2b3c4d5e6f)". */
const char* symmcollGetVersion(void);
/* 1 if this library has the CUDA backend. */
int symmcollHasCuda(void);

/* Makes one communicator per rank in comms[0 .. *world). `capacity`: the length of comms. */
symmcollResult_t symmcollSimNodeCreate(const symmcollSimOptions_t* options, symmcollComm_t* comms, int capacity,
                                       int* world);
symmcollResult_t symmcollCudaNodeCreate(const symmcollCudaNodeOptions_t* options, symmcollComm_t* comms, int capacity,
                                        int* world);
/* `nccl_comm` is an ncclComm_t; the current CUDA device must be its device. Destroy the handle
 * before ncclCommDestroy(nccl_comm). */
symmcollResult_t symmcollCudaCommFromNccl(void* nccl_comm, symmcollComm_t* comm);
/* Frees the communicator (CUDA: after its last synchronize). NULL is accepted. */
symmcollResult_t symmcollCommDestroy(symmcollComm_t comm);

symmcollResult_t symmcollCommRank(symmcollComm_t comm, int* rank);
symmcollResult_t symmcollCommWorld(symmcollComm_t comm, int* world);
/* "sim" or "cuda" (static storage). */
symmcollResult_t symmcollCommBackend(symmcollComm_t comm, const char** backend);

/* Symmetric memory of the communicator (simulator: host memory; CUDA: device memory in its window). */
symmcollResult_t symmcollMemAlloc(symmcollComm_t comm, size_t bytes, void** ptr);
symmcollResult_t symmcollMemFree(symmcollComm_t comm, void* ptr);

/* `info` may be NULL. */
symmcollResult_t symmcollAllReduce(const void* sendbuff, void* recvbuff, size_t count, symmcollDataType_t datatype,
                                   symmcollRedOp_t op, symmcollComm_t comm, void* stream, const char* algo,
                                   symmcollCallInfo_t* info);
symmcollResult_t symmcollReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                       symmcollDataType_t datatype, symmcollRedOp_t op, symmcollComm_t comm,
                                       void* stream, const char* algo, symmcollCallInfo_t* info);
symmcollResult_t symmcollAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, symmcollDataType_t datatype,
                                   symmcollComm_t comm, void* stream, const char* algo, symmcollCallInfo_t* info);
/* Waits for every call enqueued so far on this communicator. */
symmcollResult_t symmcollSynchronize(symmcollComm_t comm);

/* The algorithm "auto" would run (registry id, static storage) for an op ("all_reduce",
 * "reduce_scatter", "all_gather"), size in bytes (nccl-tests size), world, data type, machine
 * (NULL or "": no table, the built-in rule) and launch mode. */
symmcollResult_t symmcollChooseAlgo(const char* op, size_t bytes, int world, symmcollDataType_t datatype,
                                    const char* machine, int graph, const char** algo);

#ifdef __cplusplus
}
#endif

#endif /* SYMMCOLL_C_H */

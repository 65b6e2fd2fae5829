// The C ABI (include/symmcoll/symmcoll_c.h) over the C++ library (symmcoll.h, cuda.h): every entry
// point catches what the library throws, keeps its one-line message for symmcollGetLastError
// and returns the matching result code. Built into libsymmcoll.so (CMakeLists.txt); with the CUDA
// backend when SYMM_C_API_CUDA is defined.
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "symmcoll/symmcoll.h"
#include "symmcoll/symmcoll_c.h"
#if defined(SYMM_C_API_CUDA)
#include "symmcoll/cuda.h"
#endif

struct symmcollComm {
  std::unique_ptr<symm::Communicator> c;
  std::string trace_path;  // the last call's (symmcollCallInfo_t::trace_path points here)
};

namespace {

thread_local std::string g_last_error;

symmcollResult_t fail_with(symmcollResult_t r, std::string msg) {
  g_last_error = std::move(msg);
  return r;
}

// Runs f, mapping what it throws to a result code and the last-error line.
template <class F>
symmcollResult_t guarded(F&& f) noexcept {
  try {
    f();
    g_last_error.clear();
    return symmcollSuccess;
  } catch (const symm::Error& e) {
    return fail_with(static_cast<symmcollResult_t>(static_cast<int>(e.code())), e.what());
  } catch (const std::bad_alloc&) {
    return fail_with(symmcollInternalError, "out of host memory");
  } catch (const std::exception& e) {
    return fail_with(symmcollInternalError, e.what());
  } catch (...) {
    return fail_with(symmcollInternalError, "unknown error");
  }
}

void need(bool ok, const char* what) {
  if (!ok) symm::fail(symm::ErrorCode::kInvalidArgument, what);
}

symm::Communicator& comm_of(symmcollComm_t comm) {
  need(comm && comm->c, "symmcoll: a null communicator");
  return *comm->c;
}

symm::DType dtype_of(symmcollDataType_t t) {
  switch (t) {
    case symmcollBfloat16: return symm::DType::kBF16;
    case symmcollFloat16: return symm::DType::kFP16;
    case symmcollFloat32: return symm::DType::kFP32;
  }
  symm::fail(symm::ErrorCode::kInvalidArgument,
             "symmcoll: data type " + std::to_string(int(t)) + " is not bf16 (0), fp16 (1) or fp32 (2)");
}

symm::ReduceOp op_of(symmcollRedOp_t op) {
  switch (op) {
    case symmcollSum: return symm::ReduceOp::kSum;
    case symmcollMax: return symm::ReduceOp::kMax;
    case symmcollMin: return symm::ReduceOp::kMin;
  }
  symm::fail(symm::ErrorCode::kInvalidArgument,
             "symmcoll: reduction " + std::to_string(int(op)) + " is not sum (0), max (1) or min (2)");
}

std::string algo_of(const char* algo) { return algo && *algo ? algo : "auto"; }

void fill(symmcollCallInfo_t* info, symmcollComm_t comm, const symm::CallInfo& c) {
  comm->trace_path = c.trace_path;
  if (!info) return;
  info->algo = c.algo ? c.algo->id.c_str() : "";
  info->bytes = c.bytes;
  info->complete = c.complete ? 1 : 0;
  info->predicted_us = c.predicted_us;
  info->max_rel_err = c.max_rel_err;
  info->err_bound = c.err_bound;
  info->trace_path = comm->trace_path.c_str();
}

// Hands out a node's communicators; on any failure none is handed out.
void hand_out(std::vector<std::unique_ptr<symm::Communicator>> node, symmcollComm_t* comms, int capacity, int* world) {
  need(comms != nullptr, "symmcoll: comms is null");
  if (int(node.size()) > capacity)
    symm::fail(symm::ErrorCode::kInvalidArgument, "symmcoll: the node has " + std::to_string(node.size()) +
                                                      " ranks, comms has room for " + std::to_string(capacity));
  std::vector<std::unique_ptr<symmcollComm>> handles;
  for (auto& c : node) handles.push_back(std::make_unique<symmcollComm>(symmcollComm{std::move(c), {}}));
  for (std::size_t r = 0; r < handles.size(); ++r) comms[r] = handles[r].release();
  if (world) *world = int(node.size());
}

}  // namespace

extern "C" {

const char* symmcollGetLastError(void) { return g_last_error.c_str(); }

const char* symmcollGetVersion(void) {
  static const std::string v = std::string("symmcoll (git ") + symm::git_sha() + ")";
  return v.c_str();
}

int symmcollHasCuda(void) {
#if defined(SYMM_C_API_CUDA)
  return 1;
#else
  return 0;
#endif
}

symmcollResult_t symmcollSimNodeCreate(const symmcollSimOptions_t* options, symmcollComm_t* comms, int capacity,
                                       int* world) {
  return guarded([&] {
    symm::SimOptions o;
    if (options) {
      if (options->machine && *options->machine) o.machine = options->machine;
      o.world = options->world;
      o.graph = options->graph != 0;
      if (options->check_up_to) o.check_up_to = options->check_up_to;
      if (options->seed) o.seed = options->seed;
      if (options->trace_dir) o.trace_dir = options->trace_dir;
    }
    hand_out(symm::sim_node(o), comms, capacity, world);
  });
}

symmcollResult_t symmcollCudaNodeCreate(const symmcollCudaNodeOptions_t* options, symmcollComm_t* comms, int capacity,
                                        int* world) {
#if defined(SYMM_C_API_CUDA)
  return guarded([&] {
    symm::CudaNodeOptions o;
    if (options) {
      o.world = options->world;
      o.gpus = options->gpus;
      if (options->heap_bytes) o.cuda.heap_bytes = options->heap_bytes;
      if (options->staging_bytes) o.cuda.staging_bytes = options->staging_bytes;
    }
    hand_out(symm::cuda_node(o), comms, capacity, world);
  });
#else
  (void)options, (void)comms, (void)capacity, (void)world;
  return fail_with(symmcollUnsupported, "symmcoll: this library was built without the CUDA backend");
#endif
}

symmcollResult_t symmcollCudaCommFromNccl(void* nccl_comm, symmcollComm_t* comm) {
#if defined(SYMM_C_API_CUDA)
  return guarded([&] {
    need(nccl_comm != nullptr, "symmcoll: nccl_comm is null");
    need(comm != nullptr, "symmcoll: comm is null");
    auto c = symm::cuda_communicator(static_cast<ncclComm_t>(nccl_comm));
    *comm = new symmcollComm{std::move(c), {}};
  });
#else
  (void)nccl_comm, (void)comm;
  return fail_with(symmcollUnsupported, "symmcoll: this library was built without the CUDA backend");
#endif
}

symmcollResult_t symmcollCommDestroy(symmcollComm_t comm) {
  return guarded([&] { delete comm; });
}

symmcollResult_t symmcollCommRank(symmcollComm_t comm, int* rank) {
  return guarded([&] {
    need(rank != nullptr, "symmcoll: rank is null");
    *rank = comm_of(comm).rank();
  });
}

symmcollResult_t symmcollCommWorld(symmcollComm_t comm, int* world) {
  return guarded([&] {
    need(world != nullptr, "symmcoll: world is null");
    *world = comm_of(comm).world();
  });
}

symmcollResult_t symmcollCommBackend(symmcollComm_t comm, const char** backend) {
  return guarded([&] {
    need(backend != nullptr, "symmcoll: backend is null");
    *backend = comm_of(comm).backend();
  });
}

symmcollResult_t symmcollMemAlloc(symmcollComm_t comm, size_t bytes, void** ptr) {
  return guarded([&] {
    need(ptr != nullptr, "symmcoll: ptr is null");
    *ptr = comm_of(comm).alloc(bytes);
  });
}

symmcollResult_t symmcollMemFree(symmcollComm_t comm, void* ptr) {
  return guarded([&] { comm_of(comm).free(ptr); });
}

symmcollResult_t symmcollAllReduce(const void* sendbuff, void* recvbuff, size_t count, symmcollDataType_t datatype,
                                   symmcollRedOp_t op, symmcollComm_t comm, void* stream, const char* algo,
                                   symmcollCallInfo_t* info) {
  return guarded([&] {
    fill(info, comm,
         comm_of(comm).all_reduce(sendbuff, recvbuff, count, dtype_of(datatype), op_of(op), stream, algo_of(algo)));
  });
}

symmcollResult_t symmcollReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                       symmcollDataType_t datatype, symmcollRedOp_t op, symmcollComm_t comm,
                                       void* stream, const char* algo, symmcollCallInfo_t* info) {
  return guarded([&] {
    fill(info, comm,
         comm_of(comm).reduce_scatter(sendbuff, recvbuff, recvcount, dtype_of(datatype), op_of(op), stream,
                                      algo_of(algo)));
  });
}

symmcollResult_t symmcollAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, symmcollDataType_t datatype,
                                   symmcollComm_t comm, void* stream, const char* algo, symmcollCallInfo_t* info) {
  return guarded([&] {
    fill(info, comm,
         comm_of(comm).all_gather(sendbuff, recvbuff, sendcount, dtype_of(datatype), stream, algo_of(algo)));
  });
}

symmcollResult_t symmcollSynchronize(symmcollComm_t comm) {
  return guarded([&] { comm_of(comm).synchronize(); });
}

symmcollResult_t symmcollChooseAlgo(const char* op, size_t bytes, int world, symmcollDataType_t datatype,
                                    const char* machine, int graph, const char** algo) {
  return guarded([&] {
    need(op != nullptr, "symmcoll: op is null");
    need(algo != nullptr, "symmcoll: algo is null");
    const symm::Op o = symm::parse_op(op);
    if (o != symm::Op::kAllReduce && o != symm::Op::kReduceScatter && o != symm::Op::kAllGather)
      symm::fail(symm::ErrorCode::kInvalidArgument,
                 std::string("symmcoll: op '") + op + "' is not all_reduce, reduce_scatter or all_gather");
    *algo = symm::choose_algo(o, bytes, world, dtype_of(datatype), machine ? machine : "", graph != 0).id.c_str();
  });
}

}  // extern "C"

// symmcoll core: the few types every layer shares.
//
// Everything here compiles as host C++20 (g++) and as CUDA device code (nvcc).
// Host-only pieces (strings, exceptions) are guarded by SYMM_HOST_ONLY blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define SYMM_HD __host__ __device__ __forceinline__
#define SYMM_DEVICE_COMPILE 1
#else
#define SYMM_HD inline
#endif

#if !defined(__CUDA_ARCH__)
#include <stdexcept>
#include <string>
#endif

namespace symm {

// Limits shared by both backends.
// kPadWorld: the ranks the signal pad (core/signal_pad.h) has flags for, so the largest world
// any run may have. Only the simulator's timing-only runs go past one node; a GPU node has at
// most 8 (each block context narrows it: BlockCtx::kWorldLimit, core/verbs.h).
inline constexpr int kPadWorld = 64;
// kPadBlocks: the blocks the signal pad has flags and counters for; every program's block
// limit (Config::kBlockLimit) is at most this.
inline constexpr int kPadBlocks = 160;
// kResidentBlocks: programs that barrier need all their blocks resident at once: one per SM of
// an H100/H200 (132), the block limit of every barrier-based program.
inline constexpr int kResidentBlocks = 132;
static_assert(kResidentBlocks <= kPadBlocks);
// All data verbs move whole 16-byte vectors: sizes and offsets are multiples of this.
inline constexpr std::size_t kVecBytes = 16;

enum class DType : int { kBF16 = 0, kFP16 = 1, kFP32 = 2 };
enum class ReduceOp : int { kSum = 0, kMax = 1, kMin = 2 };
// Ordering carried by signal/wait. kRelaxed orders nothing but the flag itself;
// kRelease (signal only) publishes this block's earlier stores; kAcquire (wait only) makes the
// stores published by the matching release visible to this block. No verb both reads and
// writes a flag, so there is no acq_rel order (core/verbs.h: is_signal_order, is_wait_order).
enum class MemOrder : int { kRelaxed = 0, kRelease = 1, kAcquire = 2 };
enum class Op : int { kAllReduce = 0, kReduceScatter = 1, kAllGather = 2, kBarrier = 3 };
// The matmuls fused with a collective (core/fused.h): all_gather then matmul, matmul then
// reduce_scatter.
enum class FusedOp : int { kAgMm = 0, kMmRs = 1 };

// Storage-only 16-bit floats. Device code reinterprets them as __nv_bfloat16 / __half;
// host code converts through to_float / from_float below.
struct bf16 {
  uint16_t bits;
};
struct fp16 {
  uint16_t bits;
};

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<bf16> {
  static constexpr DType value = DType::kBF16;
};
template <>
struct DTypeOf<fp16> {
  static constexpr DType value = DType::kFP16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFP32;
};

SYMM_HD constexpr std::size_t dtype_size(DType t) { return t == DType::kFP32 ? 4 : 2; }

// SplitMix64 (Steele, Lea, Flood 2014): the one hash both backends draw test inputs from.
SYMM_HD constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// fp32 accumulation is the contract of every reduction: combine() is the scalar rule.
// max and min propagate NaN (a + b does), so a poisoned, unwritten source is never hidden.
SYMM_HD float combine(float a, float b, ReduceOp op) {
  if (op == ReduceOp::kSum || a != a || b != b) return a + b;
  return op == ReduceOp::kMax ? (a > b ? a : b) : (a < b ? a : b);
}

#if !defined(__CUDA_ARCH__)
// ---- host-only -------------------------------------------------------------------

// One way to fail: every layer throws symm::Error; the CLI turns it into one line and a
// non-zero exit. Library code never calls exit().
enum class ErrorCode : int {
  kInvalidArgument = 1,  // bad user input (sizes, names, world)
  kUnsupported = 2,      // valid input this algorithm / machine cannot do
  kDeadlock = 3,         // a wait that can never be satisfied
  kTimeout = 4,          // a bounded wait expired (GPU)
  kRace = 5,             // a read of bytes not yet visible to the reader
  kCuda = 6,             // a CUDA or NCCL call failed
  kIo = 7,               // a file could not be read or written
  kInternal = 8,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& msg) : std::runtime_error(msg), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] inline void fail(ErrorCode code, const std::string& msg) { throw Error(code, msg); }

#define SYMM_REQUIRE(cond, code, msg)         \
  do {                                        \
    if (!(cond)) ::symm::fail((code), (msg)); \
  } while (0)

const char* dtype_name(DType t);
DType parse_dtype(const std::string& s);  // throws kInvalidArgument naming the value
const char* op_name(Op op);
Op parse_op(const std::string& s);
const char* reduce_op_name(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& s);
const char* order_name(MemOrder o);

// Host conversions (round to nearest even; NaN preserved).
float to_float(bf16 v);
float to_float(fp16 v);
inline float to_float(float v) { return v; }
template <class T>
T from_float(float f);
template <>
bf16 from_float<bf16>(float f);
template <>
fp16 from_float<fp16>(float f);
template <>
inline float from_float<float>(float f) {
  return f;
}

// "4K", "1M", "256M", "1G", "1000" -> bytes. Throws kInvalidArgument on malformed input.
std::size_t parse_size(const std::string& s);
// 1048576 -> "1M" (exact binary suffix when possible), else the number.
std::string format_size(std::size_t bytes);
#endif

}  // namespace symm

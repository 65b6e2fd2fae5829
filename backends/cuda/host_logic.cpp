#include "backends/cuda/host_logic.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/signal_pad.h"
#include "core/sizes.h"

namespace symm::cuda {

GetEnv process_env() {
  return [](const char* k) -> const char* { return std::getenv(k); };
}

namespace {

int env_int(const GetEnv& env, const char* name, int fallback) {
  const char* v = env(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < 0 || x > 1 << 20)
    fail(ErrorCode::kInvalidArgument, std::string(name) + "='" + v + "' is not a non-negative integer");
  return int(x);
}

bool env_is(const GetEnv& env, const char* name, const char* value) {
  const char* v = env(name);
  return v && std::strcmp(v, value) == 0;
}

}  // namespace

RankEnv rank_env(const GetEnv& env) {
  RankEnv r;
  const bool ompi = env("OMPI_COMM_WORLD_RANK") != nullptr && env("RANK") == nullptr;
  r.rank = env_int(env, ompi ? "OMPI_COMM_WORLD_RANK" : "RANK", 0);
  r.world = env_int(env, ompi ? "OMPI_COMM_WORLD_SIZE" : "WORLD_SIZE", 1);
  r.local_rank = env_int(env, ompi ? "OMPI_COMM_WORLD_LOCAL_RANK" : "LOCAL_RANK", r.rank);
  if (const char* d = env("SYMM_RUN_DIR")) r.run_dir = d;
  if (r.world < 1 || r.rank >= r.world)
    fail(ErrorCode::kInvalidArgument,
         "RANK=" + std::to_string(r.rank) + " is outside WORLD_SIZE=" + std::to_string(r.world));
  if (r.world > kNodeWorld)
    fail(ErrorCode::kInvalidArgument,
         "WORLD_SIZE=" + std::to_string(r.world) + " exceeds the " + std::to_string(kNodeWorld) +
             " GPUs of one NVSwitch node this backend runs on (the simulator scales further)");
  return r;
}

void publish_blob(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string tmp = dir + "/." + name + ".tmp", path = dir + "/" + name;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
    if (!f) fail(ErrorCode::kIo, "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(ErrorCode::kIo, "cannot rename " + tmp + " to " + path);
}

std::string await_blob(const std::string& dir, const std::string& name, std::size_t size, double timeout_s) {
  const std::string path = dir + "/" + name;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    std::ifstream f(path, std::ios::binary);
    if (f) {
      std::string s(size, '\0');
      f.read(s.data(), std::streamsize(size));
      if (std::size_t(f.gcount()) == size) return s;
      fail(ErrorCode::kIo, path + " holds " + std::to_string(f.gcount()) + " bytes, expected " + std::to_string(size));
    }
    if (std::chrono::steady_clock::now() > deadline)
      fail(ErrorCode::kTimeout, "waited " + std::to_string(timeout_s) + " s for rank 0 to publish " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<std::string> multicast_disabled_by(const GetEnv& env) {
  for (auto [k, v] : {std::pair{"NCCL_NVLS_ENABLE", "0"}, std::pair{"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
                      std::pair{"NVSHMEM_DISABLE_NVLS", "1"}})
    if (env_is(env, k, v)) return std::string(k) + "=" + v;
  return std::nullopt;
}

void* multicast_base(const GetEnv& env, const std::function<void*()>& ask_nccl) {
  if (multicast_disabled_by(env)) return nullptr;
  return ask_nccl();
}

std::optional<std::string> multicast_refusal(const AlgoInfo& a, const GetEnv& env, bool platform_multicast) {
  if (!a.needs_multicast) return std::nullopt;
  const std::string who = a.id + " needs NVLink multicast (NVLS), ";
  if (auto var = multicast_disabled_by(env)) return who + "which " + *var + " disables";
  if (!platform_multicast)
    return who +
           "and NCCL set up none for the symmetric heap here (no multicast address from its device "
           "API: the GPUs or NCCL lack NVLS); multimem algorithms are verified on the simulator (--backend sim)";
  return std::nullopt;
}

LaunchPlan plan_launch(const AlgoInfo& a, DType t, std::size_t bytes, int world, int blocks, int threads) {
  LaunchPlan p;
  p.blocks = blocks > 0 ? blocks : a.default_blocks(bytes, world);
  check_args(a, t, bytes, world, p.blocks);
  if (threads > 0) {
    if (threads % 32 || threads > kMaxThreads)
      fail(ErrorCode::kInvalidArgument,
           "threads=" + std::to_string(threads) + " must be a multiple of 32 in 32.." + std::to_string(kMaxThreads));
    p.threads = threads;
    return p;
  }
  p.threads = a.default_threads(bytes, world, p.blocks);
  return p;
}

void check_heap(const AlgoInfo& a, std::size_t bytes, int world, std::size_t heap_bytes) {
  const HeapLayout h = heap_layout(a, bytes, world);
  if (h.total > heap_bytes)
    fail(ErrorCode::kInvalidArgument, "bytes=" + std::to_string(bytes) + " of " + a.id + " needs " +
                                          std::to_string(h.total) + " bytes of symmetric heap per rank; the heap has " +
                                          std::to_string(heap_bytes));
}

std::string describe_wait_timeout(const WaitError& e) {
  std::ostringstream os;
  if (e.kind == WaitError::kPackets) {
    os << "rank " << e.rank << " block " << e.block << " timed out waiting for packets at heap offset " << e.offset
       << " (packet " << e.packet << " of that buffer): expected epoch " << e.expected << ", saw " << e.seen;
    return os.str();
  }
  os << "rank " << e.rank << " block " << e.block << " timed out waiting on slot " << e.slot;
  if (e.slot < pad::kFlagSlots) {
    const uint32_t channel = e.slot / (uint32_t(kPadBlocks) * kPadWorld);
    const uint32_t from = e.slot % kPadWorld;
    os << " (channel " << channel << ", from rank " << from << ")";
  } else if (pad::is_plan_flag(e.slot)) {  // a host plan's flag, awaited inside a kernel (tile programs)
    os << " (" << pad::describe_plan_slot(e.slot) << ")";
  } else {
    os << " (block counter " << (e.slot - pad::kFlagSlots) % pad::kCounters << ")";
  }
  os << ": expected >= " << e.expected << ", saw " << e.seen;
  return os.str();
}

std::string describe_stuck_plan_wait(int rank, int stream, uint32_t slot, uint32_t expected, const std::string& seen,
                                     std::size_t index, std::size_t waits) {
  return "rank " + std::to_string(rank) + " stream " + std::to_string(stream) + " timed out waiting on " +
         pad::describe_plan_slot(slot) + ": expected " + std::to_string(expected) + ", saw " + seen + " (wait " +
         std::to_string(index + 1) + " of the " + std::to_string(waits) + " enqueued since the last drain)";
}

namespace {

double env_seconds(const GetEnv& env, const char* name, double fallback) {
  const char* v = env(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (*end || !(x > 0) || x > 1e6)
    fail(ErrorCode::kInvalidArgument, std::string(name) + "='" + v + "' is not a positive number of seconds");
  return x;
}

// "R:REST" -> (R, REST); `rest` may be absent (then REST must be empty).
int rank_prefix(const GetEnv& env, const char* name, std::string* rest) {
  const char* v = env(name);
  if (!v || !*v) return -1;
  const std::string s = v;
  const std::size_t colon = s.find(':');
  const std::string r = s.substr(0, colon);
  char* end = nullptr;
  const long x = std::strtol(r.c_str(), &end, 10);
  const bool want_rest = rest != nullptr;
  if (r.empty() || *end || x < 0 || x >= kNodeWorld || want_rest != (colon != std::string::npos) ||
      (want_rest && colon + 1 >= s.size()))
    fail(ErrorCode::kInvalidArgument, std::string(name) + "='" + s + "' is not " +
                                          (want_rest ? "RANK:VALUE" : "a RANK") + " (rank 0.." +
                                          std::to_string(kNodeWorld - 1) + ")");
  if (rest) *rest = s.substr(colon + 1);
  return int(x);
}

}  // namespace

double wait_timeout_seconds(const GetEnv& env) { return env_seconds(env, "SYMM_WAIT_TIMEOUT_S", kDefaultWaitTimeoutS); }

unsigned long long wait_timeout_cycles(const GetEnv& env, int clock_khz) {
  if (const char* v = env("SYMM_WAIT_TIMEOUT_CYCLES"); v && *v) {
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v, &end, 10);
    if (*end || x == 0)
      fail(ErrorCode::kInvalidArgument, std::string("SYMM_WAIT_TIMEOUT_CYCLES='") + v + "' is not a positive integer");
    return x;
  }
  if (clock_khz <= 0) fail(ErrorCode::kInternal, "device clock rate " + std::to_string(clock_khz) + " kHz");
  return static_cast<unsigned long long>(wait_timeout_seconds(env) * double(clock_khz) * 1e3);
}

double stream_timeout_seconds(const GetEnv& env, double wait_s) {
  return env_seconds(env, "SYMM_STREAM_TIMEOUT_S", std::max(kDefaultStreamTimeoutS, 4 * wait_s));
}

TeamLockstep team_lockstep_mode(const GetEnv& env) {
  const char* v = env("SYMM_DEBUG_TEAM_LOCKSTEP");
  const std::string s = v ? v : "";
  if (s.empty() || s == "1") return TeamLockstep::kMeets;
  if (s == "0") return TeamLockstep::kOff;
  if (s == "items") return TeamLockstep::kItems;
  fail(ErrorCode::kInvalidArgument,
       "SYMM_DEBUG_TEAM_LOCKSTEP='" + s + "': 1 (the default: meet at flag writes and launches), items or 0 (off)");
}

bool team_lockstep_on(TeamLockstep mode, bool team, int team_gpu_ranks) {
  return mode != TeamLockstep::kOff && team && team_gpu_ranks > 1;
}

TestRankOverrides test_rank_overrides(const GetEnv& env) {
  TestRankOverrides t;
  t.algo_rank = rank_prefix(env, "SYMM_TEST_RANK_ALGO", &t.algo);
  std::string size;
  t.size_rank = rank_prefix(env, "SYMM_TEST_RANK_SIZE", &size);
  if (t.size_rank >= 0) {
    try {
      t.size = parse_size(size);
    } catch (const Error& e) {
      fail(ErrorCode::kInvalidArgument, "SYMM_TEST_RANK_SIZE: " + std::string(e.what()));
    }
  }
  t.skip_rank = rank_prefix(env, "SYMM_TEST_RANK_SKIP", nullptr);
  t.kill_rank = rank_prefix(env, "SYMM_TEST_RANK_KILL", nullptr);
  return t;
}

std::string machine_name(const std::string& device_name, int world) {
  std::string lower;
  for (char c : device_name) lower += char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* chip : {"h200", "h100", "b200", "a100"})
    if (lower.find(chip) != std::string::npos) return std::string(chip) + "x" + std::to_string(world);
  return "gpux" + std::to_string(world);
}

std::vector<std::string> resolve_rank_command(const std::vector<std::string>& cmd, const std::string& self_exe) {
  if (cmd.empty()) fail(ErrorCode::kInvalidArgument, "launch needs a command after --, e.g. -- symmcoll bench ...");
  static const char* kSub[] = {"bench", "list", "run", "sweep", "trace", "check"};
  std::vector<std::string> out = cmd;
  if (cmd[0] == "symmcoll") {
    out[0] = self_exe;
  } else if (std::find_if(std::begin(kSub), std::end(kSub), [&](const char* s) { return cmd[0] == s; }) !=
             std::end(kSub)) {
    out.insert(out.begin(), self_exe);
  }
  return out;
}

}  // namespace symm::cuda

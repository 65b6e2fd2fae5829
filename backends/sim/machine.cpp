// Machine files: experiments/machines/<name>.ini, one `key = value` per Machine field.
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "backends/sim/sim.h"
#include "core/data_dirs.h"

namespace symm::sim {
namespace {

namespace po = boost::program_options;

struct Key {
  const char* name;
  double* d;  // exactly one of d / i is set
  int* i;
  bool zero_ok = false;  // a cost the model may leave out (0); every other key must be positive
};

std::vector<Key> keys_of(Machine& m) {
  return {
      {"gpus", nullptr, &m.gpus},
      {"team", nullptr, &m.team, true},
      {"team_launch_us", &m.team_launch_us, nullptr, true},
      {"nvlink_egress_GBps", &m.nvlink_egress_GBps, nullptr},
      {"nvlink_ingress_GBps", &m.nvlink_ingress_GBps, nullptr},
      {"store_latency_us", &m.store_latency_us, nullptr},
      {"flag_latency_us", &m.flag_latency_us, nullptr},
      {"load_rtt_us", &m.load_rtt_us, nullptr},
      {"load_overlap", nullptr, &m.load_overlap, true},
      {"acquire_us", &m.acquire_us, nullptr, true},
      {"release_fence_share", &m.release_fence_share, nullptr, true},
      {"fence_gap_us", &m.fence_gap_us, nullptr, true},
      {"fence_crowd_us", &m.fence_crowd_us, nullptr, true},
      {"fence_crowd_blocks", nullptr, &m.fence_crowd_blocks, true},
      {"local_store_fence_us", &m.local_store_fence_us, nullptr, true},
      {"signal_next_us", &m.signal_next_us, nullptr, true},
      {"wait_next_us", &m.wait_next_us, nullptr, true},
      {"peer_kernel_us", &m.peer_kernel_us, nullptr, true},
      {"block_GBps", &m.block_GBps, nullptr},
      {"block_reduce_GBps", &m.block_reduce_GBps, nullptr, true},
      {"load_slowdown", &m.load_slowdown, nullptr, true},
      {"sms", nullptr, &m.sms},
      {"hbm_GBps", &m.hbm_GBps, nullptr},
      {"l2_MB", &m.l2_MB, nullptr, true},
      {"l2_GBps", &m.l2_GBps, nullptr, true},
      {"launch_eager_us", &m.launch_eager_us, nullptr},
      {"launch_graph_us", &m.launch_graph_us, nullptr},
      {"launch_eager_gap_us", &m.launch_eager_gap_us, nullptr, true},
      {"eager_release_us", &m.eager_release_us, nullptr, true},
      {"pdl_saving_us", &m.pdl_saving_us, nullptr, true},
      {"stream_op_us", &m.stream_op_us, nullptr, true},
      {"stream_batch_op_us", &m.stream_batch_op_us, nullptr, true},
      {"ll_wire_bytes", &m.ll_wire_bytes, nullptr},
      {"load_link_factor", &m.load_link_factor, nullptr},
      {"ll_poll_us", &m.ll_poll_us, nullptr, true},
      {"local_load_us", &m.local_load_us, nullptr, true},
      {"ll_read_GBps", &m.ll_read_GBps, nullptr, true},
      {"copy_engines", nullptr, &m.copy_engines},
      {"ce_startup_us", &m.ce_startup_us, nullptr},
      {"ce_GBps", &m.ce_GBps, nullptr},
      {"ce_launch_us", &m.ce_launch_us, nullptr, true},
      {"host_launch_us", &m.host_launch_us, nullptr, true},
      {"host_copy_us", &m.host_copy_us, nullptr, true},
      {"host_event_us", &m.host_event_us, nullptr, true},
      {"host_flag_us", &m.host_flag_us, nullptr, true},
      {"host_flag_item_us", &m.host_flag_item_us, nullptr, true},
      {"host_call_us", &m.host_call_us, nullptr, true},
      {"host_scale", &m.host_scale, nullptr, true},
      {"ce_per_rank", nullptr, &m.ce_per_rank, true},
      {"nvls_GBps", &m.nvls_GBps, nullptr},
      {"gemm_TFLOPs", &m.gemm_TFLOPs, nullptr},
      {"gemm_GBps", &m.gemm_GBps, nullptr, true},
      {"gemm_fixed_us", &m.gemm_fixed_us, nullptr, true},
      {"gemm_tile_m", nullptr, &m.gemm_tile_m, true},
      {"gemm_tile_n", nullptr, &m.gemm_tile_n, true},
      {"mma_TFLOPs", &m.mma_TFLOPs, nullptr},
      {"mma_tile_us", &m.mma_tile_us, nullptr, true},
      {"mma_peer_store_GBps", &m.mma_peer_store_GBps, nullptr, true},
      {"mma_in_GBps", &m.mma_in_GBps, nullptr, true},
  };
}

}  // namespace

Machine Machine::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) fail(ErrorCode::kIo, "cannot read machine file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << f.rdbuf();
  if (f.bad()) fail(ErrorCode::kIo, "cannot read machine file '" + path + "'");
  return parse(text.str(), path);
}

Machine Machine::parse(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  Machine m;
  m.path = path;
  m.name = std::filesystem::path(path).stem().string();
  const std::vector<Key> keys = keys_of(m);
  // Each key's comment (`key = value  # why`), kept as its provenance for `symmcoll fit`.
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('='), hash = line.find('#');
    if (eq == std::string::npos || hash == std::string::npos || hash < eq || line[0] == '#') continue;
    auto trim = [](std::string t) {
      const std::size_t a = t.find_first_not_of(" \t"), b = t.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : t.substr(a, b - a + 1);
    };
    m.notes[trim(line.substr(0, eq))] = trim(line.substr(hash + 1));
  }
  in.clear();
  in.seekg(0);

  // Values are read as strings so that a malformed number names its key, not a Boost type.
  po::options_description desc;
  for (const Key& k : keys) desc.add_options()(k.name, po::value<std::string>());
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::parse_config_file(in, desc, /*allow_unregistered=*/true);
    for (const po::option& o : parsed.options)
      if (o.unregistered) fail(ErrorCode::kInvalidArgument, path + ": unknown key '" + o.string_key + "'");
    po::store(parsed, vm);
  } catch (const po::error& e) {
    fail(ErrorCode::kInvalidArgument, path + ": " + e.what());
  }
  for (const Key& k : keys) {
    if (!vm.count(k.name)) fail(ErrorCode::kInvalidArgument, path + ": key '" + std::string(k.name) + "' is missing");
    const std::string s = vm[k.name].as<std::string>();
    double v = 0;
    std::size_t used = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size())
      fail(ErrorCode::kInvalidArgument,
           path + ": key '" + std::string(k.name) + "' has value '" + s + "', not a number");
    if (k.zero_ok ? !(v >= 0) : !(v > 0))
      fail(ErrorCode::kInvalidArgument, path + ": key '" + std::string(k.name) + "' must be " +
                                            (k.zero_ok ? "zero or positive" : "positive") + " (got " + s + ")");
    if (k.i) {
      if (v != double(int(v)))
        fail(ErrorCode::kInvalidArgument,
             path + ": key '" + std::string(k.name) + "' must be an integer (got " + s + ")");
      *k.i = int(v);
    } else {
      *k.d = v;
    }
  }
  if (m.team != 0 && m.team != 1)
    fail(ErrorCode::kInvalidArgument, path +
                                          ": key 'team' is 0 (one rank per GPU, peers over NVLink) or 1 (an "
                                          "in-process team: the ranks share the machine's gpus GPUs) (got " +
                                          std::to_string(m.team) + ")");
  if (m.load_overlap != 0 && m.load_overlap != 1)
    fail(ErrorCode::kInvalidArgument, path +
                                          ": key 'load_overlap' is 1 (a block's copies from several peers overlap "
                                          "their round trips) or 0 (each pays its own) (got " +
                                          std::to_string(m.load_overlap) + ")");
  if (m.release_fence_share > 1)
    fail(ErrorCode::kInvalidArgument, path + ": key 'release_fence_share' is a share of acquire_us, at most 1 (got " +
                                          std::to_string(m.release_fence_share) + ")");
  if (m.load_slowdown > 0 && m.l2_MB <= 0)
    fail(ErrorCode::kInvalidArgument, path +
                                          ": key 'load_slowdown' needs an L2 model (l2_MB > 0): the slowdown counts "
                                          "the GPU's memory traffic there");
  if (m.l2_MB > 0 && m.l2_GBps <= 0)
    fail(ErrorCode::kInvalidArgument, path + ": key 'l2_GBps' must be positive where l2_MB is (an L2 of " +
                                          std::to_string(m.l2_MB) + " MB needs its bandwidth)");
  if ((m.gemm_tile_m == 0) != (m.gemm_tile_n == 0))
    fail(ErrorCode::kInvalidArgument, path + ": gemm_tile_m and gemm_tile_n are both 0 (no tiles) or both positive");
  return m;
}

std::vector<std::string> Machine::key_names() {
  Machine m;
  std::vector<std::string> names;
  for (const Key& k : keys_of(m)) names.push_back(k.name);
  return names;
}

std::vector<Machine::KeyValue> Machine::key_values() const {
  std::vector<KeyValue> out;
  for (const Key& k : keys_of(const_cast<Machine&>(*this)))  // read only
    out.push_back({k.name, k.d ? *k.d : double(*k.i), k.i != nullptr, k.zero_ok});
  return out;
}

bool Machine::copy_key(const Machine& from, const std::string& key) {
  std::vector<Key> mine = keys_of(*this);
  const std::vector<Key> theirs = keys_of(const_cast<Machine&>(from));
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (key != mine[i].name) continue;
    if (mine[i].d)
      *mine[i].d = *theirs[i].d;
    else
      *mine[i].i = *theirs[i].i;
    return true;
  }
  return false;
}

double Machine::gemm_padded_flops(double m, double n, double k) const {
  if (gemm_tile_m <= 0 || gemm_tile_n <= 0 || sms <= 0) return 2.0 * m * n * k;
  const double tiles = std::ceil(m / gemm_tile_m) * std::ceil(n / gemm_tile_n);
  const double waves = std::ceil(tiles / sms);
  return 2.0 * k * double(gemm_tile_m) * double(gemm_tile_n) * double(sms) * waves;
}

double Machine::gemm_time_us(double m, double n, double k, double elem_bytes) const {
  const double bytes = elem_bytes * (m * k + k * n + m * n);
  return gemm_fixed_us + gemm_padded_flops(m, n, k) / (gemm_TFLOPs * 1e6) +
         (gemm_GBps > 0 ? bytes / (gemm_GBps * 1e3) : 0.0);
}

Machine Machine::by_name(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (name_or_path.size() > 4 && name_or_path.ends_with(".ini")) return load(name_or_path);
  const std::vector<fs::path> dirs = machine_dirs();
  std::error_code ec;
  for (const fs::path& dir : dirs)
    if (fs::is_regular_file(dir / (name_or_path + ".ini"), ec)) return load((dir / (name_or_path + ".ini")).string());
  std::set<std::string> names;  // sorted: the message is the same on every file system
  std::string searched;
  for (const fs::path& dir : dirs) {
    searched += (searched.empty() ? "" : ", ") + dir.string();
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".ini") names.insert(e.path().stem().string());
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  fail(ErrorCode::kInvalidArgument, "unknown machine '" + name_or_path +
                                        "' (available: " + (list.empty() ? "none in " + searched : list) +
                                        "; or give a path to an .ini file, or set SYMM_MACHINES_DIR)");
}

}  // namespace symm::sim

#include "core/auto_select.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/data_dirs.h"

namespace symm {
namespace {

struct Row {
  std::string op, dtype, algo, source;
  int world = 0, graph = 0, blocks = 0;
  std::size_t bytes = 0;
  double time_us = 0;
};

const char* kColumns = "op,world,dtype,graph,bytes,algo,blocks,source,time_us";

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  return out;
}

std::vector<Row> parse_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ErrorCode::kIo, "cannot read auto table '" + path + "'");
  std::string line;
  std::getline(in, line);
  if (line != kColumns)
    fail(ErrorCode::kInvalidArgument, path + ": header is not '" + kColumns + "' (regenerate: make experiments)");
  std::vector<Row> rows;
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const std::vector<std::string> c = split_csv(line);
    try {
      if (c.size() != 9) throw std::invalid_argument("columns");
      Row r;
      r.op = c[0], r.world = std::stoi(c[1]), r.dtype = c[2], r.graph = std::stoi(c[3]);
      r.bytes = std::stoull(c[4]), r.algo = c[5], r.blocks = std::stoi(c[6]), r.source = c[7];
      r.time_us = std::stod(c[8]);
      rows.push_back(std::move(r));
    } catch (const std::exception&) {
      fail(ErrorCode::kInvalidArgument, path + ":" + std::to_string(n) + ": malformed row '" + line + "'");
    }
  }
  return rows;
}

// Tables are read once per process (the library chooses on every call).
const std::vector<Row>& table(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::vector<Row>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) it = cache.emplace(path, parse_table(path)).first;
  return it->second;
}

std::string mode_name(bool graph) { return graph ? "graph" : "eager"; }

// The algorithm of `r` with its block count (else the default) where check_args accepts the
// call; nullopt-like (algo = nullptr) where it does not, or the id is not in the registry.
AutoChoice accept(const Row& r, const AutoQuery& q) {
  AutoChoice c;
  const AlgoInfo* a = nullptr;
  try {
    a = &find_algo(r.algo);
  } catch (const Error&) {
    return c;  // an id the registry no longer has: the table is stale, the next candidate runs
  }
  for (const int blocks : {r.blocks, 0}) {
    try {
      check_args(*a, q.dtype, q.bytes, q.world, blocks ? blocks : a->default_blocks(q.bytes, q.world));
      c.algo = a;
      c.blocks = blocks;
      return c;
    } catch (const Error&) {
    }
  }
  return c;
}

}  // namespace

AutoChoice auto_rule(Op op, std::size_t bytes, int world, DType t) {
  const char* order[2] = {};
  switch (op) {
    case Op::kAllReduce: order[0] = "one_shot_ll", order[1] = "two_shot"; break;
    case Op::kReduceScatter: order[0] = "push_ll", order[1] = "pull"; break;
    case Op::kAllGather: order[0] = "push_ll", order[1] = "push"; break;
    default: fail(ErrorCode::kInvalidArgument, std::string("no automatic algorithm for ") + op_name(op));
  }
  for (int i = 0; i < 2; ++i) {
    const AlgoInfo& a = find_algo(op, order[i]);
    try {
      check_args(a, t, bytes, world, a.default_blocks(bytes, world));
      AutoChoice c;
      c.algo = &a;
      c.source = "rule";
      c.why = std::string("rule: ") + (i == 0 ? "the flagged-packet program where it accepts the call"
                                              : "the bandwidth program (the flagged-packet one refuses the call)");
      return c;
    } catch (const Error&) {
      if (i == 1) throw;  // the bandwidth program's own reason (size granularity, world)
    }
  }
  fail(ErrorCode::kInternal, "auto_rule: unreachable");
}

std::string auto_table_path(const std::string& machine) {
  std::error_code ec;
  for (const std::filesystem::path& dir : auto_table_dirs())
    if (std::filesystem::is_regular_file(dir / (machine + ".csv"), ec)) return (dir / (machine + ".csv")).string();
  return "";
}

AutoChoice auto_choose_from(const std::string& path, const AutoQuery& q) {
  const std::string op = op_name(q.op);
  auto rule = [&](const std::string& reason) {
    AutoChoice c = auto_rule(q.op, q.bytes, q.world, q.dtype);
    c.why = reason + "; " + c.why;
    return c;
  };
  if (path.empty()) return rule("no auto table for machine '" + q.machine + "'");
  const std::vector<Row>& rows = table(path);

  std::vector<const Row*> world_rows;
  for (const Row& r : rows)
    if (r.op == op && r.world == q.world) world_rows.push_back(&r);
  if (world_rows.empty()) return rule(path + " has no " + op + " rows at world " + std::to_string(q.world));

  // The dtype: the call's, else bf16, else the first in the table; the graph mode likewise.
  std::string note;
  std::string dtype = dtype_name(q.dtype);
  auto has = [&](auto pred) { return std::any_of(world_rows.begin(), world_rows.end(), pred); };
  if (!has([&](const Row* r) { return r->dtype == dtype; })) {
    const std::string want = dtype;
    dtype = has([](const Row* r) { return r->dtype == "bf16"; }) ? "bf16" : world_rows.front()->dtype;
    note += "; no " + want + " rows, " + dtype + "'s choice at the same bytes";
  }
  int graph = q.graph ? 1 : 0;
  if (!has([&](const Row* r) { return r->dtype == dtype && r->graph == graph; })) {
    graph = 1 - graph;
    note += "; no " + mode_name(q.graph) + " rows, the " + mode_name(graph == 1) + " rows' choice";
  }
  std::vector<const Row*> cand;
  for (const Row* r : world_rows)
    if (r->dtype == dtype && r->graph == graph) cand.push_back(r);
  std::sort(cand.begin(), cand.end(), [](const Row* a, const Row* b) { return a->bytes < b->bytes; });

  // The nearest lower size (the smallest when below every size), then the nearest higher.
  std::size_t lo = 0;
  for (std::size_t i = 0; i < cand.size(); ++i)
    if (cand[i]->bytes <= q.bytes) lo = i;
  std::vector<std::size_t> order{lo};
  if (cand[lo]->bytes < q.bytes && lo + 1 < cand.size()) order.push_back(lo + 1);
  for (const std::size_t i : order) {
    const Row& r = *cand[i];
    AutoChoice c = accept(r, q);
    if (!c.algo) continue;
    c.source = r.source;
    std::ostringstream why;
    why << (r.source == "measured" ? "measured on " : "simulated with machine file ") << q.machine << " (" << op
        << ", world " << r.world << ", " << r.dtype << ", " << mode_name(r.graph == 1) << ", "
        << (r.bytes == q.bytes ? "this size" : format_size(r.bytes) + " row") << ": " << r.algo
        << ", blocks=" << r.blocks << ", " << r.time_us << " us)";
    if (c.blocks != r.blocks) why << "; the default block count (the row's is refused at this size)";
    if (i != lo) why << "; the " << format_size(cand[lo]->bytes) << " row's " << cand[lo]->algo << " refuses this size";
    c.why = why.str() + note + "; table " + path;
    return c;
  }
  return rule(path + ": the neighbouring rows' algorithms refuse this call");
}

AutoChoice auto_choose(const AutoQuery& q) { return auto_choose_from(auto_table_path(q.machine), q); }

}  // namespace symm

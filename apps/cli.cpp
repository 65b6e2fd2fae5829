#include "apps/cli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace symm::apps {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::size_t> parse_size_list(const std::string& spec) {
  auto bad = [&](const std::string& why) {
    fail(ErrorCode::kInvalidArgument,
         "bad size list '" + spec + "': " + why + " (forms: 4K:256M, 4K:256M:x4, 4K,1M,3000)");
  };
  if (spec.empty()) bad("empty");
  if (spec.find(':') == std::string::npos) {
    std::vector<std::size_t> sizes;
    for (const std::string& part : split(spec, ',')) {
      if (part.empty()) bad("empty element");
      sizes.push_back(parse_size(part));
    }
    return sizes;
  }
  const std::vector<std::string> parts = split(spec, ':');
  if (parts.size() > 3) bad("too many ':'");
  const std::size_t lo = parse_size(parts[0]), hi = parse_size(parts[1]);
  std::size_t factor = 2;
  if (parts.size() == 3) {
    const std::string& f = parts[2];
    if (f.size() < 2 || (f[0] != 'x' && f[0] != '*')) bad("step must look like x2 or x4");
    for (std::size_t i = 1; i < f.size(); ++i)
      if (f[i] < '0' || f[i] > '9') bad("step must look like x2 or x4");
    factor = std::stoul(f.substr(1));
    if (factor < 2 || factor > 1024) bad("step factor must be 2..1024");
  }
  if (lo == 0) bad("the range must start above 0");
  if (lo > hi) bad("start is larger than end");
  std::vector<std::size_t> sizes;
  // Multiply while it stays in range; the overflow guard matters only for absurd ends.
  for (std::size_t s = lo; s <= hi; s *= factor) {
    sizes.push_back(s);
    if (s > hi / factor) break;
  }
  return sizes;
}

std::vector<const AlgoInfo*> parse_algo_list(Op op, const std::string& spec) {
  std::vector<const AlgoInfo*> out;
  if (spec == "all") {
    for (const AlgoInfo& a : algorithms())
      if (a.op == op) out.push_back(&a);
    return out;
  }
  for (const std::string& name : split(spec, ',')) {
    if (name.empty()) fail(ErrorCode::kInvalidArgument, "empty algorithm name in '" + spec + "'");
    const AlgoInfo* a = name.find('.') != std::string::npos ? &find_algo(name) : &find_algo(op, name);
    if (a->op != op)
      fail(ErrorCode::kInvalidArgument, "algorithm '" + name + "' is not a " + op_name(op) + " algorithm");
    bool seen = false;
    for (const AlgoInfo* b : out) seen = seen || b == a;
    if (!seen) out.push_back(a);  // "one_shot,ld_reduce" names one algorithm once
  }
  return out;
}

std::string algo_label(const AlgoInfo& a) {
  const std::string suffix = a.id.substr(a.id.find('.') + 1);
  return a.alias.empty() ? suffix : suffix + " (" + a.alias + ")";
}

void check_writable(const std::string& path) {
  std::ofstream f(path, std::ios::out | std::ios::app);
  if (!f) fail(ErrorCode::kIo, "cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace symm::apps

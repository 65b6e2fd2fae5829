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

void refuse_with_csv(const std::string& csv, const std::string& option, const std::string& value,
                     const std::string& column, const std::string& default_value) {
  if (csv.empty()) return;
  fail(ErrorCode::kInvalidArgument,
       option + " " + value +
           " cannot go with --csv: the CSV schema (docs/design.md \"Results\") has no column for the " + column +
           ", so its rows could not be told from " + option + " " + default_value +
           " rows; drop --csv (the table on stdout shows it) or use " + option + " " + default_value);
}

}  // namespace symm::apps

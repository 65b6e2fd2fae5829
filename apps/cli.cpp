#include "apps/cli.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/fused.h"
#include "core/output_file.h"

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

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (std::string& p : split(s, ','))
    if (!p.empty()) out.push_back(std::move(p));
  return out;
}

std::size_t parse_count(const std::string& s, const char* option) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return std::size_t(v);
  } catch (const std::exception&) {
  }
  fail(ErrorCode::kInvalidArgument, std::string(option) + " '" + s + "' is not a non-negative integer");
}

bool names_fused_op(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string v;
    if (a == "--op" && i + 1 < argc)
      v = argv[i + 1];
    else if (a.rfind("--op=", 0) == 0)
      v = a.substr(5);
    for (const std::string& op : split_list(v))
      if (is_fused_op(op)) return true;
  }
  return false;
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

void check_writable(const std::string& path) { OutputFile::check(path); }

double available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  double kb = 0;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
}

void refuse_data_cost(const std::string& what, const std::string& subject, double bytes, double seconds,
                      const std::string& remedy, const std::string& how) {
  auto fmt = [](const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return std::string(b);
  };
  const double avail = available_memory_bytes();
  if (bytes > kMaxMemoryShare * avail)
    fail(ErrorCode::kInvalidArgument, what + " in data mode needs about " + fmt("%.1f", bytes / 1e9) +
                                          " GB of host memory for " + subject + ", more than half of the " +
                                          fmt("%.1f", avail / 1e9) + " GB available; " + remedy);
  if (seconds > kMaxDataSeconds)
    fail(ErrorCode::kInvalidArgument, what + " in data mode would take about " + fmt("%.0f", seconds) +
                                          " s on this host for " + subject + how + ", more than " +
                                          fmt("%.0f", kMaxDataSeconds) + " s; " + remedy);
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

const std::vector<Renamed>& renamed_options() {
  static const std::vector<Renamed> k = {
      {"--reduce-op", "--reduce"},      {"--eager", "--mode eager"},     {"--graph", "--mode graph"},
      {"--check-max", "--check-up-to"}, {"--no-check", "--timing-only"},
  };
  return k;
}

void refuse_renamed(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    for (const Renamed& r : renamed_options()) {
      const std::string old = r.old_spelling;
      if (a == old || a.rfind(old + "=", 0) == 0)
        fail(ErrorCode::kInvalidArgument,
             old + " was renamed " + r.new_spelling + " (run, sweep and bench on both backends share one vocabulary)");
    }
  }
}

void parse_args(int argc, char** argv, const boost::program_options::options_description& d,
                boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  refuse_renamed(argc, argv);
  // Whole option names only: Boost's default style guesses a prefix (`--mach` ran as --machine,
  // `--m` was "ambiguous" between --machine and --mode), so a typo could run something else.
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  const po::parsed_options parsed = po::command_line_parser(argc, argv).options(d).style(style).run();
  // Without a positional description Boost keeps a stray word as an option with no name:
  // `--bytes 1 M` would silently drop the M.
  for (const po::option& o : parsed.options) {
    if (o.position_key < 0 && !o.string_key.empty()) continue;
    const std::string word = o.original_tokens.empty() ? "?" : o.original_tokens.front();
    std::string after;
    for (int i = 1; i < argc; ++i)
      if (word == argv[i]) {
        // The option the word follows: "--timing-only", or "--bytes 1" when it follows a value.
        if (i > 1 && argv[i - 1][0] == '-')
          after = std::string(" after '") + argv[i - 1] + "'";
        else if (i > 2 && argv[i - 2][0] == '-')
          after = std::string(" after '") + argv[i - 2] + " " + argv[i - 1] + "'";
        break;
      }
    fail(ErrorCode::kInvalidArgument,
         "unexpected argument '" + word + "'" + after + ": every option takes one word (--bytes 1M, --sizes 4K:1M)");
  }
  po::store(parsed, vm);
}

bool parse_format(const std::string& format) {
  if (format == "table") return false;
  if (format == "nccl-tests") return true;
  fail(ErrorCode::kInvalidArgument, "--format: unknown format '" + format + "' (valid: table, nccl-tests)");
}

std::vector<bool> parse_mode(const std::string& mode, bool allow_both) {
  if (mode == "graph") return {true};
  if (mode == "eager") return {false};
  if (mode == "both" && allow_both) return {true, false};
  fail(ErrorCode::kInvalidArgument,
       "--mode: unknown launch mode '" + mode + "' (valid: graph, eager" + (allow_both ? ", both)" : ")"));
}

}  // namespace symm::apps

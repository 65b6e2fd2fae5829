// Small pieces the sub-commands share: exit codes, algorithm lists, option helpers.
#pragma once

#include <boost/program_options.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/registry.h"

namespace symm::apps {

// Exit codes, the same for every sub-command. Scripts (experiments/Makefile, CI) rely on
// "2 = you asked for something wrong" versus "1 = it ran and the answer was wrong".
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;   // a result failed its check, a deadlock, a race
inline constexpr int kExitUsage = 2;  // bad input: names, sizes, options, paths

// Size lists (--sizes) are parsed by symm::parse_size_list (core/sizes.h), shared with the CUDA
// bench.

// Comma-separated algorithm names for `op` ("one_shot,two_shot", ids, suffixes) or "all".
// Unknown names throw listing the valid ones (find_algo).
std::vector<const AlgoInfo*> parse_algo_list(Op op, const std::string& spec);

// "a,b,,c" -> {"a", "b", "c"}: a comma list, empty items dropped.
std::vector<std::string> split_list(const std::string& s);
// A non-negative integer option value ("--m 4096"); throws kInvalidArgument naming `option`.
std::size_t parse_count(const std::string& s, const char* option);
// Whether --op in argv names a fused operation (ag_mm, mm_rs): run, sweep and bench hand over to
// their fused-op parsers then.
bool names_fused_op(int argc, char** argv);

// "ld_reduce (one_shot)": the id's suffix with the friendly alias, for tables.
std::string algo_label(const AlgoInfo& a);

// Fails with kIo naming the path and the reason when `path` cannot be written
// (OutputFile::check, core/output_file.h: every file goes through OutputFile). Run before long
// work so a typo in a path costs nothing. Leaves no file behind (an empty CSV of a run that then
// fails would read as a run with no rows).
void check_writable(const std::string& path);

// The result schema (docs/design.md "Results", core/result.h) has no column for some options (the
// reduction, threads per block): a CSV row of `option value` could not be told from a row at
// `option default_value`. Call it when such an option is off its default: with `csv` set it
// throws kInvalidArgument, one line naming the option and the missing column; without --csv it
// does nothing (the table on stdout shows the option).
void refuse_with_csv(const std::string& csv, const std::string& option, const std::string& value,
                     const std::string& column, const std::string& default_value);

// ---- the cost of a data-mode simulation, known before it starts ----------------------------
// The data-mode simulator moves every byte (and multiplies every matrix) on the CPU: runs the
// host cannot hold, or that would take more than kMaxDataSeconds, are refused up front with the
// option that avoids them.
inline constexpr double kMaxDataSeconds = 60;
inline constexpr double kMaxMemoryShare = 0.5;  // of the host's available memory

// MemAvailable from /proc/meminfo (what can be allocated without swapping), else physical memory.
double available_memory_bytes();

// Throws kInvalidArgument when `bytes` of host memory is more than kMaxMemoryShare of what is
// available, or `seconds` more than kMaxDataSeconds (seconds < 0: not estimated): "`what` in data
// mode needs about 3.1 GB of host memory for `subject`, ...; `remedy`" / "... would take about
// 75 s on this host for `subject``how`, more than 60 s; `remedy`".
void refuse_data_cost(const std::string& what, const std::string& subject, double bytes, double seconds,
                      const std::string& remedy, const std::string& how = "");

// ---- one vocabulary for run, sweep and bench (both backends) ------------------------------
// Spellings an older CLI used. Any of them in argv (alone or as --old=value) throws
// kInvalidArgument: "--reduce-op was renamed --reduce (...)". Called by parse_args.
struct Renamed {
  const char* old_spelling;
  const char* new_spelling;
};
const std::vector<Renamed>& renamed_options();
void refuse_renamed(int argc, char** argv);

// Parses argv (argv[0]: the sub-command) against `d` into `vm` (not notified: the caller
// handles --help first). Refuses renamed spellings, options given by a prefix of their name
// (`--mach`: whole names only), and every word that is neither an option nor its value, naming
// it and the option before it ("unexpected argument 'M' after --bytes 1").
void parse_args(int argc, char** argv, const boost::program_options::options_description& d,
                boost::program_options::variables_map& vm);

// Runs `parse(value)` and rethrows a symm::Error from it prefixed with the option it is about:
// "--check-up-to: malformed size '-1': ...".
template <class F>
auto for_option(const char* option, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    throw Error(e.code(), std::string(option) + ": " + e.what());
  }
}

// --format: "table" (ours) or "nccl-tests" (core/nccl_tests_format.h); true for nccl-tests.
bool parse_format(const std::string& format);

// "graph" / "eager" (and "both" where `allow_both`) -> the list of launch modes (true = graph).
std::vector<bool> parse_mode(const std::string& mode, bool allow_both);

}  // namespace symm::apps

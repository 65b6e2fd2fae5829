// Small pieces the sub-commands share: exit codes, algorithm lists, option helpers.
#pragma once

#include <cstddef>
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

// "ld_reduce (one_shot)": the id's suffix with the friendly alias, for tables.
std::string algo_label(const AlgoInfo& a);

// Fails with kIo naming the path and the reason when `path` cannot be created for writing.
// Run before long work so a typo in a path costs nothing.
void check_writable(const std::string& path);

// The result schema (docs/design.md "Results", core/result.h) has no column for some options (the
// reduction, threads per block): a CSV row of `option value` could not be told from a row at
// `option default_value`. Call it when such an option is off its default: with `csv` set it
// throws kInvalidArgument, one line naming the option and the missing column; without --csv it
// does nothing (the table on stdout shows the option).
void refuse_with_csv(const std::string& csv, const std::string& option, const std::string& value,
                     const std::string& column, const std::string& default_value);

}  // namespace symm::apps

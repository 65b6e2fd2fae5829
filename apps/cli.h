// Small pieces the sub-commands share: exit codes, size lists, option helpers.
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

// "4K:256M" (x2 steps), "4K:256M:x4" (x4 steps) or "4K,64K,1000" -> byte counts, ascending
// for ranges, in the given order for lists. Throws symm::Error (kInvalidArgument) naming
// the bad part.
std::vector<std::size_t> parse_size_list(const std::string& spec);

// Comma-separated algorithm names for `op` ("one_shot,two_shot", ids, suffixes) or "all".
// Unknown names throw listing the valid ones (find_algo).
std::vector<const AlgoInfo*> parse_algo_list(Op op, const std::string& spec);

// "ld_reduce (one_shot)": the id's suffix with the friendly alias, for tables.
std::string algo_label(const AlgoInfo& a);

// Fails with kIo naming the path and the reason when `path` cannot be created for writing.
// Run before long work so a typo in a path costs nothing.
void check_writable(const std::string& path);

}  // namespace symm::apps

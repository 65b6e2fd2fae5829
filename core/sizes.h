// Size lists: the one grammar every command takes for --sizes (sweep, bench --backend sim and
// bench --backend cuda).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace symm {

// "4K:256M"    LO:HI, x2 steps: 4K, 8K, ... 256M (from LO; HI only when a step hits it)
// "4K:256M:x4" LO:HI:xF, xF steps, F in 2..1024 ("X4" too)
// "16K,64K,1M" a comma list, kept in its order
// Every size is a symm::parse_size ("4096", "4K", "1M", "1G") above 0. A range stops at the last
// step that does not exceed HI, so it never wraps: "1G:17179869183G" ends at 2^63.
// Throws symm::Error (kInvalidArgument) naming the list and the bad part.
std::vector<std::size_t> parse_size_list(const std::string& spec);

}  // namespace symm

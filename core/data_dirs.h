// Where symmcoll's data files are found: the simulator's machine files and the `--algo auto`
// tables (core/auto_select.h), in the source tree, next to an installed binary or library.
#pragma once

#include <filesystem>
#include <vector>

namespace symm {

// Machine files (<name>.ini), first match wins: $SYMM_MACHINES_DIR; next to the running
// executable, <exe>/../share/symmcoll/machines (an installed or moved installation); the install
// prefix's share/symmcoll/machines (a program linked against the installed library); the source
// tree's experiments/machines (a binary in its build tree).
std::vector<std::filesystem::path> machine_dirs();

// `--algo auto` tables (<machine>.csv), first match wins: $SYMM_AUTO_DIR, then the directory
// `auto` beside each machine directory above (share/symmcoll/auto, experiments/auto).
std::vector<std::filesystem::path> auto_table_dirs();

}  // namespace symm

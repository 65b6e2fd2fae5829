#include "core/data_dirs.h"

#include <cstdlib>

// The source tree's machine files (a binary run from its build tree) and the installed ones
// (cmake --install), both set by CMake.
#ifndef SYMM_MACHINES_DIR
#define SYMM_MACHINES_DIR "experiments/machines"
#endif

namespace symm {

std::vector<std::filesystem::path> machine_dirs() {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SYMM_MACHINES_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "symmcoll" / "machines");
#ifdef SYMM_MACHINES_INSTALL_DIR
  dirs.emplace_back(SYMM_MACHINES_INSTALL_DIR);
#endif
  dirs.emplace_back(SYMM_MACHINES_DIR);
  return dirs;
}

std::vector<std::filesystem::path> auto_table_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("SYMM_AUTO_DIR"); env && *env) dirs.emplace_back(env);
  for (const std::filesystem::path& d : machine_dirs()) dirs.push_back(d.parent_path() / "auto");
  return dirs;
}

}  // namespace symm

// Running the built command as users do, for the CLI tests: the command line, its output (stdout
// and stderr together, in order) and exit code, and the checks every bad-input case shares.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace symm_test {

struct Out {
  int code = -1;
  std::string out;  // stdout and stderr together, in order
};

// Any shell command line.
inline Out run_command(const std::string& cmd) {
  Out r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// The built binary (SYMMCOLL_BIN) with `args`.
inline Out symmcoll(const std::string& args) { return run_command(std::string(SYMMCOLL_BIN) + " " + args); }

inline int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Bad input: exit 2 and one line `symmcoll: error: ...` that says `message`.
inline void expect_one_line_error(const Out& r, const std::string& args, const std::string& message) {
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_EQ(r.out.rfind("symmcoll: error: ", 0), 0u) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(lines(r.out), 1) << args << "\n" << r.out;
}

}  // namespace symm_test

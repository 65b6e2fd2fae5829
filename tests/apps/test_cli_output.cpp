// Results are never lost silently: every file the command writes (CSV, trace, machine file,
// calibration rows, the table on stdout) is checked, a write error is one line naming the file
// and the reason with a non-zero exit, and no partial file is left (core/output_file.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/apps/cli_run.h"

namespace {

using namespace symm_test;
namespace fs = std::filesystem;

// A fresh directory of the test's own.
std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "symmcoll_out_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A link to /dev/full (writes fail with ENOSPC, as on a full disk); "" where it cannot be made.
std::string full_link(const std::string& dir) {
  const std::string link = dir + "/full.out";
  std::error_code ec;
  if (!fs::exists("/dev/full", ec)) return "";
  fs::create_symlink("/dev/full", link, ec);
  return ec ? "" : link;
}

// Everything in `dir` but the names in `keep`: the leftovers of a failed write.
std::vector<std::string> leftovers(const std::string& dir, const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (std::find(keep.begin(), keep.end(), n) == keep.end()) out.push_back(n);
  }
  return out;
}

// A write error: non-zero exit, one error line naming the file and strerror's words.
void expect_write_error(const Out& r, const std::string& args, const std::string& file, const std::string& reason) {
  EXPECT_NE(r.code, 0) << args << "\n" << r.out;
  const std::size_t at = r.out.find("symmcoll: error: ");
  ASSERT_NE(at, std::string::npos) << args << "\n" << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find(file), std::string::npos) << args << "\n" << r.out;
  EXPECT_NE(line.find(reason), std::string::npos) << args << "\n" << r.out;
  EXPECT_EQ(r.out.find("symmcoll: error: ", at + 1), std::string::npos) << args << "\n" << r.out;
}

TEST(CliOutput, AFullDiskIsAnErrorForEveryWriter) {
  const std::string dir = fresh_dir("full");
  const std::string full = full_link(dir);
  if (full.empty()) GTEST_SKIP() << "no /dev/full here";
  const std::string src = std::string(SYMM_SOURCE_DIR) + "/experiments/machines/h200x4.ini";
  const std::string cal = dir + "/cal.csv";
  ASSERT_EQ(symmcoll("calibrate --backend sim --csv " + cal).code, 0);
  const std::vector<std::string> cases = {
      "sweep --sizes 4K --algo one_shot --quiet --csv " + full,
      "sweep --op ag_mm --shape 8b --m 4096 --timing-only --csv " + full,
      "calibrate --backend sim --csv " + full,
      "run --algo one_shot --bytes 4K --trace " + full,
      "run --op ag_mm --algo ce --n 128 --k 192 --m 384 --trace " + full,
      "fit --calibration " + cal + " --base " + src + " --out " + full,
  };
  for (const std::string& args : cases) expect_write_error(symmcoll(args), args, full, "No space left on device");
  // The link is still a link to the device (fit used to rename a regular file over it).
  ASSERT_TRUE(fs::is_symlink(full));
  EXPECT_EQ(fs::read_symlink(full), "/dev/full");
  EXPECT_EQ(leftovers(dir, {"full.out", "cal.csv"}), std::vector<std::string>{});
}

// What a command prints is a result too: stdout on a full disk is an error.
TEST(CliOutput, AFullStdoutIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const char* args : {"list", "sweep --sizes 4K --algo one_shot --quiet", "run --algo one_shot --bytes 4K"}) {
    // run_command adds 2>&1 after the group: stderr to the test, stdout to the full device.
    const Out r = run_command("{ " + std::string(SYMMCOLL_BIN) + " " + args + " >/dev/full; }");
    EXPECT_NE(r.code, 0) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("symmcoll: error: cannot write standard output: No space left on device"), std::string::npos)
        << args << "\n"
        << r.out;
  }
}

TEST(CliOutput, AMissingDirectoryNamesTheFileAndTheReason) {
  const std::string dir = fresh_dir("nodir");
  const std::string bad = dir + "/no/such/dir/out";
  const std::string src = std::string(SYMM_SOURCE_DIR) + "/experiments/machines/h200x4.ini";
  const std::string cal = dir + "/cal.csv";
  ASSERT_EQ(symmcoll("calibrate --backend sim --csv " + cal).code, 0);
  for (const std::string& args : {
           "sweep --sizes 4K --algo one_shot --csv " + bad,
           "sweep --op mm_rs --shape 8b --m 4096 --timing-only --csv " + bad,
           "run --algo one_shot --bytes 4K --trace " + bad,
           "calibrate --backend sim --csv " + bad,
           "fit --calibration " + cal + " --base " + src + " --out " + bad,
       })
    expect_one_line_error(symmcoll(args), args, "cannot write '" + bad + "': No such file or directory");
}

// A write that fails half-way (here: the file-size limit, EFBIG) leaves neither a partial file
// nor a temporary, and an older file of that name untouched.
TEST(CliOutput, AWriteThatFailsHalfWayLeavesNoPartialFile) {
  const std::string dir = fresh_dir("half");
  const std::string csv = dir + "/rows.csv", trace = dir + "/t.json", old = dir + "/old.csv";
  std::ofstream(old) << "the old rows\n";
  // 2 KiB: the header and a few rows fit, the whole sweep does not.
  const std::string limit = "trap '' XFSZ; ulimit -f 2; ";
  const std::string bin = std::string(SYMMCOLL_BIN);
  Out r = run_command(limit + bin + " sweep --sizes 4K:64M --timing-only --quiet --csv " + csv);
  expect_write_error(r, "sweep", csv, "File too large");
  r = run_command(limit + bin + " run --algo one_shot --bytes 1M --trace " + trace);
  expect_write_error(r, "run --trace", trace, "File too large");
  r = run_command(limit + bin + " sweep --sizes 4K:64M --timing-only --quiet --csv " + old);
  expect_write_error(r, "sweep over an old file", old, "File too large");
  EXPECT_EQ(slurp(old), "the old rows\n");
  EXPECT_EQ(leftovers(dir, {"old.csv"}), std::vector<std::string>{});
}

// --csv /dev/stdout (into a pipe or a `>` file) writes the rows beside the table, as it always did.
TEST(CliOutput, CsvToStandardOutputStillWorks) {
  const std::string dir = fresh_dir("stdout");
  for (const std::string& redirect : {std::string(" | cat"), " > " + dir + "/both.txt; cat " + dir + "/both.txt"}) {
    const Out r = run_command(std::string(SYMMCOLL_BIN) +
                              " sweep --sizes 4K --algo one_shot --quiet --csv /dev/stdout" + redirect);
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("backend,machine,world"), std::string::npos) << redirect << "\n" << r.out;
    EXPECT_NE(r.out.find("# 1 rows, 0 skipped, 0 failed"), std::string::npos) << redirect << "\n" << r.out;
  }
}

// `fit --out` through a link writes the link's target and keeps the link; a read-only target
// is refused naming it and the reason.
TEST(CliOutput, FitOutKeepsALinkAndNamesTheReason) {
  const std::string dir = fresh_dir("fit");
  const std::string src = std::string(SYMM_SOURCE_DIR) + "/experiments/machines/h200x4.ini";
  const std::string cal = dir + "/cal.csv", real = dir + "/real.ini", link = dir + "/link.ini";
  ASSERT_EQ(symmcoll("calibrate --backend sim --csv " + cal).code, 0);
  fs::create_symlink("real.ini", link);
  Out r = symmcoll("fit --calibration " + cal + " --base " + src + " --out " + link);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_NE(slurp(real).find("flag_latency_us"), std::string::npos);
  EXPECT_EQ(leftovers(dir, {"cal.csv", "real.ini", "link.ini"}), std::vector<std::string>{});
  if (geteuid() != 0) {  // root writes read-only files
    fs::permissions(real, fs::perms::owner_read);
    r = symmcoll("fit --calibration " + cal + " --base " + src + " --out " + link);
    expect_one_line_error(r, "fit read-only",
                          "cannot write '" + link + "' (-> " + dir + "/real.ini): Permission denied");
    fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write);
  }
}

// `fit --calibration FILE.csv:a+b` reads only those benches' rows of FILE: the keys they determine
// are fitted, the others keep the base's values; a name no row has is refused, naming the file.
TEST(CliOutput, FitTakesOnlyTheNamedBenchesOfAFile) {
  const std::string dir = fresh_dir("fit_pick");
  const std::string src = std::string(SYMM_SOURCE_DIR) + "/experiments/machines/h200x4.ini";
  const std::string cal = dir + "/cal.csv", out = dir + "/m.ini";
  ASSERT_EQ(symmcoll("calibrate --backend sim --machine h200x2 --csv " + cal).code, 0);
  Out r = symmcoll("fit --calibration " + cal + ":launch+tile_gemm --base " + src + " --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string ini = slurp(out);
  EXPECT_NE(ini.find("# mean of launch"), std::string::npos) << ini;
  EXPECT_NE(ini.find("# tile_gemm (our tile GEMM program alone"), std::string::npos) << ini;
  EXPECT_NE(ini.find("flag_latency_us = "), std::string::npos);
  EXPECT_EQ(ini.find("# pingpong_relaxed"), std::string::npos) << ini;  // not read: kept from the base
  EXPECT_NE(ini.find("(only launch+tile_gemm)"), std::string::npos) << ini;
  r = symmcoll("fit --calibration " + cal + ":no_such_bench --base " + src + " --out " + out);
  expect_one_line_error(r, "fit pick",
                        "--calibration '" + cal + ":no_such_bench': " + cal + " has no row of those benches");
}

}  // namespace

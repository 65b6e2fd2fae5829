// OutputFile (core/output_file.h): written whole or not at all, links kept, errors named.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "core/common.h"
#include "core/output_file.h"
#include "tests/core/thrown.h"

namespace symm {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "symm_output_file_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

int entries(const std::string& dir) {
  return int(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

std::string error_of(const std::function<void()>& f) { return testing::thrown(f, ErrorCode::kIo); }

TEST(OutputFile, CommittedWholeOrNotAtAll) {
  const std::string dir = fresh_dir("whole"), path = dir + "/a.csv";
  {
    OutputFile f(path);
    f.stream() << "a,b\n" << 1 << "," << 2.5 << "\n";
    EXPECT_FALSE(fs::exists(path));  // only the temporary so far
    f.commit();
  }
  EXPECT_EQ(slurp(path), "a,b\n1,2.5\n");
  {
    OutputFile f(path);
    f.write("half");
  }  // not committed: the old file stays, the temporary goes
  EXPECT_EQ(slurp(path), "a,b\n1,2.5\n");
  EXPECT_EQ(entries(dir), 1);
  write_file(path, "new\n");
  EXPECT_EQ(slurp(path), "new\n");
  EXPECT_EQ(entries(dir), 1);
}

TEST(OutputFile, KeepsLinksAndPermissionBits) {
  const std::string dir = fresh_dir("links");
  write_file(dir + "/real.ini", "old\n");
  fs::permissions(dir + "/real.ini", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("real.ini", dir + "/link.ini");
  write_file(dir + "/link.ini", "new\n");
  EXPECT_TRUE(fs::is_symlink(dir + "/link.ini"));
  EXPECT_EQ(slurp(dir + "/real.ini"), "new\n");
  EXPECT_EQ(fs::status(dir + "/real.ini").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(entries(dir), 2);
}

TEST(OutputFile, ErrorsNameTheFileAndTheReason) {
  const std::string dir = fresh_dir("errors");
  EXPECT_EQ(error_of([&] { OutputFile f(dir + "/no/x.csv"); }),
            "cannot write '" + dir + "/no/x.csv': No such file or directory");
  EXPECT_EQ(error_of([&] { OutputFile::check(dir + "/no/x.csv"); }),
            "cannot write '" + dir + "/no/x.csv': No such file or directory");
  EXPECT_EQ(error_of([&] { OutputFile f(dir); }), "cannot write '" + dir + "': Is a directory");
  fs::create_symlink("missing/x.csv", dir + "/dangling");
  EXPECT_EQ(error_of([&] { write_file(dir + "/dangling", "x"); }),
            "cannot write '" + dir + "/dangling' (-> " + dir + "/missing/x.csv): No such file or directory");
  if (fs::exists("/dev/full")) {
    fs::create_symlink("/dev/full", dir + "/full");
    OutputFile::check(dir + "/full");  // it opens: the error comes with the bytes
    EXPECT_EQ(error_of([&] { write_file(dir + "/full", "rows\n"); }),
              "cannot write '" + dir + "/full' (-> /dev/full): No space left on device");
    EXPECT_TRUE(fs::is_symlink(dir + "/full"));
  }
  EXPECT_EQ(entries(dir), fs::exists("/dev/full") ? 2 : 1);
}

TEST(OutputFile, DevicesAreWrittenInPlace) {
  write_file("/dev/null", "discarded\n");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// /dev/stdout and /proc/self/fd/N name an open descriptor (a pipe, or a file the shell opened with
// `>`): written in place, never replaced by a renamed temporary the descriptor would not see.
TEST(OutputFile, OpenDescriptorsAreWrittenInPlace) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  write_file("/proc/self/fd/" + std::to_string(p[1]), "through the pipe\n");
  close(p[1]);
  char buf[64] = {};
  EXPECT_EQ(read(p[0], buf, sizeof buf - 1), 17);
  EXPECT_STREQ(buf, "through the pipe\n");
  close(p[0]);
  const std::string dir = fresh_dir("fd"), path = dir + "/shell.out";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  write_file("/dev/fd/" + std::to_string(fd), "rows\n");
  EXPECT_EQ(write(fd, "table\n", 6), 6);  // what the program prints after, through the same descriptor
  close(fd);
  EXPECT_EQ(slurp(path), "rows\ntable\n");
  EXPECT_EQ(entries(dir), 1);
}

}  // namespace
}  // namespace symm

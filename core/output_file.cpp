#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <streambuf>
#include <vector>

#include "core/common.h"

namespace symm {
namespace {

// Where a path leads: the end of its chain of symbolic links, and what is there.
struct Target {
  std::string path;
  bool exists = false;
  bool regular = true;  // a regular file or nothing yet: written through a temporary
  mode_t mode = 0;
  int descriptor = -1;  // >= 0: the path names this process's open descriptor (/dev/stdout, ...)
};

// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/<this pid>/fd/N: N, else -1. Opening
// such a path would give a new file description with its own offset, writing over what the shell's
// `>` file already holds; the descriptor itself (dup) shares the offset.
int descriptor_of(const std::string& p) {
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  std::string rest;
  const std::string self = "/proc/" + std::to_string(getpid()) + "/fd/";
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), self})
    if (p.starts_with(prefix)) rest = p.substr(prefix.size());
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(rest);
}

std::string dir_of(const std::string& p) {
  const std::size_t s = p.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}

std::string base_of(const std::string& p) {
  const std::size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

[[noreturn]] void io_error(const std::string& path, const std::string& target, int err) {
  std::string what = "cannot write '" + path + "'";
  if (target != path) what += " (-> " + target + ")";
  fail(ErrorCode::kIo, what + ": " + std::strerror(err));
}

Target resolve(const std::string& path) {
  if (path.empty()) fail(ErrorCode::kIo, "cannot write '': an empty path");
  Target t;
  t.path = path;
  for (int hops = 0;; ++hops) {
    if ((t.descriptor = descriptor_of(t.path)) >= 0) {
      t.regular = false;
      return t;
    }
    struct stat st;
    if (lstat(t.path.c_str(), &st) != 0) {
      if (errno != ENOENT) io_error(path, t.path, errno);
      return t;  // nothing there yet: whether its directory exists shows when the temporary is made
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops >= 40) io_error(path, t.path, ELOOP);
      std::vector<char> buf(PATH_MAX + 1);
      const ssize_t n = readlink(t.path.c_str(), buf.data(), buf.size() - 1);
      if (n < 0) io_error(path, t.path, errno);
      const std::string link(buf.data(), std::size_t(n));
      t.path = link.starts_with("/") ? link : dir_of(t.path) + "/" + link;
      continue;
    }
    t.exists = true;
    t.mode = st.st_mode;
    if (S_ISDIR(st.st_mode)) io_error(path, t.path, EISDIR);
    t.regular = S_ISREG(st.st_mode);
    if (access(t.path.c_str(), W_OK) != 0) io_error(path, t.path, errno);
    return t;
  }
}

// A temporary beside `t` (same file system, so the rename is atomic); returns its descriptor.
int make_temporary(const std::string& path, const Target& t, std::string& temp) {
  std::string name = dir_of(t.path) + "/." + base_of(t.path) + ".XXXXXX";
  const int fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) io_error(path, t.path, errno);
  temp = name;
  // mkstemp makes 0600; the file it stands for would have had the old file's bits, or 0666 less
  // the umask as for any new file.
  mode_t bits = t.mode & 07777;
  if (!t.exists) {
    const mode_t mask = umask(0);
    umask(mask);
    bits = 0666 & ~mask;
  }
  if (fchmod(fd, bits) != 0) {
    const int err = errno;
    close(fd);
    unlink(temp.c_str());
    io_error(path, t.path, err);
  }
  return fd;
}

int open_in_place(const std::string& path, const Target& t) {
  if (t.descriptor >= 0) {
    if (t.descriptor == 1) std::fflush(stdout);  // what the program printed before comes first
    const int fd = fcntl(t.descriptor, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) io_error(path, t.path, errno);
    return fd;
  }
  const int fd = open(t.path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) io_error(path, t.path, errno);
  return fd;
}

// Buffered writes to a descriptor that keep the first error instead of throwing from inside
// an ostream (which would swallow it).
class FdBuf : public std::streambuf {
 public:
  void attach(int fd) { fd_ = fd; }
  int error() const { return err_; }
  bool drain() {
    const char* p = buf_.data();
    std::size_t left = buf_.size();
    while (left && !err_) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        err_ = errno;
      } else if (n == 0) {
        err_ = EIO;
      } else {
        p += n, left -= std::size_t(n);
      }
    }
    buf_.clear();
    return !err_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) put(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    buf_.append(s, std::size_t(n));
    if (buf_.size() >= kChunk) drain();
    return n;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  static constexpr std::size_t kChunk = 1 << 20;
  void put(char c) {
    buf_.push_back(c);
    if (buf_.size() >= kChunk) drain();
  }
  int fd_ = -1;
  int err_ = 0;
  std::string buf_;
};

}  // namespace

struct OutputFile::Impl {
  std::string path;  // as given
  Target target;
  std::string temp;  // "" when written in place
  int fd = -1;
  FdBuf buf;
  std::ostream os{&buf};
  bool done = false;

  void discard() {
    if (fd >= 0) close(fd);
    fd = -1;
    if (!temp.empty()) unlink(temp.c_str());
    temp.clear();
    done = true;
  }
};

OutputFile::OutputFile(const std::string& path) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  m.target = resolve(path);
  m.fd = m.target.regular ? make_temporary(path, m.target, m.temp) : open_in_place(path, m.target);
  m.buf.attach(m.fd);
}

OutputFile::~OutputFile() {
  if (impl_ && !impl_->done) impl_->discard();
}

std::ostream& OutputFile::stream() { return impl_->os; }

void OutputFile::write(std::string_view text) { impl_->os.write(text.data(), std::streamsize(text.size())); }

const std::string& OutputFile::path() const { return impl_->path; }

void OutputFile::commit() {
  Impl& m = *impl_;
  if (m.done) fail(ErrorCode::kInternal, "OutputFile::commit called twice for '" + m.path + "'");
  int err = 0;
  if (!m.buf.drain()) err = m.buf.error();
  // fsync: a file system may report a full disk only when the data is written back.
  if (!err && !m.temp.empty() && fsync(m.fd) != 0) err = errno;
  const int fd = m.fd;
  m.fd = -1;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && !m.temp.empty() && std::rename(m.temp.c_str(), m.target.path.c_str()) != 0) err = errno;
  if (err) {
    m.discard();
    io_error(m.path, m.target.path, err);
  }
  m.temp.clear();
  m.done = true;
}

void OutputFile::check(const std::string& path) {
  const Target t = resolve(path);
  if (t.regular) {
    std::string temp;
    close(make_temporary(path, t, temp));
    unlink(temp.c_str());
  } else {
    close(open_in_place(path, t));
  }
}

void write_file(const std::string& path, std::string_view text) {
  OutputFile f(path);
  f.write(text);
  f.commit();
}

void check_stdout() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno ? errno : EIO;
  if (!flushed || std::ferror(stdout)) {
    std::clearerr(stdout);
    fail(ErrorCode::kIo, std::string("cannot write standard output: ") + std::strerror(err));
  }
}

}  // namespace symm

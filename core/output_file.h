// One way to write a file: every file the tools write (result CSVs, traces, machine files,
// calibration rows, tables) goes through OutputFile, so a write error is never lost (a full disk
// used to leave a truncated CSV and exit 0) and a failed run never leaves half a file.
//
//   OutputFile f(path);        // opens now: a bad path fails before the work
//   f.stream() << ...;         // or f.write(text)
//   f.commit();                // flushed, closed, checked; throws kIo naming the file and strerror
//
// Where `path` leads decides how it is written:
//   - a regular file, or nothing yet: a temporary beside it (".<name>.XXXXXX"), renamed over it
//     at commit. A file that is not committed (an exception, an early return) is removed, and the
//     old file, if any, is untouched. The old file's permission bits are kept.
//   - a symbolic link: followed (to its end); the link stays a link, its target is written as above.
//   - anything else (a device such as /dev/full or /dev/null, a FIFO): written in place (it
//     cannot be renamed over); every write and the close are still checked.
//   - this process's open descriptor (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N): written
//     through a duplicate of it, so a pipe or the shell's `>` file gets the bytes at its own offset.
// Errors read "cannot write 'out.csv': No space left on device", with " (-> /dev/full)" when a
// link led elsewhere; they are symm::Error with ErrorCode::kIo.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace symm {

class OutputFile {
 public:
  // Throws kIo, naming `path` and the reason, when it cannot be written (a missing directory, a
  // directory, no permission). Nothing is left behind then.
  explicit OutputFile(const std::string& path);
  // Without commit(): the temporary is removed (a device or FIFO has had what was written).
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // What to write. Errors are kept and reported by commit(), not here.
  std::ostream& stream();
  void write(std::string_view text);
  // Flushes, syncs (regular files), closes and renames into place; throws kIo on any error (the
  // temporary is removed then, the old file untouched). Call once.
  void commit();

  const std::string& path() const;

  // The checks of the constructor without writing anything: for a path needed only at the end
  // of long work, so that a typo in it costs nothing. Throws kIo as the constructor does.
  static void check(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes `text` to `path` whole (an OutputFile, committed). Throws kIo as commit() does.
void write_file(const std::string& path, std::string_view text);

// Flushes stdout and throws kIo ("cannot write standard output: No space left on device") when
// anything printed to it was lost: the tables a command prints are results too.
void check_stdout();

}  // namespace symm

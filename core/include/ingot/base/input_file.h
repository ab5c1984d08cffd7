// Files read by Ingot (configs, datasets, checkpoints, weights, run records) are opened here: a
// path is proven a regular file before open(), so a FIFO, a device such as /dev/zero, a socket or
// a folder is refused with one line instead of blocking in open() or being read without end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ingot {

/// A regular file open for reading, with its size as it was when opened.
class InputFile {
 public:
  /// Opens `path`. InputError "<path>: ..." when it does not exist (`missing_hint`, if given, is
  /// appended: what to check), cannot be opened, or is not a regular file: a FIFO, device, socket
  /// or folder is refused before anything is opened, so nothing can block on it.
  explicit InputFile(const std::filesystem::path& path, std::string_view missing_hint = {});
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// The path as given, for messages.
  const std::string& where() const { return where_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }

  /// Reads exactly `n` bytes at `offset`; InputError when reading fails or the file ends first
  /// (it shrank while being read).
  void read_at(void* dst, uint64_t n, uint64_t offset) const;
  /// The whole file; InputError when it holds more than `limit` bytes (`what` names the kind of
  /// file in that message, e.g. "a config file").
  std::string read_all(uint64_t limit, std::string_view what) const;
  /// Hands the descriptor to the caller (e.g. zlib's gzdopen), which closes it.
  int release();

 private:
  std::string where_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// InputError when `path` exists and is not a regular file (nothing is opened): for a file about
/// to be opened for appending or rewriting, where open() would block on a FIFO as well.
void require_regular_file(const std::filesystem::path& path);

/// `bytes` read from a file, as a message may quote them: UTF-8 text as it is, a control byte or a
/// byte that is not UTF-8 as \xNN, cut after `max` bytes with "..." (a damaged file cannot put
/// terminal escapes or a wall of garbage into a message).
std::string printable(std::string_view bytes, size_t max = 120);

/// The whole of the regular file `path`, refused (InputError) above `limit` bytes.
std::string read_file(const std::filesystem::path& path, uint64_t limit, std::string_view what,
                      std::string_view missing_hint = {});

}  // namespace ingot

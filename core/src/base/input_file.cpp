// InputFile: stat before open, so that only regular files are ever opened for reading; reads
// bounded by the size the file had when it was opened.
#include "ingot/base/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ingot/base/error.h"

namespace ingot {
namespace {

/// What a non-regular file is, for the refusal; nullptr for a regular file.
const char* non_regular_kind(mode_t mode) {
  if (S_ISREG(mode)) return nullptr;
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

[[noreturn]] void refuse_kind(const std::string& where, const char* kind) {
  throw InputError(fmt::format("{}: is {}, not a regular file: give the path of a file", where, kind));
}

[[noreturn]] void refuse_errno(const std::string& where, int err, std::string_view missing_hint) {
  if (err == ENOENT || err == ENOTDIR)
    throw InputError(missing_hint.empty() ? fmt::format("{}: no such file", where)
                                          : fmt::format("{}: no such file; {}", where, missing_hint));
  throw InputError(fmt::format("{}: cannot open it for reading: {}", where, std::strerror(err)));
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path, std::string_view missing_hint) : where_(path.string()) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) refuse_errno(where_, errno, missing_hint);
  if (const char* kind = non_regular_kind(st.st_mode)) refuse_kind(where_, kind);
  // O_NONBLOCK: should the path have become a FIFO since the stat, open() still returns at once
  // (fstat below refuses it); for a regular file the flag changes nothing.
  do {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) refuse_errno(where_, errno, missing_hint);
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw InputError(fmt::format("{}: cannot stat it: {}", where_, std::strerror(err)));
  }
  if (const char* kind = non_regular_kind(st.st_mode)) {
    ::close(fd_);
    refuse_kind(where_, kind);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(void* dst, uint64_t n, uint64_t offset) const {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t k = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw InputError(fmt::format("{}: read failed: {}", where_, std::strerror(errno)));
    if (k == 0) throw InputError(fmt::format("{}: the file shrank while being read", where_));
    p += k;
    n -= static_cast<uint64_t>(k);
    offset += static_cast<uint64_t>(k);
  }
}

std::string InputFile::read_all(uint64_t limit, std::string_view what) const {
  if (size_ > limit) {
    const auto shown = [](uint64_t n) {
      return n >= (1u << 20) ? fmt::format("{:.1f} MiB", static_cast<double>(n) / (1u << 20))
                             : fmt::format("{} bytes", n);
    };
    throw InputError(fmt::format("{}: holds {}, more than {} may ({}): is it the right file?", where_, shown(size_),
                                 what, shown(limit)));
  }
  std::string bytes(static_cast<size_t>(size_), '\0');
  read_at(bytes.data(), size_, 0);
  return bytes;
}

int InputFile::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void require_regular_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // (a file that is not there yet is made by the caller)
  if (const char* kind = non_regular_kind(st.st_mode)) refuse_kind(path.string(), kind);
}

std::string printable(std::string_view bytes, size_t max) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = std::min(bytes.size(), max);
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    // The length of a well-formed UTF-8 sequence starting here (1 for printable ASCII), else 0.
    size_t len = c >= 0x20 && c < 0x7f    ? 1
                 : c >= 0xc2 && c <= 0xdf ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len > 1) {
      if (i + len > n) len = 0;
      for (size_t k = 1; k < len; ++k)
        if ((p[i + k] & 0xc0) != 0x80) len = 0;
    }
    if (len == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  if (bytes.size() > max) out += "...";
  return out;
}

std::string read_file(const std::filesystem::path& path, uint64_t limit, std::string_view what,
                      std::string_view missing_hint) {
  return InputFile(path, missing_hint).read_all(limit, what);
}

}  // namespace ingot

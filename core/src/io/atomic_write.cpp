// atomic_write: temporary file in the target's folder, fsync, rename, fsync of the folder.
#include "ingot/io/atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "ingot/base/error.h"

namespace ingot::io {
namespace {

namespace fs = std::filesystem;

std::string os_reason(int err) { return std::strerror(err); }

// A unique name in the same folder (same file system, so rename is atomic); hidden so that a
// leftover from a killed process is not mistaken for a checkpoint.
fs::path temporary_name(const fs::path& path) {
  static std::atomic<uint64_t> counter{0};
  return path.parent_path() / fmt::format(".{}.tmp-{}-{}", path.filename().string(), ::getpid(), counter.fetch_add(1));
}

class FdSink final : public ByteSink {
 public:
  FdSink(int fd, const fs::path& path) : fd_(fd), path_(path) {}
  void write(const void* data, size_t n) override {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) throw Error(fmt::format("{}: write failed: {}", path_.string(), os_reason(errno)));
      p += k;
      n -= static_cast<size_t>(k);
      written_ += static_cast<size_t>(k);
    }
  }
  size_t written() const override { return written_; }

 private:
  int fd_;
  const fs::path& path_;
  size_t written_ = 0;
};

// Closes the descriptor and removes the temporary file unless release() was called.
class TempFile {
 public:
  TempFile(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  void close_checked(const fs::path& target) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      throw Error(fmt::format("{}: closing the temporary file failed: {}", target.string(), os_reason(errno)));
    }
  }
  void release() { path_.clear(); }

 private:
  int fd_;
  fs::path path_;
};

void sync_folder(const fs::path& folder, const fs::path& target) {
  const fs::path dir = folder.empty() ? fs::path(".") : folder;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(fmt::format("{}: cannot open its folder to sync it: {}", target.string(), os_reason(errno)));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot sync a folder (EINVAL); the rename is then as durable as they allow.
  if (rc != 0 && err != EINVAL) {
    throw Error(fmt::format("{}: syncing its folder failed: {}", target.string(), os_reason(err)));
  }
}

}  // namespace

void atomic_write(const fs::path& path, const std::function<void(ByteSink&)>& writer) {
  INGOT_CHECK(!path.filename().empty(), "atomic_write: '{}' names a folder, not a file", path.string());
  const fs::path tmp = temporary_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw Error(
        fmt::format("{}: cannot create a temporary file in its folder: {} (does the folder exist and is it "
                    "writable?)",
                    path.string(), os_reason(errno)));
  }
  TempFile file(fd, tmp);
  FdSink sink(fd, path);
  writer(sink);
  if (::fsync(fd) != 0) throw Error(fmt::format("{}: fsync failed: {}", path.string(), os_reason(errno)));
  file.close_checked(path);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw Error(fmt::format("{}: cannot replace it with the new file: {}", path.string(), os_reason(errno)));
  }
  file.release();
  sync_folder(path.parent_path(), path);
}

void atomic_write(const fs::path& path, std::string_view bytes) {
  atomic_write(path, [bytes](ByteSink& sink) { sink.write(bytes); });
}

}  // namespace ingot::io

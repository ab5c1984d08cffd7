// Shared by the fuzz targets: a per-process scratch file (in /dev/shm when there is one) for the
// readers that take a path, and a check that stops the process on a broken invariant.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace ingot::fuzz {

/// A file only this process writes, removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name) {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::is_directory("/dev/shm", ec)
                                          ? std::filesystem::path("/dev/shm")
                                          : std::filesystem::temp_directory_path();
    path_ = (dir / ("ingot-fuzz-" + name + "-" + std::to_string(::getpid()))).string();
  }
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& path() const { return path_; }

  /// Replaces the file's content with `size` bytes at `data`.
  void write(const void* data, size_t size) const {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) fail("cannot create the scratch file");
    if (size > 0 && std::fwrite(data, 1, size, f) != size) fail("cannot write the scratch file");
    if (std::fclose(f) != 0) fail("cannot close the scratch file");
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    std::fprintf(stderr, "fuzz harness: %s %s\n", what, path_.c_str());
    std::abort();
  }
  std::string path_;
};

/// A property every accepted input must have; a violation is a bug, reported like a crash.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace ingot::fuzz

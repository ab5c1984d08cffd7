// Atomic file replacement: write a temporary file beside the target, fsync it, rename it over
// the target, fsync the folder — so a crash leaves either the old file or the new one, never half.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string_view>

namespace ingot::io {

/// Where an atomic_write callback puts its bytes (the temporary file).
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  /// Appends `n` bytes; throws ingot::Error naming the file when the disk refuses them.
  virtual void write(const void* data, size_t n) = 0;
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  /// Bytes written so far.
  virtual size_t written() const = 0;
};

/// Replaces `path` with what `writer` produces. If `writer` throws (or any system call fails)
/// the temporary file is removed, `path` keeps its previous content and the exception
/// propagates. The folder must exist. Throws ingot::Error naming the path and the OS reason.
void atomic_write(const std::filesystem::path& path, const std::function<void(ByteSink&)>& writer);

/// Replaces `path` with `bytes` atomically (see above).
void atomic_write(const std::filesystem::path& path, std::string_view bytes);

}  // namespace ingot::io

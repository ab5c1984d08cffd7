// Helpers for the I/O tests: a scratch folder removed at scope exit, raw file bytes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ingot::test {

/// A fresh, empty folder under the system temp folder; removed with its content on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  /// File names in the folder, sorted (to spot leftover temporary files).
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

std::string read_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, const std::string& bytes);

}  // namespace ingot::test

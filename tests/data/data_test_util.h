// Helpers for the data tests: a private temp folder, raw file writers, error-message capture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ingot/data/data_loader.h"

namespace ingot::test {

/// A fresh folder under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Writes `bytes` gzip-compressed (zlib, independent of write_idx) or as they are.
void write_gz(const std::string& path, const std::vector<uint8_t>& bytes);
void write_plain(const std::string& path, const std::vector<uint8_t>& bytes);
std::vector<uint8_t> read_plain(const std::string& path);

/// An IDX header (ubyte) for `dims` followed by `data`.
std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data);

/// The message of the InputError `fn` throws ("" and a failed check when it throws nothing else).
std::string input_error_of(const std::function<void()>& fn);

/// Every batch of one epoch, flattened: inputs and targets, in order.
struct EpochData {
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<int64_t>> targets;
  std::vector<int64_t> indices;  // Batch::index
};
EpochData take_epoch(data::DataLoader& loader, int64_t epoch, int64_t start_batch = 0);

}  // namespace ingot::test

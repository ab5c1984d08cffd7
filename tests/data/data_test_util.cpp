// Helpers for the data tests (see data_test_util.h).
#include "data_test_util.h"

#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>

namespace ingot::test {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("ingot_data_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  if (!bytes.empty())
    REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

void write_plain(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<uint8_t> read_plain(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    out.insert(out.end(), {static_cast<uint8_t>(d >> 24), static_cast<uint8_t>(d >> 16), static_cast<uint8_t>(d >> 8),
                           static_cast<uint8_t>(d)});
  }
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string input_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    CHECK(e.exit_code() == ExitCode::Usage);
    return e.what();
  }
  FAIL("expected an InputError");
  return "";
}

EpochData take_epoch(data::DataLoader& loader, int64_t epoch, int64_t start_batch) {
  EpochData out;
  loader.begin_epoch(epoch, start_batch);
  while (auto batch = loader.next()) {
    REQUIRE(batch->epoch == epoch);
    out.inputs.push_back(batch->inputs.to_vector<float>());
    out.targets.push_back(batch->targets.to_vector<int64_t>());
    out.indices.push_back(batch->index);
  }
  return out;
}

}  // namespace ingot::test

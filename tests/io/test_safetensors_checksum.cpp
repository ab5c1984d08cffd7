// The checksum save_safetensors records: any changed byte of a saved file — tensor data, a
// metadata value, a dtype or shape — is refused as damage; a file without one (torch's) loads.
#include <catch2/catch.hpp>

#include <cstring>

#include "ingot/base/error.h"
#include "ingot/io/safetensors.h"
#include "io_test_util.h"
#include "test_support.h"

using namespace ingot;
using Catch::Matchers::Contains;
using ingot::test::ScratchDir;

namespace {

const io::NamedTensors kTensors = {{"fc.weight", Tensor::from_vector<float>({1.5f, -2.0f, 0.25f, 4.0f}, {2, 2})},
                                   {"fc.bias", Tensor::from_vector<float>({0.5f, 1.0f}, {2})}};

// The file's bytes with the first `from` in its header replaced by `to` (same length).
std::string edited(std::string bytes, const std::string& from, const std::string& to) {
  REQUIRE(from.size() == to.size());
  const size_t at = bytes.find(from);
  REQUIRE(at != std::string::npos);
  return bytes.replace(at, from.size(), to);
}

std::string refusal_of(const std::filesystem::path& file) {
  try {
    io::load_safetensors(file);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError for a damaged file");
  return {};
}

}  // namespace

TEST_CASE("save_safetensors records the checksum and load_safetensors verifies it", "[io][safetensors][checksum]") {
  ScratchDir dir;
  const auto file = dir / "model.safetensors";
  io::save_safetensors(file, kTensors, {{"format", "pt"}});
  const io::SafetensorsFile f = io::load_safetensors(file);
  CHECK(f.checksummed);
  REQUIRE(f.metadata.count(io::kChecksumKey) == 1);
  CHECK(f.metadata.at(io::kChecksumKey) == io::content_checksum(kTensors, {{"format", "pt"}}));
  CHECK(f.metadata.at(io::kChecksumKey).size() == 8);
  // What it covers: metadata, names, dtypes, shapes, bytes (an old checksum passed in is replaced).
  CHECK(io::content_checksum(kTensors, {{"format", "pt"}, {io::kChecksumKey, "12345678"}}) ==
        io::content_checksum(kTensors, {{"format", "pt"}}));
  CHECK(io::content_checksum(kTensors, {{"format", "pu"}}) != io::content_checksum(kTensors, {{"format", "pt"}}));
  const io::NamedTensors reshaped = {{"fc.weight", kTensors[0].second.reshape({4})}, kTensors[1]};
  CHECK(io::content_checksum(reshaped, {}) != io::content_checksum(kTensors, {}));
}

TEST_CASE("a flipped data byte, an edited metadata value or shape is refused as damage",
          "[io][safetensors][checksum]") {
  ScratchDir dir;
  const auto file = dir / "model.safetensors";
  io::save_safetensors(file, kTensors, {{"step", "336"}});
  const std::string good = test::read_bytes(file);

  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 0x10;
  test::write_bytes(file, flipped);
  CHECK_THAT(refusal_of(file), Contains(file.string() + ": the file is damaged: its content has CRC-32"));

  test::write_bytes(file, edited(good, R"("step":"336")", R"("step":"436")"));
  CHECK_THAT(refusal_of(file), Contains("the file is damaged"));

  test::write_bytes(file, edited(good, R"("shape":[2,2])", R"("shape":[1,4])"));
  CHECK_THAT(refusal_of(file), Contains("the file is damaged"));

  test::write_bytes(file, good);
  CHECK_NOTHROW(io::load_safetensors(file));
}

TEST_CASE("a file without the checksum (torch's) loads, unverified", "[io][safetensors][checksum]") {
  ScratchDir dir;
  const auto file = dir / "torch.safetensors";
  test::write_bytes(file, io::safetensors_bytes(kTensors, {{"format", "pt"}}));  // (writes no checksum)
  const io::SafetensorsFile f = io::load_safetensors(file);
  CHECK_FALSE(f.checksummed);
  CHECK(f.metadata.count(io::kChecksumKey) == 0);
  CHECK(f.tensors.at("fc.bias").to_vector<float>() == std::vector<float>{0.5f, 1.0f});
  // Written by another writer (Python's json.dumps spacing, torch's order) with the same content,
  // the checksum still holds: it covers the fields, not their spelling.
  const std::string crc = io::content_checksum(kTensors, {{"format", "pt"}});
  std::string header = R"({"fc.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [8, 24]}, )"
                       R"("fc.bias": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, )"
                       R"("__metadata__": {"ingot_crc32": ")" +
                       crc + R"(", "format": "pt"}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header;
  for (const Tensor& t : {kTensors[1].second, kTensors[0].second})
    bytes.append(static_cast<const char*>(t.storage()->data()), static_cast<size_t>(t.numel()) * 4);
  test::write_bytes(file, bytes);
  CHECK(io::load_safetensors(file).checksummed);
}

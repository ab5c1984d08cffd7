// Safetensors round trips: every dtype, 0-dim and empty tensors, strided inputs, metadata, and
// the exact bytes of the header (sorted names, metadata first, 8-byte padding).
#include <catch2/catch.hpp>

#include <cstring>

#include "ingot/io/safetensors.h"
#include "io_test_util.h"
#include "test_support.h"

using namespace ingot;
using Catch::Matchers::Contains;
using ingot::io::load_safetensors;
using ingot::io::save_safetensors;
using ingot::test::ScratchDir;

namespace {

const DType kAllDTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64,
                            DType::I32, DType::I8,  DType::U8,  DType::Bool};

// Bit-exact equality of shape, dtype and values.
void require_same(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.dtype() == expected.dtype());
  REQUIRE(actual.shape() == expected.shape());
  INGOT_REQUIRE_CLOSE(actual, expected, 0.0, 0.0);
}

uint64_t header_length(const std::string& bytes) {
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return n;
}

}  // namespace

TEST_CASE("safetensors round-trips every dtype, 0-dim and empty tensors", "[io][safetensors]") {
  ScratchDir dir;
  io::NamedTensors tensors;
  uint64_t seed = 1;
  for (DType t : kAllDTypes) {
    const std::string n(io::safetensors_dtype_name(t));
    tensors.emplace_back(n + ".matrix", test::random_tensor({3, 5}, t, seed++, -50, 50));
    tensors.emplace_back(n + ".scalar", test::random_tensor({}, t, seed++, 0, 2));
    tensors.emplace_back(n + ".empty", Tensor::empty({0, 4}, t));
  }
  const auto path = dir / "all.safetensors";
  save_safetensors(path, tensors);
  const auto file = load_safetensors(path);
  REQUIRE(file.tensors.size() == tensors.size());
  CHECK(file.metadata.size() == 1);  // the checksum alone
  CHECK(file.checksummed);
  for (const auto& [name, t] : tensors) {
    INFO(name);
    REQUIRE(file.tensors.count(name) == 1);
    require_same(file.tensors.at(name), t);
  }
  CHECK(file.tensors.at("F32.scalar").dim() == 0);
  // The data section follows the sorted names.
  CHECK(file.order.front() == "BF16.empty");
  CHECK(std::is_sorted(file.order.begin(), file.order.end()));
}

TEST_CASE("safetensors stores non-contiguous tensors as their row-major values", "[io][safetensors]") {
  ScratchDir dir;
  const Tensor base = test::random_tensor({4, 6}, DType::F32, 7);
  const io::NamedTensors tensors = {
      {"transposed", base.transpose(0, 1)},
      {"strided", base.slice(1, 1, 6, 2)},
      {"expanded", test::random_tensor({1, 3}, DType::F64, 8).expand({5, 3})},
      {"row", base.select(0, 2)},
      {"permuted_i8", test::random_tensor({2, 3, 4}, DType::I8, 9, -100, 100).permute({2, 0, 1})},
      {"parameter_view", test::random_tensor({3, 2}, DType::F32, 10).set_requires_grad().transpose(0, 1)},
  };
  save_safetensors(dir / "views.safetensors", tensors);
  const auto file = load_safetensors(dir / "views.safetensors");
  for (const auto& [name, t] : tensors) {
    INFO(name);
    const Tensor& loaded = file.tensors.at(name);
    CHECK(loaded.is_contiguous());
    require_same(loaded, t.contiguous());
  }
}

TEST_CASE("safetensors metadata round-trips, including UTF-8 and empty values", "[io][safetensors]") {
  ScratchDir dir;
  const io::Metadata meta = {{"format", "pt"}, {"epoch", "3"}, {"note", "caf\xc3\xa9 \"quoted\"\n"}, {"empty", ""}};
  save_safetensors(dir / "m.safetensors", io::NamedTensors{{"w", Tensor::scalar(1.5)}}, meta);
  auto file = load_safetensors(dir / "m.safetensors");
  CHECK(file.metadata.erase(io::kChecksumKey) == 1);
  CHECK(file.metadata == meta);
  CHECK(file.tensors.at("w").item() == 1.5);
}

TEST_CASE("the header matches the format byte for byte", "[io][safetensors]") {
  const Tensor a = Tensor::from_vector<float>({1.0f, 2.0f}, {2});
  const Tensor b = Tensor::from_vector<int64_t>({7}, {1, 1});
  const std::string bytes = io::safetensors_bytes({{"b", b}, {"a", a}}, {{"k", "v"}});
  const std::string expected_header =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"I64","shape":[1,1],"data_offsets":[8,16]}})";
  const uint64_t n = header_length(bytes);
  CHECK(n % 8 == 0);
  REQUIRE(n >= expected_header.size());
  CHECK(bytes.substr(8, expected_header.size()) == expected_header);
  CHECK(bytes.substr(8 + expected_header.size(), n - expected_header.size()) ==
        std::string(n - expected_header.size(), ' '));
  REQUIRE(bytes.size() == 8 + n + 16);
  float f[2];
  int64_t i = 0;
  std::memcpy(f, bytes.data() + 8 + n, 8);
  std::memcpy(&i, bytes.data() + 8 + n + 8, 8);
  CHECK(f[0] == 1.0f);
  CHECK(f[1] == 2.0f);
  CHECK(i == 7);
}

TEST_CASE("an empty tensor list is a valid file", "[io][safetensors]") {
  ScratchDir dir;
  const std::string bytes = io::safetensors_bytes(io::NamedTensors{});
  CHECK(bytes.size() == 16);
  CHECK(bytes.substr(8) == "{}      ");
  save_safetensors(dir / "none.safetensors", io::NamedTensors{});
  CHECK(load_safetensors(dir / "none.safetensors").tensors.empty());
}

TEST_CASE("the map overload saves the same file", "[io][safetensors]") {
  ScratchDir dir;
  const std::map<std::string, Tensor> m = {{"x", test::random_tensor({3}, DType::F32, 3)},
                                           {"y", test::random_tensor({2, 2}, DType::BF16, 4)}};
  save_safetensors(dir / "map.safetensors", m);
  const auto file = load_safetensors(dir / "map.safetensors");
  require_same(file.tensors.at("x"), m.at("x"));
  require_same(file.tensors.at("y"), m.at("y"));
}

TEST_CASE("duplicate, reserved and undefined names are refused before any file is made", "[io][safetensors]") {
  ScratchDir dir;
  const Tensor t = Tensor::scalar(1.0);
  const auto path = dir / "bad.safetensors";
  REQUIRE_THROWS_WITH(save_safetensors(path, io::NamedTensors{{"w", t}, {"w", t}}),
                      Contains("two tensors are named 'w'"));
  REQUIRE_THROWS_WITH(save_safetensors(path, io::NamedTensors{{"__metadata__", t}}),
                      Contains("'__metadata__' is reserved"));
  REQUIRE_THROWS_WITH(save_safetensors(path, io::NamedTensors{{"u", Tensor()}}), Contains("tensor 'u' is undefined"));
  REQUIRE_THROWS_WITH(save_safetensors(path, io::NamedTensors{{"w", t}}, {{"bad", "\xff"}}),
                      Contains("not valid UTF-8"));
  CHECK(dir.entries().empty());
}

TEST_CASE("dtype names follow the format", "[io][safetensors]") {
  CHECK(io::safetensors_dtype_name(DType::Bool) == "BOOL");
  CHECK(io::safetensors_dtype_name(DType::BF16) == "BF16");
  CHECK(io::safetensors_dtype_from_name("U8") == DType::U8);
  CHECK_FALSE(io::safetensors_dtype_from_name("F8_E4M3").has_value());
  CHECK_FALSE(io::safetensors_dtype_from_name("f32").has_value());
}

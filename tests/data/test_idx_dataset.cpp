// The idx dataset: images of rank 2, 3 and 4 mapped to [C, H, W] samples, bytes scaled, float32
// IDX taken as stored, int32 labels, the class count; rank 1 and float labels refused. Also
// read_idx_any / write_idx round trips of every IDX data type.
#include <catch2/catch.hpp>

#include <cstring>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/idx.h"
#include "ingot/data/idx_dataset.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::TempDir;

namespace {

template <class T>
IdxArray typed(std::vector<int64_t> dims, const std::vector<T>& values, uint8_t type) {
  IdxArray a{std::move(dims), std::vector<uint8_t>(values.size() * sizeof(T)), type};
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

IdxArray bytes(std::vector<int64_t> dims) {
  IdxArray a{std::move(dims), {}, kIdxUbyte};
  for (int64_t i = 0; i < a.numel(); ++i) a.data.push_back(static_cast<uint8_t>(i * 5 % 256));
  return a;
}

/// Writes images and labels for both splits (the test split equals the train split).
IdxFiles write_splits(const TempDir& dir, const IdxArray& images, const IdxArray& labels) {
  write_idx(dir.file("x.gz"), images, true);
  write_idx(dir.file("y"), labels, false);
  return {dir.file("x.gz"), dir.file("y"), dir.file("x.gz"), dir.file("y")};
}

std::vector<float> sample_of(const Dataset& d, int64_t i) {
  std::vector<float> out(static_cast<size_t>(d.sample_numel()));
  d.read(i, out.data());
  return out;
}

}  // namespace

TEST_CASE("idx dataset: [N, F] features are samples [F, 1, 1]", "[data][idx]") {
  TempDir dir;
  const DatasetSplits s = idx_datasets(write_splits(dir, bytes({3, 5}), bytes({3})), Normalize{});
  CHECK(s.train->sample_shape() == Shape{5, 1, 1});
  CHECK(sample_of(*s.train, 1)[2] == Approx(35.0f / 255.0f));
}

TEST_CASE("idx dataset: [N, H, W] images are grey samples [1, H, W], bytes scaled", "[data][idx]") {
  TempDir dir;
  const DatasetSplits s = idx_datasets(write_splits(dir, bytes({2, 3, 4}), bytes({2})), Normalize{{0.5f}, {0.5f}});
  CHECK(s.test->sample_shape() == Shape{1, 3, 4});
  CHECK(sample_of(*s.test, 1)[11] == Approx((115.0f / 255.0f - 0.5f) / 0.5f));
}

TEST_CASE("idx dataset: [N, C, H, W] images are taken as they are", "[data][idx]") {
  TempDir dir;
  const DatasetSplits s = idx_datasets(write_splits(dir, bytes({2, 3, 2, 2}), bytes({2})), Normalize{});
  CHECK(s.train->sample_shape() == Shape{3, 2, 2});
  CHECK(s.train->size() == 2);
}

TEST_CASE("idx dataset: [N] images are refused", "[data][idx]") {
  TempDir dir;
  const IdxFiles f = write_splits(dir, bytes({4}), bytes({4}));
  CHECK_THAT(test::input_error_of([&] { idx_datasets(f, Normalize{}); }),
             Contains("data.idx: " + dir.file("x.gz") + ": images of shape [4]") && Contains("[N, features]"));
}

TEST_CASE("idx dataset: float32 images are taken as stored, int32 labels give the class count", "[data][idx]") {
  TempDir dir;
  const IdxFiles f = write_splits(dir, typed<float>({2, 2}, {-1.5f, 2.0f, 300.0f, 0.25f}, kIdxFloat32),
                                  typed<int32_t>({2}, {7, 2}, kIdxInt32));
  const DatasetSplits s = idx_datasets(f, Normalize{});
  CHECK(s.train->num_classes() == 8);
  CHECK(sample_of(*s.train, 0) == std::vector<float>{-1.5f, 2.0f});
  CHECK(sample_of(*s.train, 1) == std::vector<float>{300.0f, 0.25f});
  std::vector<float> x(2);
  CHECK(s.train->read(0, x.data()) == 7);
}

TEST_CASE("idx dataset: float labels, labels of the wrong length and negative labels are refused", "[data][idx]") {
  TempDir dir;
  IdxFiles f = write_splits(dir, bytes({2, 2}), typed<float>({2}, {0.0f, 1.0f}, kIdxFloat32));
  CHECK_THAT(test::input_error_of([&] { idx_datasets(f, Normalize{}); }),
             Contains(dir.file("y") + ": holds float32 values") && Contains("integers"));
  f = write_splits(dir, bytes({2, 2}), bytes({3}));
  CHECK_THAT(test::input_error_of([&] { idx_datasets(f, Normalize{}); }), Contains("labels of shape [3]"));
  f = write_splits(dir, bytes({2, 2}), typed<int32_t>({2}, {0, -1}, kIdxInt32));
  CHECK_THAT(test::input_error_of([&] { idx_datasets(f, Normalize{}); }), Contains("label -1 of sample 1 is negative"));
}

TEST_CASE("idx dataset: every IDX data type round trips through write_idx and read_idx_any", "[data][idx]") {
  TempDir dir;
  const std::vector<IdxArray> arrays = {
      bytes({2, 3}),
      typed<int8_t>({3}, {-128, 0, 127}, kIdxByte),
      typed<int16_t>({2}, {-30000, 1234}, kIdxInt16),
      typed<int32_t>({1, 2}, {-70000, 1 << 30}, kIdxInt32),
      typed<float>({2}, {3.5f, -0.125f}, kIdxFloat32),
      typed<double>({2}, {1e300, -2.5}, kIdxFloat64),
  };
  for (const IdxArray& a : arrays) {
    INFO(idx_type_name(a.type));
    write_idx(dir.file("a"), a, false);
    const IdxArray b = read_idx_any(dir.file("a"));
    CHECK(b.type == a.type);
    CHECK(b.dims == a.dims);
    CHECK(b.data == a.data);
  }
  // Big-endian on disk: int16 1234 = 0x04D2 is stored 04 D2.
  const std::vector<uint8_t> file = test::read_plain(dir.file("a"));
  write_idx(dir.file("s"), arrays[2], false);
  const std::vector<uint8_t> s = test::read_plain(dir.file("s"));
  CHECK(s[2] == kIdxInt16);
  CHECK(s[s.size() - 2] == 0x04);
  CHECK(s[s.size() - 1] == 0xD2);
  CHECK(idx_floats(arrays[2]) == std::vector<float>{-30000.0f, 1234.0f});
  CHECK(idx_integers(arrays[3], "a") == std::vector<int64_t>{-70000, 1 << 30});
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("s")); }), Contains("0x0b (int16) is not supported"));
}

TEST_CASE("idx dataset: the data.idx section needs its four files", "[data][idx]") {
  TempDir dir;
  write_splits(dir, bytes({4, 2, 2}), bytes({4}));
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: idx, workers: 0, idx: {{train_images: {0}, train_labels: {1}, test_images: {0}, test_labels: {1}}}}}",
      dir.file("x.gz"), dir.file("y")));
  data_schema().validate(node, "data.yaml", "data");
  const DataLoaders l = make_data_loaders(parse_data_config(node, "data.yaml"), 1);
  CHECK(l.train->dataset().sample_shape() == Shape{1, 2, 2});
  CHECK_THROWS_WITH(data_schema().validate(YAML::Load("{dataset: idx, idx: {train_images: a}}"), "d.yaml", "data"),
                    Contains("train_labels"));
}

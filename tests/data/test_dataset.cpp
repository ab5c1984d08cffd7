// Datasets: in-memory normalisation, the Fashion-MNIST loader (generated files and, when
// installed, Debian's real ones) and the synthetic dataset.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "data_test_util.h"
#include "ingot/data/fashion_mnist.h"
#include "ingot/data/idx.h"
#include "ingot/data/synthetic.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;

namespace {

/// Writes a tiny Fashion-MNIST look-alike: `n` train and `n` test images of 28x28.
void write_fake_fashion(const test::TempDir& dir, int64_t n, uint8_t max_label = 9) {
  for (const char* prefix : {"train", "t10k"}) {
    IdxArray images{{n, 28, 28}, std::vector<uint8_t>(static_cast<size_t>(n * 784))};
    for (size_t i = 0; i < images.data.size(); ++i) images.data[i] = static_cast<uint8_t>(i % 256);
    IdxArray labels{{n}, std::vector<uint8_t>(static_cast<size_t>(n))};
    for (int64_t i = 0; i < n; ++i) labels.data[static_cast<size_t>(i)] = static_cast<uint8_t>(i % (max_label + 1));
    write_idx(dir.file(std::string(prefix) + "-images-idx3-ubyte.gz"), images);
    write_idx(dir.file(std::string(prefix) + "-labels-idx1-ubyte.gz"), labels);
  }
}

}  // namespace

TEST_CASE("dataset: bytes are normalised once as (x/255 - mean)/std in float", "[data][dataset]") {
  const std::vector<uint8_t> images = {0, 255, 51, 102, 0, 255, 7, 8};  // [2, 2, 1, 2]: C = 2
  const std::vector<uint8_t> labels = {1, 0};
  const Normalize norm{{0.5f, 0.25f}, {0.5f, 2.0f}};
  const auto ds = InMemoryDataset::from_bytes(images, {2, 2, 1, 2}, labels, {2}, 2, norm, "mem");
  CHECK(ds.size() == 2);
  CHECK(ds.sample_shape() == Shape{2, 1, 2});
  CHECK(ds.num_classes() == 2);
  std::vector<float> out(4);
  CHECK(ds.read(1, out.data()) == 0);
  CHECK(out[0] == (0.0f / 255.0f - 0.5f) / 0.5f);
  CHECK(out[1] == (255.0f / 255.0f - 0.5f) / 0.5f);
  CHECK(out[2] == (7.0f / 255.0f - 0.25f) / 2.0f);
  CHECK(out[3] == (8.0f / 255.0f - 0.25f) / 2.0f);
  CHECK(ds.pad_value(0) == -1.0f);
  CHECK(ds.pad_value(1) == -0.125f);
  CHECK_THAT(test::input_error_of([&] {
               InMemoryDataset::from_bytes(images, {2, 2, 1, 2}, {1, 5}, {2}, 2, norm, "mem");
             }),
             Contains("label 5 of sample 1 is outside [0, 2)"));
  CHECK_THAT(test::input_error_of([&] {
               InMemoryDataset::from_bytes(images, {2, 2, 1, 2}, {1, 0, 1}, {3}, 2, norm, "mem");
             }),
             Contains("2 images but 3 labels"));
}

TEST_CASE("fashion_mnist: generated files load, with the default normalisation", "[data][dataset]") {
  test::TempDir dir;
  write_fake_fashion(dir, 12);
  const auto train = fashion_mnist(dir.path().string(), "train");
  CHECK(train->size() == 12);
  CHECK(train->sample_shape() == Shape{1, 28, 28});
  CHECK(train->num_classes() == 10);
  std::vector<float> img(784);
  CHECK(train->read(11, img.data()) == 1);
  const uint8_t first = static_cast<uint8_t>((11 * 784) % 256);
  CHECK(img[0] == (static_cast<float>(first) / 255.0f - kFashionMnistMean) / kFashionMnistStd);
  CHECK(fashion_mnist(dir.path().string(), "test")->size() == 12);
  CHECK_THROWS_AS(fashion_mnist(dir.path().string(), "validation"), ConfigError);
}

TEST_CASE("fashion_mnist: missing or bad files name the path and what to do", "[data][dataset]") {
  test::TempDir dir;
  const std::string missing = (dir.path() / "absent").string();
  CHECK_THAT(test::input_error_of([&] { fashion_mnist(missing, "train"); }),
             Contains(missing + "/train-images-idx3-ubyte.gz") &&
                 Contains("install Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist)"));
  write_fake_fashion(dir, 12, 12);  // labels up to 11: corrupt for 10 classes
  CHECK_THAT(test::input_error_of([&] { fashion_mnist(dir.path().string(), "train"); }),
             Contains("train-labels-idx1-ubyte.gz") && Contains("label 10 of sample 10 is outside [0, 10)"));
  std::filesystem::remove(dir.file("train-images-idx3-ubyte.gz"));
  write_idx(dir.file("train-images-idx3-ubyte.gz"), IdxArray{{4, 14, 56}, std::vector<uint8_t>(4 * 14 * 56)});
  CHECK_THAT(test::input_error_of([&] { fashion_mnist(dir.path().string(), "train"); }),
             Contains("must be [N, 28, 28], got 4x14x56"));
}

TEST_CASE("fashion_mnist: Debian's files: counts, labels, normalised statistics", "[data][dataset][real]") {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) {
    test::skip("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)");
    return;
  }
  const auto train = fashion_mnist(kFashionMnistDir, "train");
  const auto test_set = fashion_mnist(kFashionMnistDir, "test");
  CHECK(train->size() == 60000);
  CHECK(test_set->size() == 10000);
  CHECK(train->sample_shape() == Shape{1, 28, 28});
  for (const auto& ds : {train, test_set}) {
    std::vector<int64_t> per_class(10, 0);
    for (int64_t y : ds->labels().to_vector<int64_t>()) {
      REQUIRE((y >= 0 && y < 10));
      ++per_class[static_cast<size_t>(y)];
    }
    for (int64_t count : per_class) CHECK(count == ds->size() / 10);  // Fashion-MNIST is balanced
  }
  double sum = 0.0, sq = 0.0;
  const float* p = train->images().data<float>();
  const int64_t n = train->images().numel();
  for (int64_t i = 0; i < n; ++i) {
    sum += p[i];
    sq += static_cast<double>(p[i]) * p[i];
  }
  const double mean = sum / static_cast<double>(n);
  const double std = std::sqrt(sq / static_cast<double>(n) - mean * mean);
  CHECK(std::abs(mean) < 1e-3);  // the defaults are the train set's own statistics
  CHECK(std::abs(std - 1.0) < 1e-3);
}

TEST_CASE("synthetic: reproducible from the seed, labels in range, classes learnable", "[data][dataset]") {
  const SyntheticSpec spec{64, 3, 5, 7, 4};
  const auto a = synthetic_dataset(spec, 42);
  const auto b = synthetic_dataset(spec, 42);
  const auto other = synthetic_dataset(spec, 43);
  const auto test_split = synthetic_dataset(spec, 42, 1);
  CHECK(a->sample_shape() == Shape{3, 5, 7});
  CHECK(a->num_classes() == 4);
  CHECK(a->images().to_vector<float>() == b->images().to_vector<float>());
  CHECK(a->labels().to_vector<int64_t>() == b->labels().to_vector<int64_t>());
  CHECK(a->images().to_vector<float>() != other->images().to_vector<float>());
  CHECK(a->images().to_vector<float>() != test_split->images().to_vector<float>());
  std::vector<int64_t> seen(4, 0);
  for (int64_t y : a->labels().to_vector<int64_t>()) {
    REQUIRE((y >= 0 && y < 4));
    ++seen[static_cast<size_t>(y)];
  }
  for (int64_t count : seen) CHECK(count > 0);
  // Two samples of one class differ by noise in [-1, 1) only; samples of different classes
  // usually differ by more somewhere. Check the first pair of same-class samples.
  const auto labels = a->labels().to_vector<int64_t>();
  const auto pixels = a->images().to_vector<float>();
  for (size_t j = 1; j < labels.size(); ++j) {
    if (labels[j] != labels[0]) continue;
    for (size_t k = 0; k < 105; ++k) CHECK(std::abs(pixels[k] - pixels[j * 105 + k]) < 1.0f);
    break;
  }
  CHECK_THROWS_AS(synthetic_dataset(SyntheticSpec{0, 1, 1, 1, 1}, 1), ConfigError);
}

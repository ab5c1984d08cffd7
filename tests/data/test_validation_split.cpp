// data.validation: the held-out part of the training set — sizes, disjoint parts that cover the
// set, the same split for the same seed (every rank, every resume), a subset reads its base's
// samples, and bad fractions are refused with one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <set>

#include "ingot/base/error.h"
#include "ingot/data/subset_dataset.h"
#include "ingot/data/synthetic.h"

namespace ingot::data {
namespace {

std::shared_ptr<const Dataset> numbered(int64_t n) {
  // Sample i holds the value i: what a subset reads says which base sample it is.
  std::vector<float> values(static_cast<size_t>(n));
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = static_cast<float>(i);
    labels[static_cast<size_t>(i)] = i % 3;
  }
  return std::make_shared<InMemoryDataset>(Tensor::from_vector(values, Shape{n, 1, 1, 1}),
                                           Tensor::from_vector(labels, Shape{n}), 3);
}

std::vector<int64_t> read_all(const Dataset& d) {
  std::vector<int64_t> out;
  float v = 0;
  for (int64_t i = 0; i < d.size(); ++i) {
    const int64_t label = d.read(i, &v);
    CHECK(label == static_cast<int64_t>(v) % 3);
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

}  // namespace

TEST_CASE("validation split: the fraction is held out, the parts are disjoint and cover the training set",
          "[data][validation]") {
  const auto base = numbered(1000);
  const TrainValidationSplit s = split_validation(base, 0.1, 7);
  CHECK(s.validation->size() == 100);
  CHECK(s.train->size() == 900);
  const std::vector<int64_t> t = read_all(*s.train), v = read_all(*s.validation);
  CHECK(std::is_sorted(t.begin(), t.end()));
  CHECK(std::is_sorted(v.begin(), v.end()));
  std::set<int64_t> all(t.begin(), t.end());
  for (int64_t i : v) CHECK(all.insert(i).second);
  CHECK(all.size() == 1000);
  // Drawn across the whole set, not its head or tail.
  CHECK(v.front() < 100);
  CHECK(v.back() >= 900);
  CHECK(s.train->num_classes() == 3);
  CHECK(s.validation->sample_shape() == base->sample_shape());
}

TEST_CASE("validation split: the same seed gives the same split, another seed another", "[data][validation]") {
  const auto base = numbered(200);
  const auto a = read_all(*split_validation(base, 0.25, 1).validation);
  const auto b = read_all(*split_validation(base, 0.25, 1).validation);
  const auto c = read_all(*split_validation(base, 0.25, 2).validation);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("validation split: a fraction outside (0, 1) or one that leaves a part empty is refused",
          "[data][validation]") {
  const auto base = numbered(10);
  CHECK_THROWS_AS(split_validation(base, 0.0, 0), ConfigError);
  CHECK_THROWS_AS(split_validation(base, 1.0, 0), ConfigError);
  CHECK_THROWS_WITH(split_validation(base, 0.01, 0), Catch::Contains("both need at least one sample"));
  CHECK_THROWS_WITH(split_validation(base, 0.99, 0), Catch::Contains("leaves 10 for validation and 0 for training"));
  CHECK(split_validation(base, 0.05, 0).validation->size() == 1);  // (half a sample rounds up)
}

}  // namespace ingot::data

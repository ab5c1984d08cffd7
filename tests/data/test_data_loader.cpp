// DataLoader: determinism across seeds and worker counts, every sample once per epoch,
// augmentation per epoch, resume from a batch, errors from workers, clean shutdown.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "data_test_util.h"
#include "ingot/data/synthetic.h"

using namespace ingot;
using namespace ingot::data;

namespace {

/// N samples of 1x4x4 whose label is the sample index and every pixel is index + 1 (pad 0).
std::shared_ptr<InMemoryDataset> id_dataset(int64_t n) {
  Tensor images = Tensor::empty(Shape{n, 1, 4, 4}, DType::F32);
  Tensor labels = Tensor::empty(Shape{n}, DType::I64);
  for (int64_t i = 0; i < n; ++i) {
    labels.data<int64_t>()[i] = i;
    for (int k = 0; k < 16; ++k) images.data<float>()[i * 16 + k] = static_cast<float>(i + 1);
  }
  return std::make_shared<InMemoryDataset>(images, labels, n);
}

LoaderOptions options(int workers, bool shuffle = true, Augment augment = Augment{2, true}) {
  LoaderOptions o;
  o.batch_size = 8;
  o.shuffle = shuffle;
  o.num_workers = workers;
  o.prefetch_batches = 2;
  o.augment = augment;
  o.seed = 1234;
  return o;
}

/// Fails on sample `bad`.
class FailingDataset final : public Dataset {
 public:
  explicit FailingDataset(int64_t bad) : bad_(bad) {}
  int64_t size() const override { return 40; }
  Shape sample_shape() const override { return Shape{1, 2, 2}; }
  int64_t num_classes() const override { return 2; }
  int64_t read(int64_t index, float* image) const override {
    INGOT_CHECK_AS(index != bad_, InputError, "sample {} is broken", index);
    std::fill(image, image + 4, 0.0f);
    return 0;
  }
  float pad_value(int64_t) const override { return 0.0f; }

 private:
  int64_t bad_;
};

}  // namespace

TEST_CASE("loader: same seed gives the same batches, 0, 1 and 2 workers agree", "[data][loader]") {
  const auto ds = synthetic_dataset(SyntheticSpec{100, 3, 8, 8, 10}, 5);
  DataLoader reference(ds, options(0));
  const auto expected = test::take_epoch(reference, 2);
  CHECK(expected.inputs.size() == 13u);
  CHECK(expected.indices == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  CHECK(expected.targets.back().size() == 4u);
  for (int workers : {0, 1, 2, 3}) {
    DataLoader loader(ds, options(workers));
    const auto got = test::take_epoch(loader, 2);
    INFO("workers " << workers);
    CHECK(got.inputs == expected.inputs);
    CHECK(got.targets == expected.targets);
  }
  LoaderOptions other_seed = options(2);
  other_seed.seed = 99;
  DataLoader different(ds, other_seed);
  CHECK(test::take_epoch(different, 2).targets != expected.targets);
}

TEST_CASE("loader: every sample exactly once per epoch, with and without drop_last", "[data][loader]") {
  const int64_t n = 61;
  for (bool drop_last : {false, true}) {
    for (int workers : {0, 2}) {
      LoaderOptions o = options(workers, true, Augment{});
      o.drop_last = drop_last;
      DataLoader loader(id_dataset(n), o);
      const auto epoch = test::take_epoch(loader, 0);
      std::vector<int64_t> seen;
      for (size_t b = 0; b < epoch.targets.size(); ++b) {
        for (size_t i = 0; i < epoch.targets[b].size(); ++i) {
          const int64_t id = epoch.targets[b][i];
          CHECK(epoch.inputs[b][i * 16] == static_cast<float>(id + 1));  // image travels with its label
          seen.push_back(id);
        }
      }
      CHECK(seen.size() == (drop_last ? 56u : 61u));
      std::sort(seen.begin(), seen.end());
      CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
      CHECK(loader.batches_consumed() == loader.num_batches());
    }
  }
}

TEST_CASE("loader: augmentation differs across epochs and samples, reproducibly", "[data][loader]") {
  const auto ds = id_dataset(64);
  // Per sample id, its augmented image in an epoch.
  const auto by_id = [&](int64_t epoch, int workers) {
    DataLoader loader(ds, options(workers));
    const auto e = test::take_epoch(loader, epoch);
    std::vector<std::vector<float>> out(64);
    for (size_t b = 0; b < e.targets.size(); ++b)
      for (size_t i = 0; i < e.targets[b].size(); ++i)
        out[static_cast<size_t>(e.targets[b][i])].assign(e.inputs[b].begin() + 16 * i,
                                                         e.inputs[b].begin() + 16 * (i + 1));
    return out;
  };
  const auto e0 = by_id(0, 0);
  CHECK(by_id(0, 2) == e0);
  const auto e1 = by_id(1, 2);
  int changed = 0;
  std::set<std::vector<float>> masks;  // where the padding landed: varies across samples
  for (size_t id = 0; id < 64; ++id) {
    changed += e0[id] != e1[id] ? 1 : 0;
    std::vector<float> mask(16);
    for (int k = 0; k < 16; ++k) mask[k] = e0[id][k] == 0.0f ? 0.0f : 1.0f;
    masks.insert(mask);
  }
  CHECK(changed > 48);
  CHECK(masks.size() > 10);
}

TEST_CASE("loader: resuming at batch k gives the uninterrupted epoch's remaining batches", "[data][loader]") {
  const auto ds = synthetic_dataset(SyntheticSpec{90, 1, 6, 6, 3}, 11);
  DataLoader full(ds, options(2));
  const auto whole = test::take_epoch(full, 4);
  for (int64_t k : {0, 1, 5, 11, 12}) {
    DataLoader resumed(ds, options(k % 2 == 0 ? 2 : 0));
    const auto rest = test::take_epoch(resumed, 4, k);
    INFO("start batch " << k);
    REQUIRE(rest.inputs.size() == whole.inputs.size() - static_cast<size_t>(k));
    for (size_t b = 0; b < rest.inputs.size(); ++b) {
      CHECK(rest.indices[b] == k + static_cast<int64_t>(b));
      CHECK(rest.inputs[b] == whole.inputs[static_cast<size_t>(k) + b]);
      CHECK(rest.targets[b] == whole.targets[static_cast<size_t>(k) + b]);
    }
  }
  DataLoader loader(ds, options(2));
  CHECK_THROWS(loader.begin_epoch(0, 13));
}

TEST_CASE("loader: batches_consumed counts handed-out batches, not prefetched ones", "[data][loader]") {
  DataLoader loader(id_dataset(200), options(2));
  CHECK_THROWS(loader.next());  // no epoch begun
  loader.begin_epoch(0, 3);
  CHECK(loader.batches_consumed() == 3);
  for (int i = 0; i < 4; ++i) REQUIRE(loader.next().has_value());
  CHECK(loader.batches_consumed() == 7);
  CHECK(loader.epoch() == 0);
  loader.stop();  // abandons the epoch
  CHECK_FALSE(loader.next().has_value());
  CHECK(loader.batches_consumed() == 7);
}

TEST_CASE("loader: stopping mid-epoch never hangs, restarting epochs is fine", "[data][loader]") {
  const auto ds = id_dataset(400);
  for (int round = 0; round < 20; ++round) {
    DataLoader loader(ds, options(3));
    loader.begin_epoch(0);
    if (round % 2 == 0) REQUIRE(loader.next().has_value());
    loader.begin_epoch(1);  // abandons epoch 0 mid-way
    const auto batch = loader.next();
    REQUIRE(batch.has_value());
    CHECK(batch->epoch == 1);
    CHECK(batch->index == 0);
  }  // destructors join with workers blocked on a full queue
}

TEST_CASE("loader: a worker's error reaches the caller at its batch", "[data][loader]") {
  for (int workers : {0, 2}) {
    LoaderOptions o = options(workers, false, Augment{});
    DataLoader loader(std::make_shared<FailingDataset>(20), o);
    loader.begin_epoch(0);
    REQUIRE(loader.next().has_value());
    REQUIRE(loader.next().has_value());
    CHECK_THROWS_WITH(loader.next(), Catch::Matchers::Contains("sample 20 is broken"));
  }
}

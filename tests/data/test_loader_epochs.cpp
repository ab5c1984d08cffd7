// DataLoader across epochs: the samples of every batch are the sampler's order for that epoch
// (a new order each epoch when shuffling, the same one otherwise), for any worker count; a resume
// at batch k of epoch e yields the rest of epoch e's order; an abandoned epoch leaves nothing
// behind for the next one.
#include <catch2/catch.hpp>

#include <vector>

#include "data_test_util.h"
#include "ingot/data/synthetic.h"

using namespace ingot;
using namespace ingot::data;

namespace {

constexpr int64_t kSamples = 37;  // batches of 8: four full ones and a last one of 5

/// kSamples samples of 1x2x2 whose label is the sample index and every pixel is index + 1.
std::shared_ptr<InMemoryDataset> indexed_dataset() {
  Tensor images = Tensor::empty(Shape{kSamples, 1, 2, 2}, DType::F32);
  Tensor labels = Tensor::empty(Shape{kSamples}, DType::I64);
  for (int64_t i = 0; i < kSamples; ++i) {
    labels.data<int64_t>()[i] = i;
    for (int k = 0; k < 4; ++k) images.data<float>()[i * 4 + k] = static_cast<float>(i + 1);
  }
  return std::make_shared<InMemoryDataset>(images, labels, kSamples);
}

LoaderOptions loader_options(int workers, bool shuffle) {
  LoaderOptions o;
  o.batch_size = 8;
  o.shuffle = shuffle;
  o.num_workers = workers;
  o.prefetch_batches = 2;
  o.seed = 77;
  return o;
}

/// The sample indices of each batch of `epoch` (read back from the labels, after checking that
/// every image carries its own label's index).
std::vector<std::vector<int64_t>> samples_per_batch(const test::EpochData& epoch) {
  for (size_t b = 0; b < epoch.targets.size(); ++b) {
    REQUIRE(epoch.inputs[b].size() == 4 * epoch.targets[b].size());
    for (size_t i = 0; i < epoch.targets[b].size(); ++i)
      CHECK(epoch.inputs[b][4 * i] == static_cast<float>(epoch.targets[b][i] + 1));
  }
  return epoch.targets;
}

/// Batches `from`.. of `epoch` as the sampler cuts them.
std::vector<std::vector<int64_t>> sampler_batches(const Sampler& sampler, int64_t epoch, int64_t from = 0) {
  const std::vector<int64_t> order = sampler.order(epoch);
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = from; b < sampler.num_batches(); ++b) {
    const auto batch = sampler.batch(order, b);
    out.emplace_back(batch.begin(), batch.end());
  }
  return out;
}

}  // namespace

TEST_CASE("loader epochs: each epoch's batches are the sampler's order for that epoch", "[data][loader]") {
  const int workers = GENERATE(0, 2);
  const bool shuffle = GENERATE(true, false);
  INFO("workers " << workers << ", shuffle " << shuffle);
  const LoaderOptions o = loader_options(workers, shuffle);
  DataLoader loader(indexed_dataset(), o);
  // the loader's sampler is the one its options describe
  const Sampler sampler(kSamples, o.batch_size, o.shuffle, o.drop_last, o.seed);
  REQUIRE(loader.num_batches() == 5);
  std::vector<std::vector<std::vector<int64_t>>> epochs;
  for (int64_t e = 0; e < 3; ++e) {
    INFO("epoch " << e);
    REQUIRE(loader.sampler().order(e) == sampler.order(e));
    const test::EpochData got = test::take_epoch(loader, e);  // one loader, epoch after epoch
    CHECK(got.indices == std::vector<int64_t>{0, 1, 2, 3, 4});
    epochs.push_back(samples_per_batch(got));
    CHECK(epochs.back() == sampler_batches(sampler, e));
  }
  if (shuffle) {
    CHECK(epochs[0] != epochs[1]);
    CHECK(epochs[1] != epochs[2]);
  } else {
    CHECK(epochs[0] == sampler_batches(Sampler(kSamples, 8, false, false, 0), 0));  // 0, 1, ..., 36
    CHECK(epochs[1] == epochs[0]);
    CHECK(epochs[2] == epochs[0]);
  }
}

TEST_CASE("loader epochs: begin_epoch(e, k) yields the rest of epoch e's order", "[data][loader]") {
  const int workers = GENERATE(0, 2);
  const LoaderOptions o = loader_options(workers, true);
  const Sampler sampler(kSamples, o.batch_size, o.shuffle, o.drop_last, o.seed);
  for (int64_t e : {1, 2}) {
    for (int64_t k : {1, 3, 4, 5}) {
      INFO("workers " << workers << ", epoch " << e << ", start batch " << k);
      DataLoader loader(indexed_dataset(), o);
      const test::EpochData got = test::take_epoch(loader, e, k);
      std::vector<int64_t> indices;
      for (int64_t b = k; b < 5; ++b) indices.push_back(b);
      CHECK(got.indices == indices);
      CHECK(samples_per_batch(got) == sampler_batches(sampler, e, k));
      CHECK(loader.batches_consumed() == 5);
    }
  }
}

TEST_CASE("loader epochs: an epoch abandoned mid-way leaves nothing behind for the next", "[data][loader]") {
  const int workers = GENERATE(0, 2);
  INFO("workers " << workers);
  const LoaderOptions o = loader_options(workers, true);
  const Sampler sampler(kSamples, o.batch_size, o.shuffle, o.drop_last, o.seed);
  DataLoader loader(indexed_dataset(), o);
  loader.begin_epoch(0);
  REQUIRE(loader.next().has_value());
  REQUIRE(loader.next().has_value());  // the workers have prefetched further batches of epoch 0
  const test::EpochData next = test::take_epoch(loader, 1);
  CHECK(next.indices == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(samples_per_batch(next) == sampler_batches(sampler, 1));
  // and again from a resumed position
  loader.begin_epoch(1, 1);
  REQUIRE(loader.next().has_value());
  CHECK(samples_per_batch(test::take_epoch(loader, 2, 2)) == sampler_batches(sampler, 2, 2));
}

// Sampler: sequential and (seed, epoch)-keyed shuffled orders, batch counts and slices, and the
// shards of distributed training.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "ingot/base/error.h"
#include "ingot/data/sampler.h"

using namespace ingot;
using namespace ingot::data;

TEST_CASE("sampler: sequential order and batch counts", "[data][sampler]") {
  const Sampler s(10, 4, false, false, 0);
  CHECK(s.num_batches() == 3);
  CHECK(Sampler(10, 4, false, true, 0).num_batches() == 2);
  CHECK(Sampler(8, 4, false, true, 0).num_batches() == 2);
  CHECK(Sampler(3, 4, false, true, 0).num_batches() == 0);
  CHECK(Sampler(0, 4, true, false, 0).num_batches() == 0);
  const auto order = s.order(5);
  CHECK(order == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const auto last = s.batch(order, 2);
  CHECK(std::vector<int64_t>(last.begin(), last.end()) == std::vector<int64_t>{8, 9});
  CHECK_THROWS(s.batch(order, 3));
  CHECK_THROWS_AS(Sampler(10, 0, false, false, 0), ConfigError);
}

TEST_CASE("sampler: shuffled order is a permutation keyed by (seed, epoch)", "[data][sampler]") {
  const int64_t n = 1000;
  const Sampler s(n, 32, true, false, 7);
  const auto e0 = s.order(0);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), int64_t{0});
  CHECK(sorted == all);
  CHECK(e0 != all);
  CHECK(s.order(0) == e0);                               // reproducible
  CHECK(Sampler(n, 8, true, true, 7).order(0) == e0);    // independent of batching
  CHECK(s.order(1) != e0);                               // new order each epoch
  CHECK(Sampler(n, 32, true, false, 8).order(0) != e0);  // and each seed
  // Roughly uniform: the first position holds each decile about equally often over epochs.
  std::vector<int> decile(10, 0);
  for (int64_t epoch = 0; epoch < 500; ++epoch) ++decile[static_cast<size_t>(s.order(epoch)[0] / 100)];
  for (int count : decile) CHECK((count > 20 && count < 85));
}

TEST_CASE("sampler: batches cover each sample once, drop_last drops only the tail", "[data][sampler]") {
  for (bool drop_last : {false, true}) {
    const Sampler s(103, 10, true, drop_last, 3);
    const auto order = s.order(2);
    std::vector<int64_t> seen;
    for (int64_t b = 0; b < s.num_batches(); ++b) {
      const auto batch = s.batch(order, b);
      CHECK(static_cast<int64_t>(batch.size()) == (b == 10 ? 3 : 10));
      seen.insert(seen.end(), batch.begin(), batch.end());
    }
    CHECK(seen.size() == (drop_last ? 100u : 103u));
    std::sort(seen.begin(), seen.end());
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  }
}

TEST_CASE("sampler: shards give every rank as many samples, and batch b of all ranks is one process's batch b",
          "[data][sampler]") {
  for (const bool shuffle : {false, true})
    for (const int world : {2, 3}) {
      const int64_t size = 100, batch = 4;  // 100 is not a multiple of 3: rank shards are padded
      const Sampler whole(size, batch * world, shuffle, false, 9);
      std::vector<Sampler> ranks;
      for (int r = 0; r < world; ++r) ranks.emplace_back(size, batch, shuffle, false, 9, r, world);
      const int64_t per_rank = (size + world - 1) / world;
      std::vector<int> seen(size, 0);
      for (int r = 0; r < world; ++r) {
        CHECK(ranks[r].size() == per_rank);
        CHECK(ranks[r].num_batches() == ranks[0].num_batches());
        for (int64_t i : ranks[r].order(2)) ++seen[static_cast<size_t>(i)];
      }
      // Every sample at least once; only the padding (the first few of the order) twice.
      CHECK(std::count(seen.begin(), seen.end(), 0) == 0);
      CHECK(std::accumulate(seen.begin(), seen.end(), 0) == per_rank * world);
      // The ranks' batch b, side by side, is the single process's batch b at world x the batch size.
      const auto all = whole.order(2);
      for (int64_t b = 0; b + 1 < ranks[0].num_batches(); ++b) {
        std::vector<int64_t> together;
        for (int r = 0; r < world; ++r) {
          const auto order = ranks[r].order(2);
          for (int64_t i : ranks[r].batch(order, b)) together.push_back(i);
        }
        std::vector<int64_t> expected(whole.batch(all, b).begin(), whole.batch(all, b).end());
        std::sort(together.begin(), together.end());
        std::sort(expected.begin(), expected.end());
        CHECK(together == expected);
      }
    }
  REQUIRE_THROWS_WITH(Sampler(2, 1, false, false, 0, 0, 3), Catch::Contains("cannot be shared by 3 ranks"));
  REQUIRE_THROWS_WITH(Sampler(10, 1, false, false, 0, 3, 3), Catch::Contains("rank 3 is outside a world of 3"));
}

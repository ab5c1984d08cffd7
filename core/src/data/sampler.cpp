// Sampler: sequential or Philox-keyed shuffled order, and the batch slices of an epoch.
#include "ingot/data/sampler.h"

#include <algorithm>
#include <numeric>

#include "data_rng.h"
#include "ingot/base/error.h"

namespace ingot::data {

Sampler::Sampler(int64_t size, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed)
    : size_(size), batch_size_(batch_size), shuffle_(shuffle), drop_last_(drop_last), seed_(seed) {
  INGOT_CHECK_AS(size_ >= 0 && size_ < (int64_t{1} << 32), ConfigError, "Sampler: dataset size {} outside [0, 2^32)",
                 size_);
  INGOT_CHECK_AS(batch_size_ >= 1, ConfigError, "Sampler: batch_size must be >= 1, got {}", batch_size_);
}

Sampler::Sampler(int64_t size, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed, int rank,
                 int world_size)
    : Sampler(size, batch_size, shuffle, drop_last, seed) {
  INGOT_CHECK_AS(world_size >= 1 && rank >= 0 && rank < world_size, ConfigError,
                 "Sampler: rank {} is outside a world of {}", rank, world_size);
  INGOT_CHECK_AS(size == 0 || size >= world_size, ConfigError,
                 "Sampler: {} samples cannot be shared by {} ranks (fewer samples than ranks)", size, world_size);
  rank_ = rank;
  world_size_ = world_size;
}

int64_t Sampler::num_batches() const {
  const int64_t n = size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<int64_t> Sampler::order(int64_t epoch) const {
  INGOT_CHECK(epoch >= 0, "Sampler: epoch must be >= 0, got {}", epoch);
  std::vector<int64_t> out(static_cast<size_t>(size_));
  std::iota(out.begin(), out.end(), int64_t{0});
  if (!shuffle_) return shard(std::move(out));
  // Sort by a 64-bit random key per index (ties, which are astronomically rare, by index): a
  // uniform permutation that needs no sequential RNG state.
  std::vector<std::pair<uint64_t, int64_t>> keyed(out.size());
  for (int64_t i = 0; i < size_; ++i) {
    const auto block = data_random(seed_, DataStream::Shuffle, static_cast<uint64_t>(i), static_cast<uint64_t>(epoch));
    keyed[static_cast<size_t>(i)] = {(static_cast<uint64_t>(block.v[0]) << 32) | block.v[1], i};
  }
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < keyed.size(); ++i) out[i] = keyed[i].second;
  return shard(std::move(out));
}

std::vector<int64_t> Sampler::shard(std::vector<int64_t> order) const {
  if (world_size_ == 1) return order;
  const int64_t per_rank = size();
  std::vector<int64_t> mine(static_cast<size_t>(per_rank));
  for (int64_t i = 0; i < per_rank; ++i) {
    const int64_t at = i * world_size_ + rank_;  // positions past the end wrap to the front (padding)
    mine[static_cast<size_t>(i)] = order[static_cast<size_t>(at % size_)];
  }
  return mine;
}

std::span<const int64_t> Sampler::batch(const std::vector<int64_t>& order, int64_t batch) const {
  INGOT_CHECK(batch >= 0 && batch < num_batches(), "Sampler: batch {} outside [0, {})", batch, num_batches());
  const int64_t begin = batch * batch_size_;
  const int64_t end = std::min(begin + batch_size_, static_cast<int64_t>(order.size()));
  return std::span<const int64_t>(order.data() + begin, static_cast<size_t>(end - begin));
}

}  // namespace ingot::data

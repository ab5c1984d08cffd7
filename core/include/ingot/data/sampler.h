// Sampler: the order in which an epoch visits a dataset, cut into batches. Shuffling sorts the
// indices by a Philox key of (seed, epoch, index), so the order is a pure function of
// (seed, epoch) whatever the number of workers, and a resumed run sees the same order. A shard
// (rank r of W ranks, torch's DistributedSampler) takes every W-th index of that order from r,
// after padding it with its own first indices to a multiple of W, so every rank gets the same
// number of samples and batches, and batch b of all ranks together is batch b of one process
// with W times the batch size.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ingot::data {

class Sampler {
 public:
  /// `size` samples in batches of `batch_size`; `drop_last` drops a final partial batch.
  Sampler(int64_t size, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed);
  /// The same, restricted to shard `rank` of `world_size` ranks.
  Sampler(int64_t size, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed, int rank, int world_size);

  /// Samples one epoch visits on this shard (the dataset's size with one shard).
  int64_t size() const { return (size_ + world_size_ - 1) / world_size_; }
  int64_t dataset_size() const { return size_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int64_t batch_size() const { return batch_size_; }
  bool shuffle() const { return shuffle_; }
  bool drop_last() const { return drop_last_; }
  /// Batches per epoch: size / batch_size, rounded up unless drop_last.
  int64_t num_batches() const;
  /// Every index in [0, size) once: sequential, or shuffled by (seed, epoch); with a shard, this
  /// shard's part of that order.
  std::vector<int64_t> order(int64_t epoch) const;
  /// The indices of batch `batch` within an epoch's `order`.
  std::span<const int64_t> batch(const std::vector<int64_t>& order, int64_t batch) const;

 private:
  std::vector<int64_t> shard(std::vector<int64_t> order) const;

  int64_t size_;
  int64_t batch_size_;
  bool shuffle_;
  bool drop_last_;
  uint64_t seed_;
  int rank_ = 0;
  int world_size_ = 1;
};

}  // namespace ingot::data

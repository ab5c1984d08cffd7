// Sampler: the order in which an epoch visits a dataset, cut into batches. Shuffling sorts the
// indices by a Philox key of (seed, epoch, index), so the order is a pure function of
// (seed, epoch) whatever the number of workers, and a resumed run sees the same order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ingot::data {

class Sampler {
 public:
  /// `size` samples in batches of `batch_size`; `drop_last` drops a final partial batch.
  Sampler(int64_t size, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed);

  int64_t size() const { return size_; }
  int64_t batch_size() const { return batch_size_; }
  bool shuffle() const { return shuffle_; }
  bool drop_last() const { return drop_last_; }
  /// Batches per epoch: size / batch_size, rounded up unless drop_last.
  int64_t num_batches() const;
  /// Every index in [0, size) once: sequential, or shuffled by (seed, epoch).
  std::vector<int64_t> order(int64_t epoch) const;
  /// The indices of batch `batch` within an epoch's `order`.
  std::span<const int64_t> batch(const std::vector<int64_t>& order, int64_t batch) const;

 private:
  int64_t size_;
  int64_t batch_size_;
  bool shuffle_;
  bool drop_last_;
  uint64_t seed_;
};

}  // namespace ingot::data

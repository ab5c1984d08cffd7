// Synthetic image classification data from a seed, held in memory: for benchmarks and tests
// that must not depend on a downloaded dataset. Learnable: each class has its own pattern.
#pragma once

#include <cstdint>
#include <memory>

#include "ingot/data/dataset.h"

namespace ingot::data {

struct SyntheticSpec {
  int64_t size = 1024;  ///< samples
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t classes = 10;
};

/// `spec.size` samples: image = pattern[label] + noise, with the per-class patterns (uniform in
/// [-1, 1)) keyed by `seed` alone and labels and noise (uniform in [-0.5, 0.5)) keyed by (seed,
/// stream, sample), so splits drawn with different `stream`s (0 train, 1 test) share the classes.
/// Every value is a Philox draw: the same spec and seed give the same data everywhere.
std::shared_ptr<InMemoryDataset> synthetic_dataset(const SyntheticSpec& spec, uint64_t seed, uint32_t stream = 0);

}  // namespace ingot::data

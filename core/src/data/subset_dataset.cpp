// SubsetDataset and the seeded train/validation split.
#include "ingot/data/subset_dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "ingot/base/error.h"

namespace ingot::data {

SubsetDataset::SubsetDataset(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices)
    : base_(std::move(base)), indices_(std::move(indices)) {
  for (int64_t i : indices_)
    INGOT_CHECK_AS(i >= 0 && i < base_->size(), InputError, "subset: sample {} is outside the dataset's {}", i,
                   base_->size());
}

int64_t SubsetDataset::read(int64_t index, float* image) const {
  INGOT_CHECK_AS(index >= 0 && index < size(), InputError, "subset: sample {} of {}", index, size());
  return base_->read(indices_[static_cast<size_t>(index)], image);
}

void SubsetDataset::read_ids(int64_t index, int64_t* input, int64_t* target) const {
  INGOT_CHECK_AS(index >= 0 && index < size(), InputError, "subset: sample {} of {}", index, size());
  base_->read_ids(indices_[static_cast<size_t>(index)], input, target);
}

TrainValidationSplit split_validation(const std::shared_ptr<const Dataset>& train, double fraction, uint64_t seed) {
  INGOT_CHECK_AS(fraction > 0.0 && fraction < 1.0, ConfigError,
                 "data.validation.fraction must lie between 0 and 1 (exclusive), got {}", fraction);
  const int64_t n = train->size();
  const int64_t held = std::llround(fraction * static_cast<double>(n));
  INGOT_CHECK_AS(held >= 1 && held < n, ConfigError,
                 "data.validation.fraction {} of {} training samples leaves {} for validation and {} for training: "
                 "both need at least one sample",
                 fraction, n, held, n - held);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // A generator of its own (not the run's), so the split does not move when anything else draws.
  std::mt19937_64 gen(seed ^ 0x5EED5A11D5EEDull);
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates with a fixed draw (std::shuffle varies by library)
    const auto j = static_cast<int64_t>(gen() % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  std::vector<int64_t> val(order.begin(), order.begin() + held), rest(order.begin() + held, order.end());
  std::sort(val.begin(), val.end());
  std::sort(rest.begin(), rest.end());
  return {std::make_shared<SubsetDataset>(train, std::move(rest)), std::make_shared<SubsetDataset>(train, std::move(val))};
}

}  // namespace ingot::data

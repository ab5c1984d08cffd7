// A view of some samples of another dataset (torch.utils.data.Subset), and the seeded split of a
// training set into train and validation parts (`data.validation: {fraction}`).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ingot/data/dataset.h"

namespace ingot::data {

/// Samples `indices` of `base`, in that order. Read-only, thread-safe like its base.
class SubsetDataset final : public Dataset {
 public:
  SubsetDataset(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices);

  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Shape sample_shape() const override { return base_->sample_shape(); }
  int64_t num_classes() const override { return base_->num_classes(); }
  int64_t read(int64_t index, float* image) const override;
  float pad_value(int64_t channel) const override { return base_->pad_value(channel); }
  DType input_dtype() const override { return base_->input_dtype(); }
  Shape target_shape() const override { return base_->target_shape(); }
  void read_ids(int64_t index, int64_t* input, int64_t* target) const override;
  int64_t vocab_size() const override { return base_->vocab_size(); }
  SpecialTokens special_tokens() const override { return base_->special_tokens(); }
  std::optional<TokenMasking> masking() const override { return base_->masking(); }

  const std::vector<int64_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<int64_t> indices_;
};

struct TrainValidationSplit {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> validation;
};

/// Holds out round(fraction x size) samples of `train` (at least 1, and at least 1 left) as the
/// validation part: a permutation drawn from `seed` alone (the same on every rank and on a
/// resume), each part in ascending sample order. ConfigError when `fraction` is not in (0, 1) or
/// the set is too small to split.
TrainValidationSplit split_validation(const std::shared_ptr<const Dataset>& train, double fraction, uint64_t seed);

}  // namespace ingot::data

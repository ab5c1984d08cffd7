// BatchNorm2d (torch.nn.BatchNorm2d): per-channel normalisation of NCHW input with batch
// statistics in training and running statistics in eval.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::nn {

/// BatchNorm2d's options (torch's defaults). momentum: running = (1 - m) running + m batch.
struct BatchNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;
  bool affine = true;               ///< learnable weight (ones) and bias (zeros)
  bool track_running_stats = true;  ///< buffers running_mean, running_var, num_batches_tracked
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t num_features, const BatchNormOptions& options = {});
  /// Training: normalises with the batch statistics, updates the running statistics (unbiased
  /// variance) and adds 1 to num_batches_tracked. Eval: uses the running statistics.
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  int64_t num_features() const { return c_; }
  const BatchNormOptions& options() const { return options_; }
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }
  Tensor running_mean() const { return running_mean_; }
  Tensor running_var() const { return running_var_; }
  Tensor num_batches_tracked() const { return num_batches_tracked_; }  ///< int64, 0-dim

 private:
  int64_t c_;
  BatchNormOptions options_;
  Tensor weight_, bias_, running_mean_, running_var_, num_batches_tracked_;
};

}  // namespace ingot::nn

// Dropout (torch.nn.functional.dropout) on the DROPOUT op: the keep mask is a Philox Bernoulli
// draw from a Generator, so a (seed, offset) pair reproduces it on every backend.
#pragma once

#include "ingot/ops/random.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// Output and keep mask of one dropout call.
struct DropoutResult {
  Tensor y;     ///< x * keep / (1 - p)
  Tensor keep;  ///< bool, true where x was kept
};

/// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p),
/// drawing numel(x) values from `gen` (the default generator when null; its offset advances
/// by ceil(numel / 4)); outside training returns x itself and draws nothing. p must be in [0, 1].
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);
/// The training form with its mask (always draws).
DropoutResult dropout_with_mask(const Tensor& x, double p, Generator* gen = nullptr);

}  // namespace ingot

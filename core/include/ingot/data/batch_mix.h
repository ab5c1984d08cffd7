// Mixup and CutMix: batch-level augmentations for classification that blend each sample with its
// neighbour in the batch (the batch rolled by one, as torchvision's MixUp / CutMix) and turn the
// class labels into class probabilities of the same blend. Every draw is keyed by (seed, epoch,
// batch number), so a batch is mixed the same for any worker count.
#pragma once

#include <cstdint>

#include "ingot/tensor/tensor.h"

namespace ingot::data {

struct BatchMix {
  double mixup_alpha = 0.0;   ///< Beta(alpha, alpha) of Mixup's weight; 0 = no Mixup
  double cutmix_alpha = 0.0;  ///< Beta(alpha, alpha) of CutMix's area share; 0 = no CutMix
  double prob = 1.0;          ///< the chance that a batch is mixed at all
  double switch_prob = 0.5;   ///< with both on: the chance a mixed batch takes CutMix

  bool enabled() const { return prob > 0.0 && (mixup_alpha > 0.0 || cutmix_alpha > 0.0); }
};

/// One batch's choices. `lambda` is the share of each sample's own label in its target (for CutMix
/// the share of the image outside the box, after the box is clipped to the image).
struct MixDraw {
  enum class Kind { None, Mixup, Cutmix };
  Kind kind = Kind::None;
  double lambda = 1.0;
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;  ///< CutMix: rows [y0, y1) and columns [x0, x1) pasted
};

/// The draw for batch `index` of `epoch` of images `height` x `width`; a pure function of its
/// arguments.
MixDraw draw_mix(const BatchMix& mix, uint64_t seed, int64_t epoch, int64_t index, int64_t height, int64_t width);

/// Mixes a batch in place: `inputs` f32 [B, C, H, W] blended with the batch rolled by one (sample i
/// with sample i - 1, sample 0 with the last), `targets` i64 [B] replaced by f32 [B, classes]
/// probabilities: lambda on the own class, 1 - lambda on the neighbour's. A draw of kind None
/// still turns the labels into one-hot rows, so that every batch of a run has the same target type.
void apply_mix(const MixDraw& draw, int64_t classes, Tensor& inputs, Tensor& targets);

}  // namespace ingot::data

// Per-sample augmentations applied while a batch is assembled: random crop with padding and
// horizontal flip (torchvision's RandomCrop(padding=P) and RandomHorizontalFlip(0.5)). Each draw
// is keyed by (seed, epoch, sample index), so any worker reproduces any sample's augmentation.
#pragma once

#include <cstdint>

#include "ingot/data/dataset.h"

namespace ingot::data {

struct Augment {
  int64_t crop_padding = 0;  ///< pad every side by P black pixels, then crop back to H x W; 0 = off
  bool hflip = false;        ///< flip left-right with probability 0.5

  bool enabled() const { return crop_padding > 0 || hflip; }
};

/// The random choices for one sample: crop offsets in [0, 2P] and the flip.
struct AugmentDraw {
  int64_t top = 0;
  int64_t left = 0;
  bool flip = false;
};

/// The choices for sample `index` of `epoch` under `seed`; a pure function of its arguments.
AugmentDraw draw_augment(const Augment& augment, uint64_t seed, int64_t epoch, int64_t index);

/// Writes the augmented image: dst[c][y][x] = src[c][y + top - P][x' + left - P] with
/// x' = W-1-x when flipped, and `dataset.pad_value(c)` outside the source. `src` and `dst` are
/// [C, H, W] and must not overlap.
void apply_augment(const Augment& augment, const AugmentDraw& draw, const Dataset& dataset, const float* src,
                   float* dst);

}  // namespace ingot::data

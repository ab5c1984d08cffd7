// Private: the ops of torchvision's TrivialAugmentWide and RandAugment (their shared list of 14,
// in torchvision's order), their magnitude tables and _apply_op on uint8 planar images.
#pragma once

#include <cstdint>

#include "pixel_ops.h"

namespace ingot::data {

enum class AugmentOp {
  Identity,
  ShearX,
  ShearY,
  TranslateX,
  TranslateY,
  Rotate,
  Brightness,
  Color,
  Contrast,
  Sharpness,
  Posterize,
  Solarize,
  AutoContrast,
  Equalize
};
inline constexpr int64_t kAugmentOps = 14;

const char* augment_op_name(AugmentOp op);
/// Whether the op has a magnitude table (Identity, AutoContrast and Equalize do not) and whether
/// its magnitude takes a random sign.
bool augment_op_has_magnitudes(AugmentOp op);
bool augment_op_signed(AugmentOp op);
/// The op's magnitude at `bin` of `bins`, as torchvision's _augmentation_space tables give it (a
/// float32 value): TrivialAugmentWide's (`wide`) or RandAugment's, whose translations scale with
/// the image's height x width. 0 for ops without a table.
double augment_magnitude(AugmentOp op, bool wide, int64_t bin, int64_t bins, int64_t height, int64_t width);
/// torchvision's _apply_op with nearest interpolation and fill 0.
void apply_augment_op(Planes& img, AugmentOp op, double magnitude);

}  // namespace ingot::data

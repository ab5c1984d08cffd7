// TrivialAugmentWide's and RandAugment's ops: torchvision's magnitude tables (torch.linspace in
// float32) and _apply_op's mapping from a magnitude to a functional op.
#include "augment_ops.h"

#include <cmath>
#include <numbers>

namespace ingot::data {
namespace {

/// torch.linspace(start, end, steps)[i] in float32 (the kernel's scalar formula: from the start
/// in the first half, from the end in the second).
float linspace(double start, double end, int64_t steps, int64_t i) {
  const auto s = static_cast<float>(start), e = static_cast<float>(end);
  if (steps == 1) return s;
  const float step = (e - s) / static_cast<float>(steps - 1);
  return i < steps / 2 ? s + step * static_cast<float>(i) : e - step * static_cast<float>(steps - i - 1);
}

}  // namespace

const char* augment_op_name(AugmentOp op) {
  static const char* const names[kAugmentOps] = {"Identity",  "ShearX",     "ShearY",       "TranslateX", "TranslateY",
                                                 "Rotate",    "Brightness", "Color",        "Contrast",   "Sharpness",
                                                 "Posterize", "Solarize",   "AutoContrast", "Equalize"};
  return names[static_cast<int>(op)];
}

bool augment_op_has_magnitudes(AugmentOp op) {
  return op != AugmentOp::Identity && op != AugmentOp::AutoContrast && op != AugmentOp::Equalize;
}

bool augment_op_signed(AugmentOp op) {
  return augment_op_has_magnitudes(op) && op != AugmentOp::Posterize && op != AugmentOp::Solarize;
}

double augment_magnitude(AugmentOp op, bool wide, int64_t bin, int64_t bins, int64_t height, int64_t width) {
  switch (op) {
    case AugmentOp::ShearX:
    case AugmentOp::ShearY:
      return linspace(0.0, wide ? 0.99 : 0.3, bins, bin);
    case AugmentOp::TranslateX:
      return linspace(0.0, wide ? 32.0 : 150.0 / 331.0 * static_cast<double>(width), bins, bin);
    case AugmentOp::TranslateY:
      return linspace(0.0, wide ? 32.0 : 150.0 / 331.0 * static_cast<double>(height), bins, bin);
    case AugmentOp::Rotate:
      return linspace(0.0, wide ? 135.0 : 30.0, bins, bin);
    case AugmentOp::Brightness:
    case AugmentOp::Color:
    case AugmentOp::Contrast:
    case AugmentOp::Sharpness:
      return linspace(0.0, wide ? 0.99 : 0.9, bins, bin);
    case AugmentOp::Posterize: {  // 8 - (arange(bins) / ((bins - 1) / k)).round().int()
      const auto divisor = static_cast<float>(static_cast<double>(bins - 1) / (wide ? 6.0 : 4.0));
      return 8.0 - std::nearbyint(static_cast<float>(bin) / divisor);
    }
    case AugmentOp::Solarize:
      return linspace(255.0, 0.0, bins, bin);
    default:
      return 0.0;
  }
}

void apply_augment_op(Planes& img, AugmentOp op, double magnitude) {
  const double half_w = static_cast<double>(img.width) * 0.5, half_h = static_cast<double>(img.height) * 0.5;
  const double to_degrees = 180.0 / std::numbers::pi;  // Python's math.degrees
  switch (op) {
    case AugmentOp::Identity:
      break;
    case AugmentOp::ShearX:  // about the top left corner: center [0, 0] relative to the image's centre
      affine_nearest(img, inverse_affine_matrix({-half_w, -half_h}, 0.0, {0.0, 0.0}, 1.0,
                                                {std::atan(magnitude) * to_degrees, 0.0}));
      break;
    case AugmentOp::ShearY:
      affine_nearest(img, inverse_affine_matrix({-half_w, -half_h}, 0.0, {0.0, 0.0}, 1.0,
                                                {0.0, std::atan(magnitude) * to_degrees}));
      break;
    case AugmentOp::TranslateX:
      affine_nearest(img, inverse_affine_matrix({0.0, 0.0}, 0.0, {std::trunc(magnitude), 0.0}, 1.0, {0.0, 0.0}));
      break;
    case AugmentOp::TranslateY:
      affine_nearest(img, inverse_affine_matrix({0.0, 0.0}, 0.0, {0.0, std::trunc(magnitude)}, 1.0, {0.0, 0.0}));
      break;
    case AugmentOp::Rotate:  // F.rotate turns counter-clockwise: the affine matrix of -angle
      affine_nearest(img, inverse_affine_matrix({0.0, 0.0}, -magnitude, {0.0, 0.0}, 1.0, {0.0, 0.0}));
      break;
    case AugmentOp::Brightness:
      adjust_brightness(img, 1.0 + magnitude);
      break;
    case AugmentOp::Color:
      adjust_saturation(img, 1.0 + magnitude);
      break;
    case AugmentOp::Contrast:
      adjust_contrast(img, 1.0 + magnitude);
      break;
    case AugmentOp::Sharpness:
      adjust_sharpness(img, 1.0 + magnitude);
      break;
    case AugmentOp::Posterize:
      posterize(img, static_cast<int64_t>(magnitude));
      break;
    case AugmentOp::Solarize:
      solarize(img, magnitude);
      break;
    case AugmentOp::AutoContrast:
      autocontrast(img);
      break;
    case AugmentOp::Equalize:
      equalize(img);
      break;
  }
}

}  // namespace ingot::data

// Parameter choice in torch's arithmetic: the observers' rules in f32, fbgemm's in double with an
// f32 result. Rounding is half to even everywhere (std::nearbyint in the default rounding mode),
// as torch.round and nearbyint are.
#include "qparams_choice.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "ingot/base/error.h"

namespace ingot::quant {
namespace {

/// fbgemm's smallest scale (fp16's smallest normal), so that no scale is subnormal in fp16.
constexpr float kSmallestScale = 6.1e-5f;

}  // namespace

std::pair<int32_t, int32_t> activation_range(bool reduce_range) {
  return reduce_range ? std::pair<int32_t, int32_t>{0, 127} : std::pair<int32_t, int32_t>{0, 255};
}

AffineParams affine_qparams(float min, float max, int32_t qmin, int32_t qmax) {
  INGOT_CHECK(min <= max, "affine_qparams: min {} > max {}", min, max);
  const float lo = std::min(min, 0.0f);
  const float hi = std::max(max, 0.0f);
  const float scale = std::max((hi - lo) / static_cast<float>(qmax - qmin), FLT_EPSILON);
  const auto zp = static_cast<int32_t>(static_cast<float>(qmin) - std::nearbyint(lo / scale));
  return {scale, std::clamp(zp, qmin, qmax)};
}

float symmetric_scale(float min, float max, int32_t qmin, int32_t qmax) {
  INGOT_CHECK(min <= max, "symmetric_scale: min {} > max {}", min, max);
  const float amax = std::max(-std::min(min, 0.0f), std::max(max, 0.0f));
  return std::max(amax / (static_cast<float>(qmax - qmin) / 2.0f), FLT_EPSILON);
}

AffineParams choose_quantization_params(float min, float max, int32_t qmin, int32_t qmax, bool reduce_range) {
  INGOT_CHECK(min <= max, "choose_quantization_params: min {} > max {}", min, max);
  if (reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  INGOT_CHECK(qmin < qmax, "choose_quantization_params: qmin {} must be below qmax {}", qmin, qmax);
  // The range must contain 0 so that 0 (padding, ReLU's zeros) is exact.
  min = std::min(min, 0.0f);
  max = std::max(max, 0.0f);
  double scale = (static_cast<double>(max) - min) / (qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) scale = 0.1;
  if (scale < kSmallestScale) {
    // Widen the range to what the smallest scale covers, keeping its proportions.
    const float was = static_cast<float>(scale);
    scale = kSmallestScale;
    if (min == 0.0f) {
      max = kSmallestScale * static_cast<float>(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallestScale * static_cast<float>(qmax - qmin);
    } else {
      const float widen = kSmallestScale / was;
      min *= widen;
      max *= widen;
    }
  }
  // Either end point gives the zero point; take the one whose terms are smaller (less rounding).
  const double from_min = qmin - min / scale;
  const double from_max = qmax - max / scale;
  const double err_min = std::abs(qmin) - std::abs(min / scale);
  const double err_max = std::abs(qmax) - std::abs(max / scale);
  const double zp = err_min < err_max ? from_min : from_max;
  int32_t nudged = 0;
  if (zp < qmin) {
    nudged = qmin;
  } else if (zp > qmax) {
    nudged = qmax;
  } else {
    nudged = static_cast<int32_t>(std::nearbyint(zp));
  }
  return {static_cast<float>(scale), nudged};
}

QParams weight_qparams(const Tensor& weight, bool per_channel) {
  INGOT_CHECK_SHAPE(weight.dim() >= 2, "weight_qparams: weight {} must have an output-channel dim",
                    weight.shape().str());
  const auto [qmin, qmax] = quant_range(DType::I8);
  const std::vector<float> w = weight.detach().to_vector<float>();
  const int64_t channels = per_channel ? weight.size(0) : 1;
  const auto per = static_cast<int64_t>(w.size()) / channels;
  std::vector<float> scales;
  for (int64_t c = 0; c < channels; ++c) {
    const auto first = w.begin() + c * per;
    const auto [lo, hi] = std::minmax_element(first, first + per);
    scales.push_back(symmetric_scale(*lo, *hi, qmin, qmax));
  }
  if (!per_channel) return QParams::per_tensor(scales[0], 0, DType::I8, weight.device());
  return QParams::per_channel_of(scales, std::vector<int32_t>(scales.size(), 0), 0, DType::I8, weight.device());
}

QParams activation_qparams(const AffineParams& p, Device device) {
  return QParams::per_tensor(p.scale, p.zero_point, DType::U8, device);
}

}  // namespace ingot::quant

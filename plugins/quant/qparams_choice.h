// How the quant plugin picks quantization parameters, as torch.ao.quantization does: affine u8
// activations from a value range (MinMaxObserver), symmetric i8 weights per tensor or per output
// channel (PerChannelMinMaxObserver), and fbgemm's ChooseQuantizationParams for the per-batch
// activations of dynamic quantization.
#pragma once

#include <cstdint>
#include <utility>

#include "ingot/ops/quantize.h"

namespace ingot::quant {

/// One scale and zero point (per tensor).
struct AffineParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

/// The u8 range of activations: [0, 255], or torch's reduce_range [0, 127] (7 bits, fbgemm).
std::pair<int32_t, int32_t> activation_range(bool reduce_range);

/// torch's _ObserverBase._calculate_qparams for per_tensor_affine, in f32 as torch computes it:
/// min' = min(min, 0), max' = max(max, 0), scale = max(eps, (max' - min') / (qmax - qmin)),
/// zero_point = clamp(qmin - round_half_even(min' / scale), qmin, qmax).
AffineParams affine_qparams(float min, float max, int32_t qmin, int32_t qmax);

/// The same for per_tensor / per_channel_symmetric over a signed range: zero point 0 and
/// scale = max(eps, max(-min', max') / ((qmax - qmin) / 2)).
float symmetric_scale(float min, float max, int32_t qmin, int32_t qmax);

/// fbgemm's ChooseQuantizationParams (ATen quant_utils, which torch's quantized::linear_dynamic
/// calls on each batch's min and max, no sparsity preservation, no power-of-two scale): the
/// scale in double (0.1 when it would be 0 or its reciprocal infinite, raised to 6.1e-5 with the
/// range widened to match), the zero point from the end point with the smaller error, rounded
/// half to even and clamped; reduce_range halves qmin and qmax. The scale is returned as f32.
AffineParams choose_quantization_params(float min, float max, int32_t qmin, int32_t qmax, bool reduce_range);

/// Symmetric i8 parameters of a Linear / Conv2d weight (output channels along dim 0): one scale
/// per output channel (per_channel) or one for the whole tensor, zero points 0, range [-128, 127].
QParams weight_qparams(const Tensor& weight, bool per_channel);

/// Per-tensor u8 parameters on `device`.
QParams activation_qparams(const AffineParams& p, Device device = Device::cpu());

}  // namespace ingot::quant

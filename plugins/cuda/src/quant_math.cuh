// Device arithmetic of the quantized ops, written with explicitly rounded intrinsics (no fused
// multiply-add) so that it repeats the reference backend's operations exactly: torch's (fbgemm's)
// rounding for QUANTIZE and requantized outputs, and the f32 epilogue of QLINEAR computed in double.
#pragma once

#include <cstdint>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot::cuda {

/// clamp(rint(x * (1.0f / scale)) + zero_point, lo, hi): the product in f32, ties to even; NaN
/// gives the zero point (the reference's choice; torch leaves it undefined).
__device__ __forceinline__ int32_t quantize_value(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi) {
  const float scaled = __fmul_rn(x, __fdiv_rn(1.0f, scale));
  double q = scaled != scaled ? static_cast<double>(zero_point)
                              : __dadd_rn(static_cast<double>(rintf(scaled)), static_cast<double>(zero_point));
  q = q < lo ? lo : (q > hi ? hi : q);
  return static_cast<int32_t>(q);
}

/// The fused activation of QLINEAR's f32 epilogue, in double like the reference's.
__device__ __forceinline__ double apply_activation(int32_t activation, double x) {
  if (activation == INGOT_ACT_RELU) return x > 0.0 || x != x ? x : 0.0;
  if (activation == INGOT_ACT_GELU) return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
  return x;
}

/// acc * (x_scale * w_scale) + bias, then the activation, in double with one rounding per
/// operation (the reference's order), rounded to f32 at the end.
__device__ __forceinline__ float dequantized_output(int32_t acc, float x_scale, float w_scale, const float* bias,
                                                    int64_t channel, int32_t activation) {
  double v = __dmul_rn(static_cast<double>(acc), __dmul_rn(static_cast<double>(x_scale), static_cast<double>(w_scale)));
  if (bias != nullptr) v = __dadd_rn(v, static_cast<double>(bias[channel]));
  return __double2float_rn(apply_activation(activation, v));
}

}  // namespace ingot::cuda

// bfloat16 <-> float for the plugin's own loops (reductions, selections, pooling backward): the
// same round-to-nearest-even as core's BFloat16 and torch, so one rounding matches theirs bit for bit.
#pragma once

#include <cstdint>
#include <cstring>

namespace ingot::onednn {

/// The float a bf16 bit pattern holds (exact: bf16 is the upper half of an IEEE float).
inline float bf16_to_float(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// `f` rounded to the nearest bf16 (ties to even); NaN stays a quiet NaN.
inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// Element access for loops templated on the storage type: float, or bf16 bits widened to float.
inline float load_f32(const float* p, int64_t i) { return p[i]; }
inline float load_f32(const uint16_t* p, int64_t i) { return bf16_to_float(p[i]); }
inline void store_f32(float* p, int64_t i, float v) { p[i] = v; }
inline void store_f32(uint16_t* p, int64_t i, float v) { p[i] = float_to_bf16(v); }

}  // namespace ingot::onednn

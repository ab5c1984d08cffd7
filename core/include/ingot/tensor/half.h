// IEEE half (f16) and bfloat16 storage types with round-to-nearest-even conversion from float.
#pragma once

#include <cstdint>
#include <cstring>

namespace ingot {

/// 16-bit IEEE 754 half precision, stored as bits.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
    if (abs < 0x38800000u) {                                                // subnormal or zero
      const uint32_t shift = 126u - (abs >> 23);
      if (shift > 24u) return static_cast<uint16_t>(sign);
      const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
      uint32_t h = mant >> shift;
      const uint32_t rem = mant & ((1u << shift) - 1u);
      const uint32_t half = 1u << (shift - 1u);
      if (rem > half || (rem == half && (h & 1u))) ++h;
      return static_cast<uint16_t>(sign | h);
    }
    uint32_t h = ((abs - 0x38000000u) >> 13);
    const uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  static float to_float(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1fu) {
      x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
      if (mant == 0) {
        x = sign;
      } else {  // normalise the subnormal
        int e = -1;
        do {
          ++e;
          mant <<= 1;
        } while ((mant & 0x400u) == 0);
        x = sign | ((112u - e) << 23) | ((mant & 0x3ffu) << 13);
      }
    } else {
      x = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

/// bfloat16: the upper half of an IEEE float, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
  }
  static float to_float(uint16_t b) {
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
};

}  // namespace ingot

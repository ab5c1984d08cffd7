// order_key: an unsigned integer per element whose integer order is the reference's sort order, so
// that a radix sort sorts like it: floats by their sign-flipped bits with -0 made +0 and every NaN
// the all-ones key (NaNs tie and come last), integers with the sign bit flipped. Host and device
// code, so the CPU tests check the order.
#pragma once

#include <cstdint>
#include <cstring>

#include "ingot/plugin/ingot_plugin.h"

#if defined(__CUDACC__)
#define INGOT_SORT_KEY_FN __host__ __device__ __forceinline__
#else
#define INGOT_SORT_KEY_FN inline
#endif

namespace ingot::cuda {

/// The key of element i of a buffer of `dtype`, in the low sort_key_bits(dtype) bits.
INGOT_SORT_KEY_FN uint64_t order_key(const void* p, int32_t dtype, int64_t i) {
  switch (dtype) {
    case INGOT_F64: {
      double v = static_cast<const double*>(p)[i];
      if (v != v) return ~uint64_t{0};
      if (v == 0.0) v = 0.0;
      uint64_t b = 0;
      memcpy(&b, &v, sizeof b);
      return (b >> 63) != 0 ? ~b : b | (uint64_t{1} << 63);
    }
    case INGOT_F32: {
      float v = static_cast<const float*>(p)[i];
      if (v != v) return 0xffffffffu;
      if (v == 0.0f) v = 0.0f;
      uint32_t b = 0;
      memcpy(&b, &v, sizeof b);
      return (b >> 31) != 0 ? ~b : b | 0x80000000u;
    }
    case INGOT_F16:
    case INGOT_BF16: {
      uint32_t b = static_cast<const uint16_t*>(p)[i];
      const uint32_t inf = dtype == INGOT_F16 ? 0x7c00u : 0x7f80u;
      if ((b & 0x7fffu) > inf) return 0xffffu;  // NaN: exponent all ones, mantissa not 0
      if ((b & 0x7fffu) == 0) b = 0;            // -0
      return (b >> 15) != 0 ? (~b & 0xffffu) : b | 0x8000u;
    }
    case INGOT_I8:
      return static_cast<uint8_t>(static_cast<const int8_t*>(p)[i]) ^ 0x80u;
    case INGOT_U8:
      return static_cast<const uint8_t*>(p)[i];
    case INGOT_I32:
      return static_cast<uint32_t>(static_cast<const int32_t*>(p)[i]) ^ 0x80000000u;
    default:
      return static_cast<uint64_t>(static_cast<const int64_t*>(p)[i]) ^ (uint64_t{1} << 63);
  }
}

}  // namespace ingot::cuda

#undef INGOT_SORT_KEY_FN

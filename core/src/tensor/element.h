// Reading and writing one element of any dtype as double (host printing, item(), scalars).
#pragma once

#include <cstdint>
#include <cstring>

#include "ingot/tensor/dtype.h"
#include "ingot/tensor/half.h"

namespace ingot {

inline double load_element(DType t, const void* p) {
  switch (t) {
    case DType::F32: return *static_cast<const float*>(p);
    case DType::F64: return *static_cast<const double*>(p);
    case DType::F16: return static_cast<float>(*static_cast<const Half*>(p));
    case DType::BF16: return static_cast<float>(*static_cast<const BFloat16*>(p));
    case DType::I8: return *static_cast<const int8_t*>(p);
    case DType::U8: return *static_cast<const uint8_t*>(p);
    case DType::I32: return *static_cast<const int32_t*>(p);
    case DType::I64: return static_cast<double>(*static_cast<const int64_t*>(p));
    case DType::Bool: return *static_cast<const bool*>(p) ? 1.0 : 0.0;
  }
  return 0.0;
}

inline void store_element(DType t, void* p, double v) {
  switch (t) {
    case DType::F32: *static_cast<float*>(p) = static_cast<float>(v); break;
    case DType::F64: *static_cast<double*>(p) = v; break;
    case DType::F16: *static_cast<Half*>(p) = Half(static_cast<float>(v)); break;
    case DType::BF16: *static_cast<BFloat16*>(p) = BFloat16(static_cast<float>(v)); break;
    case DType::I8: *static_cast<int8_t*>(p) = static_cast<int8_t>(v); break;
    case DType::U8: *static_cast<uint8_t*>(p) = static_cast<uint8_t>(v); break;
    case DType::I32: *static_cast<int32_t*>(p) = static_cast<int32_t>(v); break;
    case DType::I64: *static_cast<int64_t*>(p) = static_cast<int64_t>(v); break;
    case DType::Bool: *static_cast<bool*>(p) = v != 0.0; break;
  }
}

}  // namespace ingot

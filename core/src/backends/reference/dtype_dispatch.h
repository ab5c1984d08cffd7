// Maps ABI dtypes to C++ element types for the reference kernels: visitors over dtype sets,
// the compute type of each element type, and torch-like conversions between any two types.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/reference/check.h"
#include "ingot/tensor/half.h"

namespace ingot::reference {

/// Carries an element type through a generic lambda: [&](auto tag) { using T = typename decltype(tag)::type; }
template <class T>
struct Tag {
  using type = T;
};

template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <class T>
inline constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;

/// True for f32, f64, f16 and bf16.
inline bool is_float_dtype(int32_t dtype) {
  return dtype == INGOT_F32 || dtype == INGOT_F64 || dtype == INGOT_F16 || dtype == INGOT_BF16;
}

/// Type elementwise math runs in: float for f16/bf16 (like torch), the type itself otherwise.
template <class T>
using Compute = std::conditional_t<kIsHalf<T>, float, T>;

/// Converts between any two element types: float -> int truncates toward zero (NaN -> 0,
/// out-of-range values saturate to int64 first, then wrap like a C cast); -> bool is x != 0.
template <class To, class From>
To convert(From v) {
  if constexpr (kIsHalf<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsHalf<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {  // integer from floating point
    if (std::isnan(v)) return To(0);
    const From t = std::trunc(v);
    if (t >= From(9.2233720368547758e18)) return static_cast<To>(std::numeric_limits<int64_t>::max());
    if (t < From(-9.2233720368547758e18)) return static_cast<To>(std::numeric_limits<int64_t>::min());
    return static_cast<To>(static_cast<int64_t>(t));
  } else {  // integer or bool to integer: modular, like a C cast
    return static_cast<To>(v);
  }
}

/// Integer + - * and negation wrap around (two's complement, like torch) instead of being
/// undefined on overflow; floating point is plain arithmetic.
template <class C>
C add_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class C>
C sub_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <class C>
C mul_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <class F>
decltype(auto) visit_float(const sdk::OpCall& c, int32_t dtype, F&& f) {
  switch (dtype) {
    case INGOT_F32:
      return f(Tag<float>{});
    case INGOT_F64:
      return f(Tag<double>{});
    case INGOT_F16:
      return f(Tag<Half>{});
    case INGOT_BF16:
      return f(Tag<BFloat16>{});
    default:
      fail("{}: dtype {} is not supported (floating point only)", op_name(c.op), sdk::dtype_label(dtype));
  }
}

template <class F>
decltype(auto) visit_num(const sdk::OpCall& c, int32_t dtype, F&& f) {
  switch (dtype) {
    case INGOT_I8:
      return f(Tag<int8_t>{});
    case INGOT_U8:
      return f(Tag<uint8_t>{});
    case INGOT_I32:
      return f(Tag<int32_t>{});
    case INGOT_I64:
      return f(Tag<int64_t>{});
    case INGOT_BOOL:
      fail("{}: dtype bool is not supported (numeric only)", op_name(c.op));
    default:
      return visit_float(c, dtype, f);
  }
}

template <class F>
decltype(auto) visit_any(const sdk::OpCall& c, int32_t dtype, F&& f) {
  if (dtype == INGOT_BOOL) return f(Tag<bool>{});
  return visit_num(c, dtype, f);
}

/// Element of any dtype at element offset `off` from `base`, converted to T (per-element switch:
/// for kernels that are not type-templated).
template <class T>
T load_as(const void* base, int32_t dtype, int64_t off) {
  switch (dtype) {
    case INGOT_F32:
      return convert<T>(static_cast<const float*>(base)[off]);
    case INGOT_F64:
      return convert<T>(static_cast<const double*>(base)[off]);
    case INGOT_F16:
      return convert<T>(static_cast<const Half*>(base)[off]);
    case INGOT_BF16:
      return convert<T>(static_cast<const BFloat16*>(base)[off]);
    case INGOT_I8:
      return convert<T>(static_cast<const int8_t*>(base)[off]);
    case INGOT_U8:
      return convert<T>(static_cast<const uint8_t*>(base)[off]);
    case INGOT_I32:
      return convert<T>(static_cast<const int32_t*>(base)[off]);
    case INGOT_I64:
      return convert<T>(static_cast<const int64_t*>(base)[off]);
    case INGOT_BOOL:
      return convert<T>(static_cast<const bool*>(base)[off]);
    default:
      fail("reference: unknown dtype {}", dtype);
  }
}

/// Stores `v` converted to `dtype` at element offset `off` from `base`.
template <class T>
void store_as(void* base, int32_t dtype, int64_t off, T v) {
  switch (dtype) {
    case INGOT_F32:
      static_cast<float*>(base)[off] = convert<float>(v);
      return;
    case INGOT_F64:
      static_cast<double*>(base)[off] = convert<double>(v);
      return;
    case INGOT_F16:
      static_cast<Half*>(base)[off] = convert<Half>(v);
      return;
    case INGOT_BF16:
      static_cast<BFloat16*>(base)[off] = convert<BFloat16>(v);
      return;
    case INGOT_I8:
      static_cast<int8_t*>(base)[off] = convert<int8_t>(v);
      return;
    case INGOT_U8:
      static_cast<uint8_t*>(base)[off] = convert<uint8_t>(v);
      return;
    case INGOT_I32:
      static_cast<int32_t*>(base)[off] = convert<int32_t>(v);
      return;
    case INGOT_I64:
      static_cast<int64_t*>(base)[off] = convert<int64_t>(v);
      return;
    case INGOT_BOOL:
      static_cast<bool*>(base)[off] = convert<bool>(v);
      return;
    default:
      fail("reference: unknown dtype {}", dtype);
  }
}

}  // namespace ingot::reference

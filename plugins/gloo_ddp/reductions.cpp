// Element-wise reductions for gloo's allreduce, per dtype and reduce op. Half types (f16, bf16)
// are widened to float for each pairwise step and rounded back to nearest even, as PyTorch's gloo
// backend does; signed integer sums wrap (computed in the unsigned type) instead of overflowing.
#include "reductions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ingot/plugin/sdk.h"

namespace ingot::gloo_ddp {
namespace {

using ingot::sdk::Failure;

// ---- half types --------------------------------------------------------------------------

float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_f16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504: inf
  if (abs < 0x38800000u) {                                               // subnormal or zero in f16
    const float scaled = std::fabs(f) * 16777216.0f;                       // 2^24: units of the least subnormal
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  const uint32_t rounded = abs + 0xFFFu + ((abs >> 13) & 1u);  // round to nearest even at bit 13
  return static_cast<uint16_t>(sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13));
}

struct F16 {
  static float load(uint16_t v) { return f16_to_float(v); }
  static uint16_t store(float v) { return float_to_f16(v); }
};
struct BF16 {
  static float load(uint16_t v) { return bf16_to_float(v); }
  static uint16_t store(float v) { return float_to_bf16(v); }
};

// ---- the pairwise step -------------------------------------------------------------------

enum class Op { Sum, Max, Min };

template <class T>
T combine(T a, T b, Op op) {
  switch (op) {
    case Op::Sum:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      } else {
        return a + b;
      }
    case Op::Max:
      return std::max(a, b);
    case Op::Min:
      return std::min(a, b);
  }
  return a;
}

template <class T>
ReduceFn plain(Op op) {
  return [op](void* out, const void* a, const void* b, size_t n) {
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = combine(x[i], y[i], op);
  };
}

template <class H>
ReduceFn half(Op op) {
  return [op](void* out, const void* a, const void* b, size_t n) {
    uint16_t* o = static_cast<uint16_t*>(out);
    const uint16_t* x = static_cast<const uint16_t*>(a);
    const uint16_t* y = static_cast<const uint16_t*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = H::store(combine(H::load(x[i]), H::load(y[i]), op));
  };
}

template <class T>
void divide_plain(void* data, size_t n, int divisor) {
  T* p = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(divisor));
}

template <class H>
void divide_half(void* data, size_t n, int divisor) {
  uint16_t* p = static_cast<uint16_t*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = H::store(H::load(p[i]) / static_cast<float>(divisor));
}

}  // namespace

bool reducible(int32_t dtype) {
  switch (dtype) {
    case INGOT_F32:
    case INGOT_F64:
    case INGOT_F16:
    case INGOT_BF16:
    case INGOT_I32:
    case INGOT_I64:
    case INGOT_U8:
    case INGOT_I8:
      return true;
    default:
      return false;
  }
}

const char* reducible_list() { return "f32, f64, f16, bf16, i32, i64, u8 and i8"; }

void require_reducible(int32_t dtype) {
  if (!reducible(dtype))
    throw Failure(INGOT_ERR_UNSUPPORTED, "gloo cannot reduce " + sdk::dtype_label(dtype) + " tensors (it reduces " +
                                             reducible_list() + "; convert first)");
}

ReduceFn reduce_function(int32_t dtype, int32_t op) {
  Op o;
  switch (op) {
    case INGOT_REDUCE_SUM:
    case INGOT_REDUCE_AVG:
      o = Op::Sum;
      break;
    case INGOT_REDUCE_MAX:
      o = Op::Max;
      break;
    case INGOT_REDUCE_MIN:
      o = Op::Min;
      break;
    default:
      throw Failure(INGOT_ERR_UNSUPPORTED, "gloo: unknown reduce op " + std::to_string(op));
  }
  switch (dtype) {
    case INGOT_F32:
      return plain<float>(o);
    case INGOT_F64:
      return plain<double>(o);
    case INGOT_F16:
      return half<F16>(o);
    case INGOT_BF16:
      return half<BF16>(o);
    case INGOT_I32:
      return plain<int32_t>(o);
    case INGOT_I64:
      return plain<int64_t>(o);
    case INGOT_U8:
      return plain<uint8_t>(o);
    case INGOT_I8:
      return plain<int8_t>(o);
    default:
      require_reducible(dtype);
      throw Failure(INGOT_ERR_UNSUPPORTED, "gloo cannot reduce " + sdk::dtype_label(dtype) + " tensors");
  }
}

void divide(int32_t dtype, void* data, size_t n, int divisor) {
  switch (dtype) {
    case INGOT_F32:
      return divide_plain<float>(data, n, divisor);
    case INGOT_F64:
      return divide_plain<double>(data, n, divisor);
    case INGOT_F16:
      return divide_half<F16>(data, n, divisor);
    case INGOT_BF16:
      return divide_half<BF16>(data, n, divisor);
    case INGOT_I32:
      return divide_plain<int32_t>(data, n, divisor);
    case INGOT_I64:
      return divide_plain<int64_t>(data, n, divisor);
    case INGOT_U8:
      return divide_plain<uint8_t>(data, n, divisor);
    case INGOT_I8:
      return divide_plain<int8_t>(data, n, divisor);
    default:
      throw Failure(INGOT_ERR_UNSUPPORTED, "gloo cannot average " + sdk::dtype_label(dtype) + " tensors");
  }
}

}  // namespace ingot::gloo_ddp

// Device-side helpers shared by the kernel families: dtype dispatch, conversions (f16/bf16
// compute in float), broadcast strides (offsets: Indexer in index_math.h), 16-byte packs and
// grid-stride launch sizes.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "index_math.h"
#include "kernels.h"

namespace ingot::cuda {

using half = __half;
using bf16 = __nv_bfloat16;

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, half> || std::is_same_v<T, bf16>;

/// The type arithmetic runs in: float for f16/bf16, the type itself otherwise.
template <class T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

/// The reference backend's conversions between Ingot's element types: halves go through float
/// (also from double), floating -> integer truncates with NaN -> 0 and saturates at int64's range.
template <class To, class From>
__host__ __device__ __forceinline__ To cvt(From x) {
  if constexpr (is_half_v<From>) {
    return cvt<To>(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_same_v<To, half>) {
    return __float2half_rn(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, bf16>) {
    return __float2bfloat16_rn(static_cast<float>(x));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_floating_point_v<From>) {
    if (x != x) return To(0);
    const From t = trunc(x);
    if (t >= From(9.2233720368547758e18)) return static_cast<To>(INT64_MAX);
    if (t < From(-9.2233720368547758e18)) return static_cast<To>(INT64_MIN);
    return static_cast<To>(static_cast<int64_t>(t));
  } else {
    return static_cast<To>(x);
  }
}

/// Element `i` of a buffer of runtime dtype `dtype`, converted to T.
template <class T>
__device__ __forceinline__ T load_as(const void* p, int32_t dtype, int64_t i) {
  switch (dtype) {
    case INGOT_F32: return cvt<T>(static_cast<const float*>(p)[i]);
    case INGOT_F64: return cvt<T>(static_cast<const double*>(p)[i]);
    case INGOT_F16: return cvt<T>(static_cast<const half*>(p)[i]);
    case INGOT_BF16: return cvt<T>(static_cast<const bf16*>(p)[i]);
    case INGOT_I8: return cvt<T>(static_cast<const int8_t*>(p)[i]);
    case INGOT_U8: return cvt<T>(static_cast<const uint8_t*>(p)[i]);
    case INGOT_I32: return cvt<T>(static_cast<const int32_t*>(p)[i]);
    case INGOT_I64: return cvt<T>(static_cast<const int64_t*>(p)[i]);
    default: return cvt<T>(static_cast<const bool*>(p)[i]);
  }
}

/// Strides of `in` over `out`'s shape with NumPy broadcasting (aligned right, size-1 dims -> 0).
inline void broadcast_strides(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int64_t* strides) {
  const int lead = out.ndim - in.ndim;
  for (int d = 0; d < out.ndim; ++d) {
    const int k = d - lead;
    strides[d] = (k < 0 || in.shape[k] == 1) ? 0 : in.strides[k];
  }
}

/// Whether `in` broadcasts to `out`'s shape (NumPy rules).
inline bool broadcasts_to(const ingot_tensor_desc& in, const ingot_tensor_desc& out) {
  if (in.ndim > out.ndim) return false;
  const int lead = out.ndim - in.ndim;
  for (int d = 0; d < in.ndim; ++d)
    if (in.shape[d] != 1 && in.shape[d] != out.shape[d + lead]) return false;
  return true;
}

/// An indexer over `out`'s shape: operand 0 is `out`, then each of `ins` broadcast to it.
template <int N>
Indexer<N> make_indexer(const ingot_tensor_desc& out, const ingot_tensor_desc* const* ins) {
  Indexer<N> ix{};
  ix.ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) ix.shape[d] = out.shape[d], ix.strides[0][d] = out.strides[d];
  for (int k = 1; k < N; ++k) broadcast_strides(*ins[k - 1], out, ix.strides[k]);
  return ix;
}

/// Whether `attrs` holds an attribute struct A (what sdk::attr would throw for): supports()
/// declines instead of claiming a call that execute() must then refuse.
template <class A>
bool has_attr(const void* attrs) {
  return attrs != nullptr && static_cast<const A*>(attrs)->struct_size >= sizeof(A);
}

/// Whether every operand walks memory exactly like a contiguous `out` (no broadcast, no gaps).
template <int N>
bool all_dense(const Indexer<N>& ix) {
  for (int k = 0; k < N; ++k) {
    int64_t expected = 1;
    for (int d = ix.ndim - 1; d >= 0; --d) {
      if (ix.shape[d] != 1 && ix.strides[k][d] != expected) return false;
      expected *= ix.shape[d];
    }
  }
  return true;
}

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over n elements: enough to fill the GPU, never more than needed.
inline unsigned grid_for(int64_t n, const Launch& l) {
  const int64_t want = (n + kThreads - 1) / kThreads;
  const int64_t cap = static_cast<int64_t>(l.sm_count > 0 ? l.sm_count : 80) * 8;
  return static_cast<unsigned>(want < 1 ? 1 : (want < cap ? want : cap));
}

/// Elements of T in one 16-byte access; Pack<T> is that access (one LDG.128 / STG.128).
template <class T>
inline constexpr int kPack = static_cast<int>(16 / sizeof(T));
template <class T>
struct alignas(16) Pack {
  T v[kPack<T>];
};

/// Whether p may be read as Pack<T> (the vectorized contiguous paths need 16-byte alignment).
inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

#define INGOT_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); i += static_cast<int64_t>(blockDim.x) * gridDim.x)

/// Calls fn(T{}) with T the C++ type of `dtype`; `what` names the op for the error.
template <class Fn>
void visit_dtype(int32_t dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case INGOT_F32: return fn(float{});
    case INGOT_F64: return fn(double{});
    case INGOT_F16: return fn(half{});
    case INGOT_BF16: return fn(bf16{});
    case INGOT_I8: return fn(int8_t{});
    case INGOT_U8: return fn(uint8_t{});
    case INGOT_I32: return fn(int32_t{});
    case INGOT_I64: return fn(int64_t{});
    case INGOT_BOOL: return fn(bool{});
    default: throw sdk::Failure(INGOT_ERR_UNSUPPORTED, std::string("cuda ") + what + ": unknown dtype " + std::to_string(dtype));
  }
}

/// Like visit_dtype for the floating dtypes only.
template <class Fn>
void visit_float(int32_t dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case INGOT_F32: return fn(float{});
    case INGOT_F64: return fn(double{});
    case INGOT_F16: return fn(half{});
    case INGOT_BF16: return fn(bf16{});
    default: throw sdk::Failure(INGOT_ERR_UNSUPPORTED, std::string("cuda ") + what + ": not a floating dtype");
  }
}

}  // namespace ingot::cuda

namespace ingot::cuda {

/// Stores `v` converted to the runtime dtype `dtype` at element `i`.
template <class T>
__device__ __forceinline__ void store_as(void* p, int32_t dtype, int64_t i, T v) {
  switch (dtype) {
    case INGOT_F32: static_cast<float*>(p)[i] = cvt<float>(v); break;
    case INGOT_F64: static_cast<double*>(p)[i] = cvt<double>(v); break;
    case INGOT_F16: static_cast<half*>(p)[i] = cvt<half>(v); break;
    case INGOT_BF16: static_cast<bf16*>(p)[i] = cvt<bf16>(v); break;
    case INGOT_I8: static_cast<int8_t*>(p)[i] = cvt<int8_t>(v); break;
    case INGOT_U8: static_cast<uint8_t*>(p)[i] = cvt<uint8_t>(v); break;
    case INGOT_I32: static_cast<int32_t*>(p)[i] = cvt<int32_t>(v); break;
    case INGOT_I64: static_cast<int64_t*>(p)[i] = cvt<int64_t>(v); break;
    default: static_cast<bool*>(p)[i] = cvt<bool>(v); break;
  }
}

/// Sum of `v` over the block (blockDim.x a multiple of 32, at most 1024); valid in thread 0.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? warp_sums[lane] : T(0);
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

}  // namespace ingot::cuda

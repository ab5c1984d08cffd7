// Index math of the strided kernels, free of CUDA headers so that it is unit-tested on the CPU:
// Indexer (element offsets of N operands from a row-major index), merging the dims every operand
// walks as one, and 32-bit division by a run-time constant with one multiply-high.
#pragma once

#include <cstdint>

#include "ingot/plugin/ingot_plugin.h"

#if defined(__CUDACC__)
#define INGOT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define INGOT_HOST_DEVICE inline
#endif
#if defined(__CUDA_ARCH__)
#define INGOT_UNROLL _Pragma("unroll")
#else
#define INGOT_UNROLL
#endif

namespace ingot::cuda {

/// n / divisor and n % divisor for divisor in [1, 2^31 - 1] and n in [0, 2^31 - 1]: q = (umulhi(n,
/// magic) + n) >> shift (Granlund and Montgomery; the sum stays below 2^32 because n < 2^31).
/// Built on the host by make_fast_divmod; a plain aggregate so that it is a kernel parameter.
struct FastDivmod {
  uint32_t divisor;
  uint32_t magic;
  uint32_t shift;

  INGOT_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, magic);
#else
    const auto t = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (t + n) >> shift;
  }
  INGOT_HOST_DEVICE void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

/// The divider for `divisor` in [1, 2^31 - 1] (0 is a precondition violation): shift = ceil(log2(divisor)), magic =
/// floor(2^32 * (2^shift - divisor) / divisor) + 1, which is below 2^32.
inline FastDivmod make_fast_divmod(uint32_t divisor) {
  uint32_t shift = 0;
  while (shift < 31 && (uint32_t{1} << shift) < divisor) ++shift;
  const uint64_t magic = ((uint64_t{1} << 32) * ((uint64_t{1} << shift) - divisor)) / divisor + 1;
  return FastDivmod{divisor, static_cast<uint32_t>(magic), shift};
}

/// Rewrites `ndim` dims (row-major, outermost first) of `n_operands` operands sharing `shape` with
/// fewer dims that visit the same elements in the same order: size-1 dims are dropped and dims d,
/// d+1 merge where every operand has strides[d] == shape[d+1] * strides[d+1]. The row-major index
/// of every element is unchanged, so kernels may use it (RNG streams, output positions). A shape
/// with a 0 becomes {0}. Returns the new rank (0 for a single element).
inline int coalesce_dims(int ndim, int64_t* shape, int64_t (*strides)[INGOT_MAX_DIMS], int n_operands) {
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) {
      shape[0] = 0;
      for (int k = 0; k < n_operands; ++k) strides[k][0] = 0;
      return 1;
    }
  }
  int out = 0;  // dims kept so far, at positions [0, out)
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    bool merge = out > 0;
    for (int k = 0; k < n_operands && merge; ++k) {
      int64_t span = 0;
      merge = !__builtin_mul_overflow(shape[d], strides[k][d], &span) && strides[k][out - 1] == span;
    }
    if (merge) {
      shape[out - 1] *= shape[d];
      for (int k = 0; k < n_operands; ++k) strides[k][out - 1] = strides[k][d];
    } else {
      shape[out] = shape[d];
      for (int k = 0; k < n_operands; ++k) strides[k][out] = strides[k][d];
      ++out;
    }
  }
  return out;
}

/// Whether the element count and every operand's offsets (|offset| <= sum of (shape - 1) *
/// |stride|) stay below 2^31, so that 32-bit index math is exact.
inline bool fits_int32(int ndim, const int64_t* shape, const int64_t (*strides)[INGOT_MAX_DIMS], int n_operands) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] < 0 || shape[d] >= kLimit) return false;
    count *= shape[d];  // each factor < 2^31 and the product checked below, so no overflow
    if (count >= kLimit) return false;
  }
  for (int k = 0; k < n_operands; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < ndim; ++d) {
      if (shape[d] <= 1) continue;
      if (strides[k][d] <= -kLimit || strides[k][d] >= kLimit) return false;
      const int64_t s = strides[k][d] < 0 ? -strides[k][d] : strides[k][d];
      reach += (shape[d] - 1) * s;  // < 2^62 per term, < 2^31 before it: no overflow
      if (reach >= kLimit) return false;
    }
  }
  return true;
}

/// Shape of the iteration space and each operand's strides over it (0 = broadcast). Filled by hand
/// or by make_indexer it keeps the caller's dims and uses 64-bit index math; flatten() coalesces
/// the dims and switches to 32-bit math (FastDivmod) when everything fits in 31 bits.
template <int N>
struct Indexer {
  int32_t ndim;
  int64_t shape[INGOT_MAX_DIMS];
  int64_t strides[N][INGOT_MAX_DIMS];
  int32_t index32;                  // set by flatten(): offsets and the element count fit in 31 bits
  FastDivmod divs[INGOT_MAX_DIMS];  // set by flatten() for dims 1 .. ndim-1 when index32

  /// Element offsets of logical row-major index i (0 <= i < numel) for every operand. Dim 0 needs
  /// no division: what is left of i after the inner dims is its coordinate there.
  INGOT_HOST_DEVICE void offsets(int64_t i, int64_t (&off)[N]) const {
    if (index32) {
      int32_t o[N];
      INGOT_UNROLL
      for (int k = 0; k < N; ++k) o[k] = 0;
      auto rest = static_cast<uint32_t>(i);
      for (int d = ndim - 1; d >= 1; --d) {
        uint32_t q = 0, c = 0;
        divs[d].divmod(rest, q, c);
        rest = q;
        INGOT_UNROLL
        for (int k = 0; k < N; ++k) o[k] += static_cast<int32_t>(c) * static_cast<int32_t>(strides[k][d]);
      }
      if (ndim > 0) {
        INGOT_UNROLL
        for (int k = 0; k < N; ++k) o[k] += static_cast<int32_t>(rest) * static_cast<int32_t>(strides[k][0]);
      }
      INGOT_UNROLL
      for (int k = 0; k < N; ++k) off[k] = o[k];
      return;
    }
    INGOT_UNROLL
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 1; --d) {
      const int64_t c = i % shape[d];
      i /= shape[d];
      INGOT_UNROLL
      for (int k = 0; k < N; ++k) off[k] += c * strides[k][d];
    }
    if (ndim > 0) {
      INGOT_UNROLL
      for (int k = 0; k < N; ++k) off[k] += i * strides[k][0];
    }
  }
};

/// Coalesces ix's dims (see coalesce_dims) and enables 32-bit index math when it is exact.
template <int N>
void flatten(Indexer<N>& ix) {
  ix.ndim = coalesce_dims(ix.ndim, ix.shape, ix.strides, N);
  ix.index32 = fits_int32(ix.ndim, ix.shape, ix.strides, N) ? 1 : 0;
  for (int d = 0; d < INGOT_MAX_DIMS; ++d) {
    const bool used = ix.index32 != 0 && d >= 1 && d < ix.ndim;
    ix.divs[d] = make_fast_divmod(used ? static_cast<uint32_t>(ix.shape[d]) : 1u);
  }
}

/// Number of elements an indexer walks.
template <int N>
int64_t indexer_numel(const Indexer<N>& ix) {
  int64_t n = 1;
  for (int d = 0; d < ix.ndim; ++d) n *= ix.shape[d];
  return n;
}

}  // namespace ingot::cuda

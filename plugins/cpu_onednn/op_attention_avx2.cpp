// The attention kernels built for AVX2 + FMA, for CPUs (or ONEDNN_MAX_CPU_ISA levels) below
// AVX-512; op_attention.cpp checks the ISA before running them.
#include <immintrin.h>
#include <omp.h>

#include <cmath>
#include <cstring>

#include "op_attention_kernels.h"

namespace ingot::onednn {
namespace {

struct Avx2 {
  using R = __m256;
  static constexpr int64_t W = 8;
  static constexpr int MR = 4;  // 4 x 3 accumulators + 3 B vectors + 1 broadcast of 16 registers
  static constexpr int NV = 3;
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R x) { _mm256_storeu_ps(p, x); }
  static R load_bf16(const uint16_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R zero() { return _mm256_setzero_ps(); }
  static R fmadd(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R min(R a, R b) { return _mm256_min_ps(a, b); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }
  static R round(R x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  /// 2^n for integral n in [-127, 127] (-127 gives +0).
  static R pow2(R n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  static R neginf_to_zero(R x) {
    const R is_neginf = _mm256_cmp_ps(x, _mm256_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
    return _mm256_blendv_ps(x, _mm256_setzero_ps(), is_neginf);
  }
};

#include "op_attention_gemm.h"
#include "op_attention_tiles.h"

}  // namespace

const AttnKernels& attention_kernels_avx2() {
  static const AttnKernels k{&forward_workspace<Avx2>, &backward_workspace<Avx2>, &forward<Avx2>, &backward<Avx2>};
  return k;
}

}  // namespace ingot::onednn

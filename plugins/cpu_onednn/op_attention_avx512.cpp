// The attention kernels built for AVX-512 (F, BW, DQ, VL: oneDNN's avx512_core); op_attention.cpp
// runs them only where oneDNN's effective ISA, ONEDNN_MAX_CPU_ISA included, is at least that.
#include <immintrin.h>
#include <omp.h>

#include <cmath>
#include <cstring>

#include "op_attention_kernels.h"

namespace ingot::onednn {
namespace {

struct Avx512 {
  using R = __m512;
  static constexpr int64_t W = 16;
  static constexpr int MR = 6;  // 6 x 4 accumulators + 4 B vectors + 1 broadcast of 32 registers
  static constexpr int NV = 4;
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R x) { _mm512_storeu_ps(p, x); }
  static R load_bf16(const uint16_t* p) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R zero() { return _mm512_setzero_ps(); }
  static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R min(R a, R b) { return _mm512_min_ps(a, b); }
  static R max(R a, R b) { return _mm512_max_ps(a, b); }
  static R round(R x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  /// 2^n for integral n in [-127, 127] (-127 gives +0).
  static R pow2(R n) {
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  }
  static R neginf_to_zero(R x) {
    const __mmask16 k = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
    return _mm512_mask_blend_ps(k, x, _mm512_setzero_ps());
  }
};

#include "op_attention_gemm.h"
#include "op_attention_tiles.h"

}  // namespace

const AttnKernels& attention_kernels_avx512() {
  static const AttnKernels k{&forward_workspace<Avx512>, &backward_workspace<Avx512>, &forward<Avx512>,
                             &backward<Avx512>};
  return k;
}

}  // namespace ingot::onednn

// Register-blocked f32 tile products and a vector exp for the attention kernels, written once
// over a vector type V (op_attention_avx512.cpp, op_attention_avx2.cpp define one each).
// Included only by those translation units, inside their anonymous namespace: every function
// here is then compiled for that unit's ISA and never merged with another unit's copy.
#pragma once

/// C[M x N] (+)= A[M x K] * B[K x N]. A is read one scalar at a time, element (m, k) at
/// a[m * ars + k * acs], so a transposed or strided operand costs nothing; B and C are row-major
/// (rows ldb, ldc apart) and N is a multiple of V::W.
template <class V, int MR, int NV>
void gemm_block(int64_t kc, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, float* c,
                int64_t ldc, bool accumulate) {
  using R = typename V::R;
  R acc[MR][NV];
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) acc[m][n] = V::zero();
  for (int64_t k = 0; k < kc; ++k) {
    const float* bk = b + k * ldb;
    const float* ak = a + k * acs;
    R bv[NV];
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) bv[n] = V::load(bk + n * V::W);
#pragma GCC unroll 8
    for (int m = 0; m < MR; ++m) {
      const R av = V::set1(ak[m * ars]);
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) acc[m][n] = V::fmadd(av, bv[n], acc[m][n]);
    }
  }
#pragma GCC unroll 8
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) {
      float* cp = c + m * ldc + n * V::W;
      V::store(cp, accumulate ? V::add(V::load(cp), acc[m][n]) : acc[m][n]);
    }
  }
}

template <class V, int MR>
void gemm_rows(int nv, int64_t kc, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, float* c,
               int64_t ldc, bool accumulate) {
  static_assert(V::NV >= 3 && V::NV <= 4, "column blocks of 1 to 4 vectors");
  switch (nv) {
    case 1:
      return gemm_block<V, MR, 1>(kc, a, ars, acs, b, ldb, c, ldc, accumulate);
    case 2:
      return gemm_block<V, MR, 2>(kc, a, ars, acs, b, ldb, c, ldc, accumulate);
    case 3:
      return gemm_block<V, MR, 3>(kc, a, ars, acs, b, ldb, c, ldc, accumulate);
    default:
      if constexpr (V::NV >= 4) return gemm_block<V, MR, 4>(kc, a, ars, acs, b, ldb, c, ldc, accumulate);
  }
}

/// The whole product, in blocks of V::MR rows by V::NV vectors; a block of B stays in L1 while
/// every row block passes over it.
template <class V>
void gemm(int64_t m_rows, int64_t n_cols, int64_t kc, const float* a, int64_t ars, int64_t acs, const float* b,
          int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  static_assert(V::MR >= 4 && V::MR <= 6, "row blocks of 4 to 6");
  constexpr int64_t kBlockCols = V::NV * V::W;
  for (int64_t n0 = 0; n0 < n_cols; n0 += kBlockCols) {
    const int nv = static_cast<int>((n_cols - n0 < kBlockCols ? n_cols - n0 : kBlockCols) / V::W);
    int64_t m0 = 0;
    for (; m0 + V::MR <= m_rows; m0 += V::MR)
      gemm_rows<V, V::MR>(nv, kc, a + m0 * ars, ars, acs, b + n0, ldb, c + m0 * ldc + n0, ldc, accumulate);
    const float* at = a + m0 * ars;
    float* ct = c + m0 * ldc + n0;
    switch (m_rows - m0) {
      case 0:
        break;
      case 1:
        gemm_rows<V, 1>(nv, kc, at, ars, acs, b + n0, ldb, ct, ldc, accumulate);
        break;
      case 2:
        gemm_rows<V, 2>(nv, kc, at, ars, acs, b + n0, ldb, ct, ldc, accumulate);
        break;
      case 3:
        gemm_rows<V, 3>(nv, kc, at, ars, acs, b + n0, ldb, ct, ldc, accumulate);
        break;
      case 4:
        if constexpr (V::MR > 4) gemm_rows<V, 4>(nv, kc, at, ars, acs, b + n0, ldb, ct, ldc, accumulate);
        break;
      default:
        if constexpr (V::MR > 5) gemm_rows<V, 5>(nv, kc, at, ars, acs, b + n0, ldb, ct, ldc, accumulate);
        break;
    }
  }
}

/// e^x to about 1 ulp (Cephes' expf polynomial on x - n ln 2), exactly 0 below -87.6 and for
/// -inf — hidden keys must weigh nothing, not 1e-38 — and NaN stays NaN.
template <class V>
typename V::R vexp(typename V::R x) {
  using R = typename V::R;
  x = V::min(V::set1(88.0f), x);  // operand order: NaN in x comes out of min / max unchanged
  x = V::max(V::set1(-88.0f), x);
  const R n = V::round(V::mul(x, V::set1(1.44269504088896341f)));
  R r = V::fmadd(n, V::set1(-0.693359375f), x);
  r = V::fmadd(n, V::set1(2.12194440e-4f), r);
  R y = V::set1(1.9875691500e-4f);
  y = V::fmadd(y, r, V::set1(1.3981999507e-3f));
  y = V::fmadd(y, r, V::set1(8.3334519073e-3f));
  y = V::fmadd(y, r, V::set1(4.1665795894e-2f));
  y = V::fmadd(y, r, V::set1(1.6666665459e-1f));
  y = V::fmadd(y, r, V::set1(5.0000001201e-1f));
  y = V::fmadd(y, V::mul(r, r), V::add(r, V::set1(1.0f)));
  return V::mul(y, V::pow2(n));  // 2^-127 is built as +0: the tail flushes to 0
}

// MATMUL's mapping onto cuBLASLt: layouts from strides, batch strides that collapse (or not), the
// plan key. Host arithmetic only.
#include "matmul_problem.h"

#include <cstdint>

namespace ingot::cuda {
namespace {

// A row-major [r, c] matrix with strides (sr, sc) as a column-major layout whose op gives [c, r].
bool col_major_of(int64_t r, int64_t c, int64_t sr, int64_t sc, MatLayout& m) {
  if (sc == 1 || c == 1) {  // row-major: stored column-major as [c, r], op N
    const int64_t ld = r == 1 ? c : sr;
    if (ld < c || ld < 1) return false;
    m = {CUBLAS_OP_N, c, r, ld};
    return true;
  }
  if (sr == 1 || r == 1) {  // column-major [r, c]: transposing gives [c, r]
    const int64_t ld = c == 1 ? r : sc;
    if (ld < r || ld < 1) return false;
    m = {CUBLAS_OP_T, r, c, ld};
    return true;
  }
  return false;
}

// One stride for the flattened batch, if the dims allow it.
bool collapse(const int64_t* shape, const int64_t* s, int nb, int64_t& stride) {
  stride = 0;
  int64_t expect = -1;
  for (int d = nb - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (expect < 0) {
      stride = s[d];
      expect = s[d] * shape[d];
    } else {
      if (s[d] != expect) return false;
      expect = s[d] * shape[d];
    }
  }
  return true;
}

// The largest power of two up to 256 that divides the address: what the heuristic may assume.
uint32_t alignment(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

}  // namespace

bool matmul_layout_of(const ingot_tensor_desc& t, MatLayout& m) {
  return col_major_of(t.shape[t.ndim - 2], t.shape[t.ndim - 1], t.strides[t.ndim - 2], t.strides[t.ndim - 1], m);
}

void matmul_batch_strides(const ingot_tensor_desc& t, const ingot_tensor_desc& out, int64_t* s) {
  const int nb = out.ndim - 2, tb = t.ndim - 2, lead = nb - tb;
  for (int d = 0; d < nb; ++d) {
    const int k = d - lead;
    s[d] = (k < 0 || t.shape[k] == 1) ? 0 : t.strides[k];
  }
}

bool describe_matmul(const sdk::OpCall& c, MatmulProblem& p) {
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const ingot_tensor_desc &a = c.in[0], &b = c.in[1], &y = c.out[0];
  p = MatmulProblem{};
  p.dtype = y.dtype;
  p.m = y.shape[y.ndim - 2];
  p.n = y.shape[y.ndim - 1];
  p.k = a.shape[a.ndim - 1];
  const int nb = y.ndim - 2;
  for (int d = 0; d < nb; ++d) p.batch *= y.shape[d];
  if (p.batch * p.m * p.n == 0) return false;
  matmul_layout_of(b, p.a_lt);
  matmul_layout_of(a, p.b_lt);
  int64_t sa[INGOT_MAX_DIMS] = {}, sb[INGOT_MAX_DIMS] = {}, sy[INGOT_MAX_DIMS] = {};
  matmul_batch_strides(a, y, sa);
  matmul_batch_strides(b, y, sb);
  matmul_batch_strides(y, y, sy);
  p.looped = !(collapse(y.shape, sa, nb, p.sa) && collapse(y.shape, sb, nb, p.sb) && collapse(y.shape, sy, nb, p.sc));
  const bool relu = attr.activation == INGOT_ACT_RELU;
  p.epilogue = attr.has_bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                             : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  return true;
}

MatmulKey matmul_key(const MatmulProblem& p, int32_t device, bool tf32, const void* a, const void* b, const void* out) {
  MatmulKey k{};
  k.device = device;
  k.dtype = p.dtype;
  k.epilogue = p.epilogue;
  k.tf32 = p.dtype == INGOT_F32 && tf32;
  k.a_op = p.a_lt.op, k.a_rows = p.a_lt.rows, k.a_cols = p.a_lt.cols, k.a_ld = p.a_lt.ld;
  k.b_op = p.b_lt.op, k.b_rows = p.b_lt.rows, k.b_cols = p.b_lt.cols, k.b_ld = p.b_lt.ld;
  k.m = p.m, k.n = p.n, k.batch = p.batch;
  k.stride_a = p.sa, k.stride_b = p.sb, k.stride_c = p.sc;
  k.align_a = alignment(b), k.align_b = alignment(a), k.align_c = alignment(out);  // cuBLAS's A is our b
  return k;
}

}  // namespace ingot::cuda

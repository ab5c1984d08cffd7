// How a MATMUL call maps onto cuBLASLt, as host arithmetic on its descriptors: row-major C = A B
// is column-major C^T = B^T A^T, so each operand's strides pick its cuBLAS op (N or T) and leading
// dimension; batch dims collapse into one stride or are looped. MatmulKey names one cuBLASLt call.
#pragma once

#include <cublasLt.h>  // its enums only: nothing here calls into the library

#include <cstdint>

#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

/// One operand as cuBLASLt sees it (column-major): its op (N or T) and the stored matrix.
struct MatLayout {
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t rows = 0, cols = 0, ld = 0;
};

/// A MATMUL call in cuBLASLt's terms.
struct MatmulProblem {
  MatLayout a_lt, b_lt;  // cuBLAS A = our B^T, cuBLAS B = our A^T
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t sa = 0, sb = 0, sc = 0;  // batch strides of our a, b, out
  int32_t dtype = 0;
  int32_t epilogue = 0;  // cublasLtEpilogue_t
  bool looped = false;   // batch dims do not flatten into one stride: one call per matrix
};

/// Everything a cuBLASLt plan depends on: a plain struct of int64 (see plan_key.h).
struct MatmulKey {
  int64_t device, dtype, epilogue, tf32;
  int64_t a_op, a_rows, a_cols, a_ld;  // cuBLAS's A
  int64_t b_op, b_rows, b_cols, b_ld;  // cuBLAS's B
  int64_t m, n, batch, stride_a, stride_b, stride_c;
  int64_t align_a, align_b, align_c;  // bytes, as the heuristic is told
};

/// The last two dims of `t` (row-major [r, c]) as a column-major layout whose op gives [c, r];
/// false when neither dim is unit-stride.
bool matmul_layout_of(const ingot_tensor_desc& t, MatLayout& m);
/// Strides of an operand's batch dims over the output's batch shape (0 = broadcast).
void matmul_batch_strides(const ingot_tensor_desc& t, const ingot_tensor_desc& out, int64_t* s);
/// Fills `p` for a call matmul_supports accepted; false when the output is empty.
bool describe_matmul(const sdk::OpCall& call, MatmulProblem& p);
/// The key of one cuBLASLt call of `p` on these operands (our a, our b, the output); `tf32`
/// applies to f32 only.
MatmulKey matmul_key(const MatmulProblem& p, int32_t device, bool tf32, const void* a, const void* b, const void* out);

}  // namespace ingot::cuda

// QLINEAR's kernels around the cuBLASLt int8 GEMM (op_qlinear.cpp): cuBLASLt multiplies signed
// i8 x i8 into i32 on padded, dense operands, so x becomes x - shift (shift = 128 for a u8 x, 0 for
// i8) and both operands get zero rows and columns up to the padded sizes; the epilogue restores
// acc = sum (x - x_zp)(w - w_zp[n]) = G - w_zp[n] * rowsum(x') + (shift - x_zp) * rowsum(w - w_zp)[n]
// and writes the output kind the output's dtype asks for (i32, f32, requantized u8 / i8).
#pragma once

#include <cstdint>

#include "kernels.h"

namespace ingot::cuda {

/// Rows (x's leading dims flattened), outputs and reduction length, and the padded sizes the
/// GEMM runs on: k_pad a multiple of 16 (at least 16), n_pad a multiple of 4.
struct QLinearDims {
  int64_t m = 0, n = 0, k = 0, k_pad = 0, n_pad = 0;
};

/// Scratch buffers of one call: x' [m, k_pad] i8 and its row sums, w' [n_pad, k_pad] i8 and its
/// rows' sums of (w - w_zp), the GEMM's i32 result [m, n_pad].
struct QLinearScratch {
  int8_t* x = nullptr;
  int32_t* x_sums = nullptr;
  int8_t* w = nullptr;
  int32_t* w_sums = nullptr;
  int32_t* acc = nullptr;
};

/// Fills s.x, s.x_sums, s.w and s.w_sums from the call's x, w and w_zero_point.
void qlinear_prepare(const sdk::OpCall& call, const QLinearDims& d, const QLinearScratch& s, const Launch& launch);
/// Reads s.acc and the sums, writes the call's output.
void qlinear_epilogue(const sdk::OpCall& call, const QLinearDims& d, const QLinearScratch& s, const Launch& launch);

}  // namespace ingot::cuda

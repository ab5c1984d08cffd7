// The tiled (flash-attention-2 style) scaled dot-product attention kernels of the cpu_onednn
// plugin: the problem as op_attention.cpp hands it over, and one table of entry points per ISA.
// Each table lives in its own translation unit built for that ISA, so no AVX-512 instruction
// runs on a CPU that was not checked for it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ingot::onednn {

/// One input operand: its first element and element strides over [B, H, T, C] (0 for a
/// broadcast dim). bf16 operands hold raw bf16 bits.
struct AttnOperand {
  const void* data = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
};

struct AttnProblem {
  int64_t b = 0, h = 0, tq = 0, tk = 0, d = 0, dv = 0;
  bool bf16 = false;  ///< q, k, v, o, grad_o, gradients and an additive mask are bf16, else f32
  float scale = 1.f;
  bool causal = false;
  int64_t causal_shift = 0;  ///< key j is visible to query i iff j <= i + causal_shift
  int32_t mask = 0;          ///< 0 none, 1 bool (u8, nonzero = attend), 2 additive
  AttnOperand m;
  double dropout_p = 0.0;
  uint64_t seed = 0, offset = 0;
  /// Inputs: forward q, k, v; backward also o and grad_o (go) and lse (f32, contiguous).
  AttnOperand q, k, v, o, go;
  const float* lse_in = nullptr;
  /// Outputs, row-major contiguous: forward o_out [B, H, Tq, Dv] and lse_out [B, H, Tq];
  /// backward gq, gk, gv in the shapes of q, k, v.
  void *o_out = nullptr, *gq = nullptr, *gk = nullptr, *gv = nullptr;
  float* lse_out = nullptr;
  int threads = 1;
};

/// Fills keep[(j - j0) * ld + (i - i0)] for queries i0 <= i < i0 + rows and keys j0 <= j <
/// j0 + cols of head `bh` with the dropout factor: 1 / (1 - p) where the Philox draw keeps the
/// probability, else 0. Defined in op_attention.cpp, built for the baseline ISA.
void attention_keep_tile(const AttnProblem& p, int64_t bh, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                         float* keep, int64_t ld);

struct AttnKernels {
  /// Bytes of workspace forward / backward needs for `p` (64-byte aligned base).
  size_t (*forward_workspace)(const AttnProblem& p);
  size_t (*backward_workspace)(const AttnProblem& p);
  void (*forward)(const AttnProblem& p, void* workspace);
  void (*backward)(const AttnProblem& p, void* workspace);
};

const AttnKernels& attention_kernels_avx512();  // AVX512F/BW/DQ/VL (oneDNN's avx512_core)
const AttnKernels& attention_kernels_avx2();    // AVX2 + FMA

}  // namespace ingot::onednn

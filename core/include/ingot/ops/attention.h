// Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention) on the fused
// SCALED_DOT_PRODUCT_ATTENTION op: backward keeps q, k, v, the output and one log-sum-exp per
// query row, never the Tq x Tk probabilities.
#pragma once

#include <optional>

#include "ingot/ops/random.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// Which keys a query sees by position.
enum class CausalMask : int32_t {
  None = 0,
  UpperLeft = 1,   ///< torch's is_causal: query i sees keys j <= i
  LowerRight = 2,  ///< query i sees keys j <= i + Tk - Tq: the queries are the last Tq positions
};

struct AttentionOptions {
  CausalMask causal = CausalMask::None;
  /// Optional mask broadcastable to [B, H, Tq, Tk]: bool (true = attend) or additive, in q's dtype.
  Tensor mask;
  /// Dropout on the attention probabilities (training only; draws B*H*Tq*Tk values from `gen`).
  double dropout_p = 0.0;
  /// Multiplies q . k; 1 / sqrt(D) when not given.
  std::optional<double> scale;
  Generator* gen = nullptr;
};

struct AttentionResult {
  Tensor out;  ///< [B, H, Tq, Dv]
  Tensor lse;  ///< [B, H, Tq], f32 (f64 for f64): log-sum-exp of each row's visible scores
};

/// q [B, H, Tq, D], k [B, H, Tk, D], v [B, H, Tk, Dv] -> [B, H, Tq, Dv]. A query that sees no key
/// gives 0 (torch gives NaN there). Differentiable in q, k and v.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const AttentionOptions& options = {});
/// The same with the log-sum-exp output.
AttentionResult scaled_dot_product_attention_with_lse(const Tensor& q, const Tensor& k, const Tensor& v,
                                                      const AttentionOptions& options = {});

struct AttentionGrads {
  Tensor grad_q, grad_k, grad_v;
};
/// The backward op: the gradients of q, k and v from grad_o, the forward's inputs, output and
/// lse, with the forward's attributes (and mask, when attr.mask is set).
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_o, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& lse,
                                                     const Tensor& mask, const ingot_attr_attention& attr);

}  // namespace ingot

// Scaled dot-product attention: argument checks, torch's default scale, the mask brought to
// rank 4 and to the op's dtype rules, dropout's Philox state, and the backward op.
#include "ingot/ops/attention.h"

#include <cmath>

#include "ingot/ops/random.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

DType lse_dtype(DType t) { return t == DType::F64 ? DType::F64 : DType::F32; }

void check_qkv(const char* op, const Tensor& q, const Tensor& k, const Tensor& v) {
  detail::check_defined(q, op, "query");
  detail::check_defined(k, op, "key");
  detail::check_defined(v, op, "value");
  detail::check_op_dtype(INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION, q.dtype(), "query");
  INGOT_CHECK_AS(k.dtype() == q.dtype() && v.dtype() == q.dtype(), DTypeError,
                 "{}: query {}, key {} and value {} must share a dtype", op, dtype_name(q.dtype()),
                 dtype_name(k.dtype()), dtype_name(v.dtype()));
  INGOT_CHECK_SHAPE(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
                    "{}: query {}, key {}, value {} must be [B, H, T, D]", op, q.shape().str(), k.shape().str(),
                    v.shape().str());
  INGOT_CHECK_SHAPE(k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == q.size(1) &&
                        v.size(1) == q.size(1) && k.size(3) == q.size(3) && v.size(2) == k.size(2),
                    "{}: query {}, key {}, value {} do not fit together (same B and H, key D = query D, as many "
                    "values as keys)",
                    op, q.shape().str(), k.shape().str(), v.shape().str());
}

/// The mask as rank 4, each dim the full size or 1, bool or in q's dtype.
Tensor mask_for(const char* op, const Tensor& mask, const Tensor& q, const Tensor& k) {
  if (!mask.defined()) return mask;
  INGOT_CHECK_SHAPE(mask.dim() >= 1 && mask.dim() <= 4, "{}: mask {} must have 1 to 4 dims", op, mask.shape().str());
  Tensor m = mask;
  while (m.dim() < 4) m = m.unsqueeze(0);
  const int64_t full[4] = {q.size(0), q.size(1), q.size(2), k.size(2)};
  for (int d = 0; d < 4; ++d) {
    INGOT_CHECK_SHAPE(m.size(d) == full[d] || m.size(d) == 1, "{}: mask {} does not broadcast to [{}, {}, {}, {}]", op,
                      mask.shape().str(), full[0], full[1], full[2], full[3]);
  }
  if (m.dtype() == DType::Bool) return m;
  INGOT_CHECK_AS(is_floating(m.dtype()), DTypeError, "{}: mask is {}; expected bool or a floating dtype", op,
                 dtype_name(m.dtype()));
  return m.to(q.dtype());
}

}  // namespace

AttentionResult scaled_dot_product_attention_with_lse(const Tensor& q, const Tensor& k, const Tensor& v,
                                                      const AttentionOptions& o) {
  const char* op = "scaled_dot_product_attention";
  check_qkv(op, q, k, v);
  INGOT_CHECK(o.dropout_p >= 0.0 && o.dropout_p < 1.0, "{}: dropout_p = {} is not in [0, 1)", op, o.dropout_p);
  INGOT_CHECK(!o.scale || std::isfinite(*o.scale), "{}: scale {} is not finite", op, o.scale.value_or(0.0));
  const Tensor mask = mask_for(op, o.mask, q, k);
  auto attr = make_attr<ingot_attr_attention>();
  attr.scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(q.size(3), 1)));
  attr.causal = static_cast<int32_t>(o.causal);
  attr.mask = !mask.defined() ? 0 : (mask.dtype() == DType::Bool ? 1 : 2);
  if (o.dropout_p > 0.0) {
    Generator& g = o.gen != nullptr ? *o.gen : default_generator();
    const Generator::State s = g.next(q.size(0) * q.size(1) * q.size(2) * k.size(2));
    attr.dropout_p = o.dropout_p;
    attr.seed = s.seed;
    attr.offset = s.offset;
  }
  std::vector<Tensor> inputs{q, k, v};
  if (mask.defined()) inputs.push_back(mask);
  std::vector<Tensor> out = run_op(INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION, inputs,
                                   {OutputSpec{Shape{q.size(0), q.size(1), q.size(2), v.size(3)}, q.dtype()},
                                    OutputSpec{Shape{q.size(0), q.size(1), q.size(2)}, lse_dtype(q.dtype())}},
                                   &attr);
  return {out[0], out[1]};
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  return scaled_dot_product_attention_with_lse(q, k, v, o).out;
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_o, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out, const Tensor& lse,
                                                     const Tensor& mask, const ingot_attr_attention& attr) {
  const char* op = "scaled_dot_product_attention_backward";
  check_qkv(op, q, k, v);
  detail::check_defined(grad_o, op, "grad_out");
  INGOT_CHECK_SHAPE(grad_o.shape() == out.shape() && lse.shape() == Shape({q.size(0), q.size(1), q.size(2)}),
                    "{}: grad_out {}, out {}, lse {} do not fit query {}", op, grad_o.shape().str(), out.shape().str(),
                    lse.shape().str(), q.shape().str());
  INGOT_CHECK(attr.mask == 0 || mask.defined(), "{}: the attributes name a mask but none was given", op);
  std::vector<Tensor> inputs{grad_o.to(q.dtype()), q, k, v, out, lse};
  if (attr.mask != 0) inputs.push_back(mask);
  std::vector<Tensor> g = run_op(INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD, inputs,
                                 {OutputSpec{q.shape(), q.dtype()}, OutputSpec{k.shape(), k.dtype()},
                                  OutputSpec{v.shape(), v.dtype()}},
                                 &attr);
  return {g[0], g[1], g[2]};
}

}  // namespace ingot

// Gradient rules of every differentiable op, written only with the functional op API, each with
// its declaration of the tensors it reads (GradSaves). The kind -> rule and kind -> declaration
// tables are generated from op_table.def, so a rule named there but not defined here fails to compile.
#include "ingot/autograd/grad_rules.h"

#include <cmath>
#include <numbers>

#include "ingot/ops/ops.h"

namespace ingot {

namespace {

// A rule and, in `saves`, what it reads: an expression of GradSaves in which `attrs` (the call's
// attribute struct) and `needs` (GradCall::needs_grad) may be used. Anything a rule reads that is
// not declared throws when the rule runs (autograd/saved_tensors.h), so the declaration is
// checked by every test that runs the rule through the graph or the finite-difference checker.
#define INGOT_GRAD_RULE(name, saves)                                                                            \
  GradSaves saves_##name([[maybe_unused]] const void* attrs, [[maybe_unused]] uint64_t needs) { return saves; } \
  std::vector<Tensor> grad_##name([[maybe_unused]] const GradCall& c, [[maybe_unused]] const std::vector<Tensor>& go)

template <class... I>
constexpr uint64_t bits(I... i) {
  return (uint64_t{0} | ... | (uint64_t{1} << i));
}
/// The declaration parts: inputs(0, 1) | outputs(0).
template <class... I>
constexpr GradSaves inputs(I... i) {
  return {bits(i...), 0};
}
template <class... I>
constexpr GradSaves outputs(I... i) {
  return {0, bits(i...)};
}
constexpr GradSaves nothing{};
constexpr GradSaves operator|(GradSaves a, GradSaves b) { return {a.inputs | b.inputs, a.outputs | b.outputs}; }
/// `s` when `cond`, else nothing.
constexpr GradSaves when(bool cond, GradSaves s) { return cond ? s : nothing; }
constexpr bool needs_input(uint64_t needs, int i) { return ((needs >> i) & 1u) != 0; }

template <class A>
const A& attr_of(const GradCall& c) {
  INGOT_CHECK(c.attrs != nullptr, "grad of {}: missing attributes", op_info(c.op).name);
  return *static_cast<const A*>(c.attrs);
}

/// Gradient of a broadcast input: sum over the broadcast dims.
Tensor unbroadcast(const Tensor& g, const Tensor& input) { return sum_to_shape(g, input.shape()); }

/// Gradient before a fused activation; GELU needs the pre-activation, recomputed by `pre`.
template <class Pre>
Tensor through_activation(int32_t activation, const Tensor& g, const Tensor& y, Pre pre) {
  switch (activation) {
    case INGOT_ACT_NONE:
      return g;
    case INGOT_ACT_RELU:
      return relu_backward(g, y);
    case INGOT_ACT_GELU:
      return gelu_backward(g, pre());
    case INGOT_ACT_GELU_TANH:
      return gelu_backward(g, pre(), true);
    case INGOT_ACT_RELU6:  // torch's ReLU6 (hardtanh): no gradient where the output sits at 0 or 6
      return where(logical_and(gt(y, 0.0), lt(y, 6.0)), g, zeros_like(g));
    default:
      throw Error(fmt::format("gradient: unknown fused activation {}", activation));
  }
}

/// Gradient of a values output whose entries came from x at `indices` along `axis`.
Tensor scatter_back(const Tensor& x, int axis, const Tensor& indices, const Tensor& g) {
  return scatter_add(zeros_like(x), axis, indices, g);
}

INGOT_GRAD_RULE(none, nothing) { throw Error(fmt::format("{} is not differentiable", op_info(c.op).name)); }

// ---- unary ----
INGOT_GRAD_RULE(neg, nothing) { return {-go[0]}; }
INGOT_GRAD_RULE(abs, inputs(0)) { return {go[0] * sign(c.inputs[0])}; }
INGOT_GRAD_RULE(exp, outputs(0)) { return {go[0] * c.outputs[0]}; }
INGOT_GRAD_RULE(log, inputs(0)) { return {go[0] / c.inputs[0]}; }
INGOT_GRAD_RULE(log1p, inputs(0)) { return {go[0] / (c.inputs[0] + 1.0)}; }
INGOT_GRAD_RULE(sqrt, outputs(0)) { return {go[0] / (c.outputs[0] * 2.0)}; }
INGOT_GRAD_RULE(rsqrt, outputs(0)) {
  const Tensor& y = c.outputs[0];
  return {go[0] * (y * y * y) * -0.5};
}
INGOT_GRAD_RULE(sin, inputs(0)) { return {go[0] * cos(c.inputs[0])}; }
INGOT_GRAD_RULE(cos, inputs(0)) { return {-(go[0] * sin(c.inputs[0]))}; }
INGOT_GRAD_RULE(tanh, outputs(0)) {
  const Tensor& y = c.outputs[0];
  return {go[0] * (1.0 - y * y)};
}
INGOT_GRAD_RULE(sigmoid, outputs(0)) {
  const Tensor& y = c.outputs[0];
  return {go[0] * (y * (1.0 - y))};
}
// (relu(x) > 0 exactly where x > 0: the output serves, as in torch, and the input can go)
INGOT_GRAD_RULE(relu, outputs(0)) { return {relu_backward(go[0], c.outputs[0])}; }
INGOT_GRAD_RULE(gelu, inputs(0)) { return {gelu_backward(go[0], c.inputs[0])}; }
INGOT_GRAD_RULE(gelu_tanh, inputs(0)) { return {gelu_backward(go[0], c.inputs[0], true)}; }
INGOT_GRAD_RULE(erf, inputs(0)) {
  const Tensor& x = c.inputs[0];
  return {go[0] * exp(-(x * x)) * (2.0 / std::sqrt(std::numbers::pi))};
}
INGOT_GRAD_RULE(softplus, inputs(0)) {
  const auto& a = attr_of<ingot_attr_softplus>(c);
  const Tensor bx = c.inputs[0] * a.beta;
  return {where(gt(bx, a.threshold), go[0], go[0] * sigmoid(bx))};
}
INGOT_GRAD_RULE(zero, nothing) { return {zeros_like(c.inputs[0])}; }
INGOT_GRAD_RULE(reciprocal, outputs(0)) {
  const Tensor& y = c.outputs[0];
  return {-(go[0] * y * y)};
}
INGOT_GRAD_RULE(clamp, inputs(0)) {
  const auto& a = attr_of<ingot_attr_clamp>(c);
  const Tensor& x = c.inputs[0];
  Tensor keep;
  if (a.has_min) keep = ge(x, a.min);
  if (a.has_max) keep = keep.defined() ? logical_and(keep, le(x, a.max)) : le(x, a.max);
  return {keep.defined() ? where(keep, go[0], 0.0) : go[0]};
}

// ---- binary (broadcasting: every input gradient is summed back to the input's shape) ----
INGOT_GRAD_RULE(add, nothing) { return {unbroadcast(go[0], c.inputs[0]), unbroadcast(go[0], c.inputs[1])}; }
INGOT_GRAD_RULE(sub, nothing) { return {unbroadcast(go[0], c.inputs[0]), unbroadcast(-go[0], c.inputs[1])}; }
// (x * mask: the mask's gradient is not needed, so x is not kept)
INGOT_GRAD_RULE(mul, when(needs_input(needs, 0), inputs(1)) | when(needs_input(needs, 1), inputs(0))) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return {c.needs(0) ? unbroadcast(go[0] * b, a) : Tensor(), c.needs(1) ? unbroadcast(go[0] * a, b) : Tensor()};
}
INGOT_GRAD_RULE(div, inputs(1) | when(needs_input(needs, 1), outputs(0))) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return {c.needs(0) ? unbroadcast(go[0] / b, a) : Tensor(),
          c.needs(1) ? unbroadcast(-(go[0] * c.outputs[0]) / b, b) : Tensor()};
}
INGOT_GRAD_RULE(pow, inputs(0, 1) | outputs(0)) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &y = c.outputs[0], &g = go[0];
  // torch's conventions at the edges: d/da is 0 where b == 0; d/db is 0 where a == 0 and b >= 0.
  const Tensor ga = where(eq(b, 0.0), 0.0, g * b * pow(a, b - 1.0));
  const Tensor gb = where(logical_and(eq(a, 0.0), ge(b, 0.0)), 0.0, g * y * log(a));
  return {unbroadcast(ga, a), unbroadcast(gb, b)};
}

/// maximum / minimum: the gradient goes to the selected input, split evenly on ties (torch).
std::vector<Tensor> select_grad(const GradCall& c, const Tensor& g, const Tensor& a_wins) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  const Tensor ga = where(a_wins, g, where(eq(a, b), g * 0.5, 0.0));
  return {unbroadcast(ga, a), unbroadcast(g - ga, b)};
}
INGOT_GRAD_RULE(maximum, inputs(0, 1)) { return select_grad(c, go[0], gt(c.inputs[0], c.inputs[1])); }
INGOT_GRAD_RULE(minimum, inputs(0, 1)) { return select_grad(c, go[0], lt(c.inputs[0], c.inputs[1])); }
INGOT_GRAD_RULE(where, inputs(0)) {
  const Tensor& cond = c.inputs[0];
  return {Tensor(), unbroadcast(where(cond, go[0], 0.0), c.inputs[1]),
          unbroadcast(where(cond, 0.0, go[0]), c.inputs[2])};
}

// ---- reductions (the op's output keeps the input's rank, reduced dims = 1) ----
INGOT_GRAD_RULE(sum, nothing) {
  const Tensor& x = c.inputs[0];
  return {go[0].reshape(c.outputs[0].shape()).expand(x.shape()).contiguous()};
}
INGOT_GRAD_RULE(mean, nothing) {
  const Tensor& x = c.inputs[0];
  const int64_t n_out = c.outputs[0].numel();
  const double count = n_out > 0 ? static_cast<double>(x.numel()) / static_cast<double>(n_out) : 1.0;
  return {go[0].reshape(c.outputs[0].shape()).expand(x.shape()) / count};
}
/// amax / amin: the gradient is shared evenly by the elements equal to the extremum.
std::vector<Tensor> extremum_grad(const GradCall& c, const Tensor& g) {
  const Tensor &x = c.inputs[0], &y = c.outputs[0];
  const Tensor hit = eq(x, y);
  const Tensor count = sum_to_shape(hit.to(x.dtype()), y.shape());
  return {where(hit, g.reshape(y.shape()) / count, 0.0)};
}
INGOT_GRAD_RULE(max, inputs(0) | outputs(0)) { return extremum_grad(c, go[0]); }
INGOT_GRAD_RULE(min, inputs(0) | outputs(0)) { return extremum_grad(c, go[0]); }

// ---- linear algebra ----
/// Gradient of a matmul's 2-D right operand b [K, N], in b's own memory order: Linear passes its
/// [out, in] weight transposed, so the gradient is computed as (gp^T a)^T and the transpose back
/// to [out, in] is contiguous (no copy when it is accumulated). Batch dims of a fold into rows.
Tensor matmul_weight_grad(const Tensor& a, const Tensor& b, const Tensor& gp) {
  if (b.dim() != 2 || a.dim() < 2) return unbroadcast(matmul(a.transpose(-2, -1), gp), b);
  const int64_t k = b.shape()[0], n = b.shape()[1];
  const Tensor a2 = a.dim() == 2 ? a : a.reshape({-1, k});
  const Tensor g2 = gp.dim() == 2 ? gp : gp.reshape({-1, n});
  const bool transposed = b.strides()[0] == 1 && b.strides()[1] == k && k > 1 && n > 1;
  return transposed ? matmul(g2.transpose(0, 1), a2).transpose(0, 1) : matmul(a2.transpose(0, 1), g2);
}

/// What matmul and conv2d read: the weight for the input's gradient, the input for the weight's,
/// the output behind a fused ReLU or ReLU6, and everything behind a fused GELU (its pre-activation is
/// recomputed). The bias gradient needs only shapes.
template <class A>
GradSaves fused_saves(const void* attrs, uint64_t needs) {
  if (attrs == nullptr) return nothing;  // the rule refuses the call
  const A& a = *static_cast<const A*>(attrs);
  if (a.activation == INGOT_ACT_GELU || a.activation == INGOT_ACT_GELU_TANH) {
    return inputs(0, 1) | when(a.has_bias != 0, inputs(2));
  }
  return when(needs_input(needs, 0), inputs(1)) | when(needs_input(needs, 1), inputs(0)) |
         when(a.activation == INGOT_ACT_RELU || a.activation == INGOT_ACT_RELU6, outputs(0));
}

INGOT_GRAD_RULE(matmul, fused_saves<ingot_attr_matmul>(attrs, needs)) {
  const auto& attr = attr_of<ingot_attr_matmul>(c);
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  const Tensor bias = attr.has_bias ? c.inputs[2] : Tensor();
  const Tensor gp =
      through_activation(attr.activation, go[0], c.outputs[0], [&] { return matmul_ex(a, b, bias, Activation::None); });
  std::vector<Tensor> grads{c.needs(0) ? unbroadcast(matmul(gp, b.transpose(-2, -1)), a) : Tensor(),
                            c.needs(1) ? matmul_weight_grad(a, b, gp) : Tensor()};
  if (attr.has_bias) grads.push_back(c.needs(2) ? sum_to_shape(gp, bias.shape()) : Tensor());
  return grads;
}
INGOT_GRAD_RULE(conv2d, fused_saves<ingot_attr_conv2d>(attrs, needs)) {
  const auto& attr = attr_of<ingot_attr_conv2d>(c);
  const Conv2dParams p = conv2d_params(attr);
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const Tensor bias = attr.has_bias ? c.inputs[2] : Tensor();
  const Tensor gp =
      through_activation(attr.activation, go[0], c.outputs[0], [&] { return conv2d(x, w, bias, p, Activation::None); });
  std::vector<Tensor> grads{c.needs(0) ? conv2d_backward_data(gp, w, x.shape(), p) : Tensor(),
                            c.needs(1) ? conv2d_backward_weight(x, gp, w.shape(), p) : Tensor()};
  if (attr.has_bias) grads.push_back(c.needs(2) ? sum(gp, {0, 2, 3}) : Tensor());
  return grads;
}

// ---- pooling ----
INGOT_GRAD_RULE(max_pool2d, inputs(0) | outputs(1)) {
  const Pool2dParams p = pool2d_params(attr_of<ingot_attr_pool2d>(c));
  return {max_pool2d_backward(go[0], c.inputs[0], c.outputs[1], p)};
}
INGOT_GRAD_RULE(avg_pool2d, nothing) {
  const Pool2dParams p = pool2d_params(attr_of<ingot_attr_pool2d>(c));
  return {avg_pool2d_backward(go[0], c.inputs[0].shape(), p)};
}

// ---- shape and indexing ----
INGOT_GRAD_RULE(concat, nothing) {
  const int axis = attr_of<ingot_attr_axis>(c).axis;
  std::vector<Tensor> grads;
  int64_t start = 0;
  for (const Tensor& x : c.inputs) {
    const int64_t n = x.shape()[axis];
    grads.push_back(go[0].slice(axis, start, start + n).contiguous());
    start += n;
  }
  return grads;
}
INGOT_GRAD_RULE(pad, nothing) {
  const auto& a = attr_of<ingot_attr_pad>(c);
  const Tensor& x = c.inputs[0];
  Tensor g = go[0];
  for (int d = 0; d < x.dim(); ++d) g = g.slice(d, a.pads[2 * d], a.pads[2 * d] + x.shape()[d]);
  return {g.contiguous()};
}
INGOT_GRAD_RULE(gather, inputs(1)) {
  const int axis = attr_of<ingot_attr_axis>(c).axis;
  return {scatter_back(c.inputs[0], axis, c.inputs[1], go[0]), Tensor()};
}
INGOT_GRAD_RULE(index_select, inputs(1)) {
  const int axis = attr_of<ingot_attr_axis>(c).axis;
  const Tensor &x = c.inputs[0], &index = c.inputs[1];
  // Spread the 1-D index along the other dims so that scatter_add can add every slice back: a
  // broadcast view (stride 0 off the axis), which backends read without a copy.
  Shape lane(std::vector<int64_t>(x.dim(), 1));
  lane[axis] = index.numel();
  const Tensor spread = index.reshape(lane).expand(go[0].shape());
  return {scatter_back(x, axis, spread, go[0]), Tensor()};
}
INGOT_GRAD_RULE(scatter_add, inputs(1)) {
  const int axis = attr_of<ingot_attr_axis>(c).axis;
  const Tensor &index = c.inputs[1], &src = c.inputs[2];
  Tensor gsrc = gather(go[0], axis, index);
  if (!(index.shape() == src.shape())) {  // src entries beyond the index's extent were not used
    std::vector<int64_t> pads;
    for (int d = src.dim() - 1; d >= 0; --d) {
      pads.push_back(0);
      pads.push_back(src.shape()[d] - index.shape()[d]);
    }
    gsrc = pad(gsrc, pads);
  }
  return {go[0], Tensor(), gsrc};
}
INGOT_GRAD_RULE(sort, outputs(1)) {
  const int axis = attr_of<ingot_attr_sort>(c).axis;
  return {scatter_back(c.inputs[0], axis, c.outputs[1], go[0])};
}
INGOT_GRAD_RULE(topk, outputs(1)) {
  const int axis = attr_of<ingot_attr_topk>(c).axis;
  return {scatter_back(c.inputs[0], axis, c.outputs[1], go[0])};
}

// ---- copies and casts ----
INGOT_GRAD_RULE(copy, nothing) { return {go[0]}; }
INGOT_GRAD_RULE(cast, nothing) {
  const DType t = c.inputs[0].dtype();
  return {is_floating(t) ? go[0].to(t) : Tensor()};
}

// ---- normalisation ----
INGOT_GRAD_RULE(softmax, outputs(0)) {
  return {softmax_backward(c.outputs[0], go[0], attr_of<ingot_attr_axis>(c).axis)};
}
INGOT_GRAD_RULE(log_softmax, outputs(0)) {
  return {log_softmax_backward(c.outputs[0], go[0], attr_of<ingot_attr_axis>(c).axis)};
}
INGOT_GRAD_RULE(layer_norm, inputs(0, 1) | outputs(1, 2)) {
  const auto& a = attr_of<ingot_attr_layer_norm>(c);
  const Tensor& x = c.inputs[0];
  const Shape normalized(x.shape().data() + (x.dim() - a.normalized_ndim), a.normalized_ndim);
  const NormGrads r = layer_norm_backward(go[0], x, c.outputs[1], c.outputs[2], c.inputs[1], normalized, a.eps);
  if (!a.has_affine) return {r.grad_x, Tensor(), Tensor()};
  return {r.grad_x, r.grad_weight, r.grad_bias};
}
INGOT_GRAD_RULE(batch_norm, inputs(0, 1) | outputs(1, 2)) {
  const auto& a = attr_of<ingot_attr_batch_norm>(c);
  const NormGrads r =
      batch_norm_backward(go[0], c.inputs[0], c.inputs[1], c.outputs[1], c.outputs[2], a.training != 0, a.eps);
  if (!a.has_affine) return {r.grad_x, Tensor(), Tensor(), Tensor(), Tensor()};
  return {r.grad_x, r.grad_weight, r.grad_bias, Tensor(), Tensor()};
}

// ---- attention and the fused loss ----
INGOT_GRAD_RULE(attention, inputs(0, 1, 2) | outputs(0, 1) |
                               when(attrs != nullptr && static_cast<const ingot_attr_attention*>(attrs)->mask != 0,
                                    inputs(3))) {
  const auto& a = attr_of<ingot_attr_attention>(c);
  const Tensor mask = a.mask != 0 ? c.inputs[3] : Tensor();
  const Tensor go0 = go[0].defined() ? go[0] : zeros_like(c.outputs[0]);
  const AttentionGrads g = scaled_dot_product_attention_backward(go0, c.inputs[0], c.inputs[1], c.inputs[2],
                                                                 c.outputs[0], c.outputs[1], mask, a);
  std::vector<Tensor> grads{g.grad_q, g.grad_k, g.grad_v};
  if (a.mask != 0) grads.emplace_back();  // the mask is not differentiated
  return grads;
}
INGOT_GRAD_RULE(cross_entropy, inputs(0, 1) | outputs(1)) {
  const auto& a = attr_of<ingot_attr_cross_entropy>(c);
  return {cross_entropy_rows_backward(go[0], c.inputs[0], c.inputs[1], c.outputs[1], a), Tensor()};
}

INGOT_GRAD_RULE(dropout, outputs(1)) {
  const double p = attr_of<ingot_attr_rng>(c).a;
  if (p >= 1.0) return {zeros_like(c.inputs[0])};
  return {where(c.outputs[1], go[0] * (1.0 / (1.0 - p)), 0.0)};
}

#undef INGOT_GRAD_RULE

constexpr GradRule kRules[] = {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) &grad_##grad,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
};
static_assert(sizeof(kRules) / sizeof(kRules[0]) == INGOT_OP_COUNT, "one gradient rule per op");

using SavesFn = GradSaves (*)(const void* attrs, uint64_t needs);
constexpr SavesFn kSaves[] = {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) &saves_##grad,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
};
static_assert(sizeof(kSaves) / sizeof(kSaves[0]) == INGOT_OP_COUNT, "one declaration per op");

}  // namespace

GradRule grad_rule(OpKind op) {
  INGOT_CHECK(op >= 0 && op < INGOT_OP_COUNT, "grad_rule: op kind {} out of range", static_cast<int>(op));
  const GradRule rule = kRules[op];
  return rule == &grad_none ? nullptr : rule;
}

GradSaves grad_saves(OpKind op, const void* attrs, uint64_t needs_grad) {
  INGOT_CHECK(op >= 0 && op < INGOT_OP_COUNT, "grad_saves: op kind {} out of range", static_cast<int>(op));
  return kSaves[op](attrs, needs_grad);
}

bool has_grad_saves(OpKind op) {
  return op >= 0 && op < INGOT_OP_COUNT && kRules[op] != &grad_none && kSaves[op] != &saves_none;
}

}  // namespace ingot

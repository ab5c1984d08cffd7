// Finite-difference checks of every gradient rule in f64 on the reference backend: for a random
// upstream gradient g, d<g, f(x)>/dx_i by central differences must match the rule's output.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "grad_check.h"
#include "ingot/autograd/grad_rules.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/dispatch.h"
#include "test_support.h"

namespace ingot {
namespace {

using test::attr;
using test::away0;
using test::index;
using test::noncontig;
using test::rnd;
using Case = test::GradCase;

// ---- case builders ----
Case unary(const std::string& name, OpKind op, const Tensor& x, std::shared_ptr<const void> a = nullptr) {
  return {name, op, {x}, {OutputSpec{x.shape(), DType::F64}}, std::move(a)};
}
Case binary(const std::string& name, OpKind op, const Tensor& a, const Tensor& b) {
  return {name, op, {a, b}, {OutputSpec{broadcast_shapes(a.shape(), b.shape()), DType::F64}}, nullptr};
}
Case one(const std::string& name, OpKind op, std::vector<Tensor> in, const Shape& out,
         std::shared_ptr<const void> a = nullptr) {
  return {name, op, std::move(in), {OutputSpec{out, DType::F64}}, std::move(a)};
}

std::vector<Case> elementwise_cases() {
  auto softplus_attr = make_attr<ingot_attr_softplus>();
  softplus_attr.beta = 2.0;
  softplus_attr.threshold = 1.0;  // some inputs take the linear branch
  auto clamp_both = make_attr<ingot_attr_clamp>();
  clamp_both.has_min = clamp_both.has_max = 1;
  clamp_both.min = -0.5;
  clamp_both.max = 0.5;
  auto clamp_min = make_attr<ingot_attr_clamp>();
  clamp_min.has_min = 1;
  clamp_min.min = 0.0;
  const Tensor clamp_x = Tensor::from_vector<double>({-0.9, -0.3, 0.1, 0.7, 0.45, -0.6}, Shape{2, 3});
  return {
      unary("neg", INGOT_OP_NEG, rnd({2, 3})),
      unary("abs", INGOT_OP_ABS, away0({2, 3})),
      unary("exp", INGOT_OP_EXP, noncontig({3, 2})),
      unary("log", INGOT_OP_LOG, rnd({2, 3}, 0.5, 2.0)),
      unary("log1p", INGOT_OP_LOG1P, rnd({2, 3}, -0.5, 2.0)),
      unary("sqrt", INGOT_OP_SQRT, rnd({2, 3}, 0.5, 2.0)),
      unary("rsqrt", INGOT_OP_RSQRT, rnd({2, 3}, 0.5, 2.0)),
      unary("sin", INGOT_OP_SIN, rnd({2, 3}, -3, 3)),
      unary("cos", INGOT_OP_COS, rnd({2, 3}, -3, 3)),
      unary("tanh", INGOT_OP_TANH, rnd({2, 3}, -2, 2)),
      unary("sigmoid", INGOT_OP_SIGMOID, noncontig({2, 3}, -3, 3)),
      unary("relu", INGOT_OP_RELU, away0({2, 3})),
      unary("gelu", INGOT_OP_GELU, rnd({2, 3}, -3, 3)),
      unary("gelu_tanh", INGOT_OP_GELU_TANH, rnd({2, 3}, -3, 3)),
      unary("erf", INGOT_OP_ERF, rnd({2, 3}, -2, 2)),
      unary("softplus", INGOT_OP_SOFTPLUS, rnd({2, 4}, -1.5, 1.5), attr(softplus_attr)),
      unary("sign", INGOT_OP_SIGN, away0({2, 3})),
      unary("floor", INGOT_OP_FLOOR, rnd({2, 3}, 0.1, 0.9)),
      unary("ceil", INGOT_OP_CEIL, rnd({2, 3}, 0.1, 0.9)),
      unary("round", INGOT_OP_ROUND, rnd({2, 3}, 0.1, 0.4)),
      unary("reciprocal", INGOT_OP_RECIPROCAL, rnd({2, 3}, 0.5, 2.0)),
      unary("clamp both", INGOT_OP_CLAMP, clamp_x, attr(clamp_both)),
      unary("clamp min", INGOT_OP_CLAMP, clamp_x, attr(clamp_min)),
      binary("add broadcast", INGOT_OP_ADD, rnd({2, 3}), rnd({3})),
      binary("add both broadcast", INGOT_OP_ADD, rnd({2, 1, 4}), rnd({3, 1})),
      binary("sub", INGOT_OP_SUB, noncontig({2, 3}), rnd({1, 3})),
      binary("mul broadcast", INGOT_OP_MUL, rnd({2, 1, 4}), noncontig({3, 4})),
      binary("div", INGOT_OP_DIV, rnd({2, 3}), rnd({2, 1}, 0.5, 1.5)),
      binary("pow", INGOT_OP_POW, rnd({2, 3}, 0.5, 1.5), rnd({3}, -1.0, 2.0)),
      binary("maximum", INGOT_OP_MAXIMUM, rnd({2, 3}), rnd({3})),
      binary("minimum", INGOT_OP_MINIMUM, noncontig({2, 3}), rnd({2, 3})),
      one("where", INGOT_OP_WHERE, {gt(rnd({3, 1}), 0.0), rnd({1, 4}), rnd({3, 4})}, {3, 4}),
  };
}

std::vector<Case> reduce_cases() {
  return {
      one("sum dims", INGOT_OP_SUM, {rnd({2, 3, 4})}, {2, 1, 4}),
      one("sum all", INGOT_OP_SUM, {noncontig({3, 4})}, {1, 1}),
      one("mean", INGOT_OP_MEAN, {rnd({2, 3, 4})}, {1, 3, 1}),
      one("max", INGOT_OP_MAX, {rnd({3, 4})}, {3, 1}),
      one("min", INGOT_OP_MIN, {noncontig({3, 4})}, {1, 4}),
  };
}

std::vector<Case> linalg_cases() {
  auto plain = make_attr<ingot_attr_matmul>();
  auto fused_relu = make_attr<ingot_attr_matmul>();
  fused_relu.has_bias = 1;
  fused_relu.activation = INGOT_ACT_RELU;
  auto fused_gelu = fused_relu;
  fused_gelu.activation = INGOT_ACT_GELU;
  auto fused_relu6 = fused_relu;
  fused_relu6.activation = INGOT_ACT_RELU6;
  Conv2dParams p;
  p.stride = {2, 1};
  p.padding = {1, 1};
  p.groups = 2;
  const Shape x1{2, 4, 5, 5}, w1{6, 2, 3, 3};
  Conv2dParams q;
  q.dilation = {2, 1};
  q.padding = {1, 0};
  const Shape x2{1, 2, 6, 5}, w2{3, 2, 2, 3};
  return {
      one("matmul", INGOT_OP_MATMUL, {rnd({3, 4}), rnd({4, 2})}, {3, 2}, attr(plain)),
      one("matmul batch broadcast", INGOT_OP_MATMUL, {rnd({2, 1, 3, 4}), noncontig({3, 4, 2})}, {2, 3, 3, 2},
          attr(plain)),
      one("matmul bias relu", INGOT_OP_MATMUL, {rnd({2, 3, 4}), rnd({4, 5}), rnd({5})}, {2, 3, 5}, attr(fused_relu)),
      // inputs in [-2.5, 2.5]: outputs on both sides of 0 and of 6
      one("matmul bias relu6", INGOT_OP_MATMUL, {rnd({3, 6}, -2.5, 2.5), rnd({6, 5}, -2.5, 2.5), rnd({5})}, {3, 5},
          attr(fused_relu6)),
      one("matmul bias gelu", INGOT_OP_MATMUL, {rnd({3, 4}), rnd({4, 5}), rnd({5})}, {3, 5}, attr(fused_gelu)),
      one("conv2d groups stride bias", INGOT_OP_CONV2D, {rnd(x1), rnd(w1), rnd({6})}, conv2d_output_shape(x1, w1, p),
          attr(conv2d_attr(p, true, Activation::None))),
      one("conv2d dilation gelu", INGOT_OP_CONV2D, {rnd(x2), rnd(w2), rnd({3})}, conv2d_output_shape(x2, w2, q),
          attr(conv2d_attr(q, true, Activation::Gelu))),
      one("conv2d bias relu6", INGOT_OP_CONV2D, {rnd(x2, -2, 2), rnd(w2, -2, 2), rnd({3})},
          conv2d_output_shape(x2, w2, q), attr(conv2d_attr(q, true, Activation::Relu6))),
      one("conv2d relu no bias", INGOT_OP_CONV2D, {rnd(x2), rnd(w2)}, conv2d_output_shape(x2, w2, q),
          attr(conv2d_attr(q, false, Activation::Relu))),
  };
}

std::vector<Case> pool_cases() {
  Pool2dParams mp;
  mp.kernel = {3, 3};
  mp.stride = {2, 2};
  mp.padding = {1, 1};
  mp.ceil_mode = true;
  Pool2dParams ap;
  ap.kernel = {2, 3};
  ap.stride = {2, 2};
  ap.padding = {1, 1};
  ap.ceil_mode = true;
  ap.count_include_pad = false;
  const Shape x{1, 2, 5, 6};
  const Shape ym = pool2d_output_shape(x, mp), ya = pool2d_output_shape(x, ap);
  Case max_pool{"max_pool2d",
                INGOT_OP_MAX_POOL2D,
                {rnd(x)},
                {OutputSpec{ym, DType::F64}, OutputSpec{ym, DType::I64}},
                attr(pool2d_attr(mp))};
  return {max_pool, one("avg_pool2d", INGOT_OP_AVG_POOL2D, {rnd(x)}, ya, attr(pool2d_attr(ap)))};
}

std::vector<Case> indexing_cases() {
  auto axis = [](int a) {
    auto at = make_attr<ingot_attr_axis>();
    at.axis = a;
    return attr(at);
  };
  auto pad_attr = make_attr<ingot_attr_pad>();
  pad_attr.pads[0] = 1;  // dim 0: 1 before
  pad_attr.pads[2] = 2;  // dim 1: 2 before, 1 after
  pad_attr.pads[3] = 1;
  pad_attr.value = 0.5;
  auto sort_attr = make_attr<ingot_attr_sort>();
  sort_attr.axis = 1;
  sort_attr.descending = 1;
  auto topk_attr = make_attr<ingot_attr_topk>();
  topk_attr.axis = 0;
  topk_attr.k = 2;
  topk_attr.largest = 1;
  topk_attr.sorted = 1;
  Case sort_case{"sort",
                 INGOT_OP_SORT,
                 {rnd({3, 4})},
                 {OutputSpec{{3, 4}, DType::F64}, OutputSpec{{3, 4}, DType::I64}},
                 attr(sort_attr)};
  Case topk_case{"topk",
                 INGOT_OP_TOPK,
                 {noncontig({4, 3})},
                 {OutputSpec{{2, 3}, DType::F64}, OutputSpec{{2, 3}, DType::I64}},
                 attr(topk_attr)};
  return {
      one("concat", INGOT_OP_CONCAT, {rnd({2, 1}), noncontig({2, 3}), rnd({2, 2})}, {2, 6}, axis(1)),
      one("pad", INGOT_OP_PAD, {rnd({2, 3})}, {3, 6}, attr(pad_attr)),
      one("gather", INGOT_OP_GATHER, {rnd({3, 4}), index({2, 4}, 3)}, {2, 4}, axis(0)),
      one("index_select", INGOT_OP_INDEX_SELECT, {rnd({3, 4}), Tensor::from_vector<int64_t>({3, 0, 3}, {3})}, {3, 3},
          axis(1)),
      one("scatter_add", INGOT_OP_SCATTER_ADD, {rnd({3, 4}), index({2, 3}, 4), rnd({2, 4})}, {3, 4}, axis(1)),
      sort_case,
      topk_case,
  };
}

std::vector<Case> norm_cases() {
  auto axis = [](int a) {
    auto at = make_attr<ingot_attr_axis>();
    at.axis = a;
    return attr(at);
  };
  auto ln = make_attr<ingot_attr_layer_norm>();
  ln.normalized_ndim = 2;
  ln.has_affine = 1;
  ln.eps = 1e-5;
  auto ln_plain = ln;
  ln_plain.has_affine = 0;
  ln_plain.normalized_ndim = 1;
  auto bn = make_attr<ingot_attr_batch_norm>();
  bn.training = 1;
  bn.has_affine = 1;
  bn.eps = 1e-5;
  bn.momentum = 0.1;
  auto bn_eval = bn;
  bn_eval.training = 0;
  const Shape stat{2, 1, 1};
  Case layer{"layer_norm",
             INGOT_OP_LAYER_NORM,
             {rnd({2, 3, 4}), rnd({3, 4}), rnd({3, 4})},
             {OutputSpec{{2, 3, 4}, DType::F64}, OutputSpec{stat, DType::F64}, OutputSpec{stat, DType::F64}},
             attr(ln)};
  Case layer_plain{"layer_norm without affine",
                   INGOT_OP_LAYER_NORM,
                   {noncontig({3, 4}), ones({4}, DType::F32), zeros({4}, DType::F32)},
                   {OutputSpec{{3, 4}, DType::F64}, OutputSpec{{3, 1}, DType::F64}, OutputSpec{{3, 1}, DType::F64}},
                   attr(ln_plain)};
  const Shape c{3};
  const auto stats = [&] { return std::vector<Tensor>{zeros(c, DType::F32), rnd(c, 0.5, 1.5).to(DType::F32)}; };
  auto rs = stats();
  Case batch{"batch_norm training",
             INGOT_OP_BATCH_NORM,
             {rnd({4, 3, 2}), rnd(c), rnd(c), rs[0], rs[1]},
             {OutputSpec{{4, 3, 2}, DType::F64}, OutputSpec{c, DType::F64}, OutputSpec{c, DType::F64}},
             attr(bn)};
  auto re = stats();
  Case batch_eval{"batch_norm eval",
                  INGOT_OP_BATCH_NORM,
                  {rnd({2, 3, 2, 2}), rnd(c), rnd(c), re[0], re[1]},
                  {OutputSpec{{2, 3, 2, 2}, DType::F64}, OutputSpec{c, DType::F64}, OutputSpec{c, DType::F64}},
                  attr(bn_eval)};
  return {
      one("softmax", INGOT_OP_SOFTMAX, {rnd({3, 4}, -2, 2)}, {3, 4}, axis(1)),
      one("log_softmax", INGOT_OP_LOG_SOFTMAX, {noncontig({3, 4}, -2, 2)}, {3, 4}, axis(0)),
      layer,
      layer_plain,
      batch,
      batch_eval,
  };
}

std::vector<Case> copy_cases() {
  return {
      unary("copy", INGOT_OP_COPY, noncontig({2, 3})),
      unary("cast", INGOT_OP_CAST, rnd({2, 3})),
  };
}

std::vector<Case> random_cases() {
  auto a = make_attr<ingot_attr_rng>();
  a.seed = 7;
  a.offset = 3;
  a.a = 0.4;  // drop probability; the fixed (seed, offset) keeps the mask equal across calls
  const Shape x{3, 5};
  return {Case{"dropout", INGOT_OP_DROPOUT, {rnd(x)}, {OutputSpec{x, DType::F64}, OutputSpec{x, DType::Bool}}, attr(a)}};
}

std::vector<Case> attention_cases() {
  const auto sdpa = [](const std::string& name, std::vector<Tensor> in, const ingot_attr_attention& a) {
    const Shape& q = in[0].shape();
    const int64_t dv = in[2].shape()[3];
    Case c{name,
           INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION,
           std::move(in),
           {OutputSpec{{q[0], q[1], q[2], dv}, DType::F64}, OutputSpec{{q[0], q[1], q[2]}, DType::F64}},
           attr(a)};
    return c;
  };
  auto plain = make_attr<ingot_attr_attention>();
  plain.scale = 0.5;
  auto causal = plain;
  causal.causal = 2;  // lower right: 3 queries over 5 keys
  causal.mask = 2;    // and an additive mask broadcast over the batch and the heads
  auto masked = plain;
  masked.causal = 1;
  masked.mask = 1;  // a boolean mask per batch row, broadcast over heads and queries
  auto dropped = plain;
  dropped.dropout_p = 0.3;  // a fixed (seed, offset): the same keep mask on every call
  dropped.seed = 11;
  dropped.offset = 4;
  Tensor keep = Tensor::from_vector<bool>({true, false, true, true, true, true, true, false, true, true}, {2, 1, 1, 5});
  auto ce = make_attr<ingot_attr_cross_entropy>();
  ce.ignore_index = -100;
  auto smooth = ce;
  smooth.label_smoothing = 0.2;
  const Tensor target = Tensor::from_vector<int64_t>({2, -100, 0, 4}, {4});
  const auto loss = [&](const std::string& name, const Tensor& logits, const ingot_attr_cross_entropy& a) {
    return Case{name,
                INGOT_OP_CROSS_ENTROPY,
                {logits, target},
                {OutputSpec{{4}, DType::F64}, OutputSpec{{4}, DType::F64}},
                attr(a)};
  };
  Case additive = sdpa("sdpa lower-right causal, additive mask",
                       {rnd({2, 1, 3, 2}), rnd({2, 1, 5, 2}), rnd({2, 1, 5, 2}), rnd({1, 1, 3, 5})}, causal);
  additive.constant_inputs = 1u << 3;  // masks are constants: no gradient (torch would give one)
  return {
      sdpa("sdpa", {rnd({1, 2, 3, 4}), rnd({1, 2, 5, 4}), noncontig({1, 2, 5, 3})}, plain),
      additive,
      sdpa("sdpa upper-left causal, bool mask", {rnd({2, 2, 4, 3}), rnd({2, 2, 5, 3}), rnd({2, 2, 5, 2}), keep}, masked),
      sdpa("sdpa dropout", {rnd({1, 2, 3, 2}), rnd({1, 2, 4, 2}), rnd({1, 2, 4, 3})}, dropped),
      loss("cross_entropy", rnd({4, 5}, -2, 2), ce),
      loss("cross_entropy label smoothing", noncontig({4, 5}, -2, 2), smooth),
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> all;
  for (auto part :
       {elementwise_cases, reduce_cases, linalg_cases, pool_cases, indexing_cases, norm_cases, copy_cases,
        random_cases, attention_cases}) {
    for (Case& c : part()) all.push_back(std::move(c));
  }
  return all;
}

}  // namespace

std::vector<test::GradCase> test::all_grad_cases() { return all_cases(); }

TEST_CASE("every op with a gradient rule has a finite-difference case", "[autograd][grad]") {
  std::set<int> covered;
  for (const Case& c : all_cases()) covered.insert(c.op);
  for (int k = 0; k < kOpCount; ++k) {
    const auto op = static_cast<OpKind>(k);
    INFO(op_info(op).name);
    CHECK((grad_rule(op) != nullptr) == op_info(op).differentiable);
    if (grad_rule(op) != nullptr) CHECK(covered.count(k) == 1);
  }
}

TEST_CASE("gradient rules match central differences in f64", "[autograd][grad]") {
  for (const Case& c : all_cases()) {
    SECTION(c.name) { test::check_grad_case(c); }
  }
}

TEST_CASE("gradient rules keep float32 gradients in float32", "[autograd][grad]") {
  for (Case c : all_cases()) {
    INFO("case " << c.name);
    for (Tensor& x : c.inputs) {
      if (x.dtype() == DType::F64) x = x.to(DType::F32);
    }
    for (OutputSpec& o : c.outputs) {
      if (o.dtype == DType::F64) o.dtype = DType::F32;
    }
    const std::vector<Tensor> ys = run_op(c.op, c.inputs, c.outputs, c.attrs.get());
    std::vector<Tensor> gos(ys.size());
    for (int k = 0; k < c.n_grad_outputs; ++k) gos[k] = ones_like(ys[k]);
    const std::vector<Tensor> grads = grad_rule(c.op)(GradCall{c.op, c.inputs, ys, c.attrs.get()}, gos);
    for (size_t k = 0; k < grads.size(); ++k) {
      if (!grads[k].defined()) continue;
      CHECK(grads[k].dtype() == DType::F32);
      CHECK(grads[k].shape() == c.inputs[k].shape());
    }
  }
}

TEST_CASE("cast's gradient goes back to the input dtype, integer inputs get none", "[autograd][grad]") {
  const Tensor x = Tensor::from_vector<float>({1.f, 2.f}, {2});
  const Tensor y = x.to(DType::F64);
  const GradRule rule = grad_rule(INGOT_OP_CAST);
  const auto g = rule(GradCall{INGOT_OP_CAST, {x}, {y}, nullptr}, {ones({2}, DType::F64)});
  REQUIRE(g[0].dtype() == DType::F32);
  const Tensor xi = Tensor::from_vector<int64_t>({1, 2}, {2});
  const auto gi = rule(GradCall{INGOT_OP_CAST, {xi}, {xi.to(DType::F64)}, nullptr}, {ones({2}, DType::F64)});
  CHECK_FALSE(gi[0].defined());
}

TEST_CASE("maximum splits the gradient evenly on ties, like torch", "[autograd][grad]") {
  const Tensor a = Tensor::from_vector<double>({1.0, 2.0, 3.0}, {3});
  const Tensor b = Tensor::from_vector<double>({1.0, 5.0, 0.0}, {3});
  const GradRule rule = grad_rule(INGOT_OP_MAXIMUM);
  const auto g = rule(GradCall{INGOT_OP_MAXIMUM, {a, b}, {maximum(a, b)}, nullptr}, {ones({3}, DType::F64)});
  CHECK(g[0].to_vector<double>() == std::vector<double>{0.5, 0.0, 1.0});
  CHECK(g[1].to_vector<double>() == std::vector<double>{0.5, 1.0, 0.0});
}

TEST_CASE("matmul and conv2d skip the gradients no input needs (the first layer's input gradient)",
          "[autograd][grad]") {
  const Tensor x = test::random_tensor({4, 3}, DType::F64, 1);
  const Tensor w = test::random_tensor({3, 2}, DType::F64, 2);
  const Tensor y = matmul(x, w);
  GradCall call{INGOT_OP_MATMUL, {x, w}, {y}, nullptr};
  ingot_attr_matmul attr{};
  attr.struct_size = sizeof(attr);
  call.attrs = &attr;
  call.needs_grad = 0b10;  // only the weight
  const auto g = grad_rule(INGOT_OP_MATMUL)(call, {ones({4, 2}, DType::F64)});
  CHECK_FALSE(g[0].defined());
  REQUIRE(g[1].defined());
  INGOT_REQUIRE_CLOSE(g[1], matmul(x.transpose(0, 1), ones({4, 2}, DType::F64)), 1e-12, 1e-12);

  // Through the tape: an input that does not require grad gets none, the weight the full one.
  Tensor wt = w.clone();
  wt.set_requires_grad(true);
  sum(matmul(x, wt)).backward();
  INGOT_REQUIRE_CLOSE(wt.grad(), matmul(x.transpose(0, 1), ones({4, 2}, DType::F64)), 1e-12, 1e-12);
}

TEST_CASE("non-differentiable ops have no rule", "[autograd][grad]") {
  CHECK(grad_rule(INGOT_OP_ARGMAX) == nullptr);
  CHECK(grad_rule(INGOT_OP_EQ) == nullptr);
  CHECK(grad_rule(INGOT_OP_UNIFORM) == nullptr);
  CHECK(grad_rule(INGOT_OP_MUL) != nullptr);
}

}  // namespace ingot

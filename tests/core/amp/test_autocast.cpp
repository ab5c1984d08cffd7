// Autocast: the policy per op (dtypes in and out), values against casts done by hand, gradients
// reaching the f32 weights, the weight-cast cache, and autocast off in the backward pass.
#include <catch2/catch.hpp>

#include "ingot/amp/autocast.h"
#include "ingot/ops/attention.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/norm.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/autocast_policy.h"
#include "ingot/runtime/dispatch_chain.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor rnd(const Shape& s, uint64_t seed) { return test::random_tensor(s, DType::F32, seed); }

/// `t` rounded to bf16 and back: what autocast feeds a bf16 kernel.
Tensor bf16_rounded(const Tensor& t) { return t.to(DType::BF16).to(DType::F32); }

TEST_CASE("autocast sits in the dispatch chain", "[amp]") {
  const auto names = dispatch_chain::names();
  CHECK(std::find(names.begin(), names.end(), "autocast") != names.end());
  CHECK_FALSE(AutocastMode::is_enabled());
}

TEST_CASE("autocast policy: matmul and conv low, touchy ops f32, the rest fall through", "[amp]") {
  const Tensor x = rnd({4, 8}, 1), w = rnd({3, 8}, 2), b = rnd({3}, 3);
  const Tensor img = rnd({2, 3, 6, 6}, 4), k = rnd({4, 3, 3, 3}, 5);
  const amp::AutocastRegion region(DType::BF16);
  CHECK(autocast_policy(INGOT_OP_MATMUL) == CastPolicy::Lower);
  CHECK(autocast_lowers(INGOT_OP_CONV2D));
  CHECK_FALSE(autocast_lowers(INGOT_OP_ADD));
  const Tensor y = linear(x, w, b);
  CHECK(y.dtype() == DType::BF16);
  CHECK(conv2d(img, k, Tensor(), Conv2dParams{}).dtype() == DType::BF16);
  CHECK(relu(y).dtype() == DType::BF16);                 // fallthrough: the input's dtype
  CHECK((y + y).dtype() == DType::BF16);
  CHECK(log_softmax(y, 1).dtype() == DType::F32);        // f32 policy
  CHECK(sum(y).dtype() == DType::F32);
  CHECK(exp(y).dtype() == DType::F32);
  CHECK(mean(y).dtype() == DType::F32);
  // Batch norm runs on its input's dtype with f32 statistics and affine parameters.
  const Tensor feat = conv2d(img, k, Tensor(), Conv2dParams{});
  const Tensor gamma = ones({4}), beta = zeros({4}), rm = zeros({4}), rv = ones({4});
  const BatchNormResult bn = batch_norm(feat, gamma, beta, rm, rv, /*training=*/true);
  CHECK(bn.y.dtype() == DType::BF16);
  CHECK(bn.save_mean.dtype() == DType::F32);
  CHECK(rm.dtype() == DType::F32);
  // f64 operands stay f64 (torch leaves f64 ops alone), mixed with f32 they promote to f64.
  CHECK(matmul(x.to(DType::F64), w.to(DType::F64).transpose(0, 1)).dtype() == DType::F64);
  CHECK(matmul(x.to(DType::F64), w.transpose(0, 1)).dtype() == DType::F64);
  {
    const AutocastGuard off({.enabled = false});  // torch.autocast(enabled=False) inside a region
    CHECK(linear(x, w, b).dtype() == DType::F32);
  }
  CHECK(linear(x, w, b).dtype() == DType::BF16);
}

TEST_CASE("autocast lowers attention's output and keeps its log-sum-exp f32", "[amp]") {
  CHECK(autocast_keeps_output(INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION, 1));
  CHECK_FALSE(autocast_keeps_output(INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION, 0));
  const Tensor q = test::random_tensor({1, 2, 5, 4}, DType::F32, 3);
  const Tensor qb = q.to(DType::BF16);
  const AttentionResult by_hand = scaled_dot_product_attention_with_lse(qb, qb, qb);  // outside the region
  const amp::AutocastRegion region(DType::BF16);
  const AttentionResult r = scaled_dot_product_attention_with_lse(q, q, q);
  CHECK(r.out.dtype() == DType::BF16);
  CHECK(r.lse.dtype() == DType::F32);
  INGOT_REQUIRE_CLOSE(r.out, by_hand.out, 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(r.lse, by_hand.lse, 0.0, 0.0);
}

TEST_CASE("autocast outside a region changes nothing", "[amp]") {
  const Tensor x = rnd({4, 8}, 1), w = rnd({3, 8}, 2);
  CHECK(linear(x, w, Tensor()).dtype() == DType::F32);
  CHECK(log_softmax(x.to(DType::BF16), 1).dtype() == DType::BF16);
}

TEST_CASE("autocast values equal the same ops on operands cast by hand", "[amp]") {
  const Tensor x = rnd({5, 16}, 11), w = rnd({7, 16}, 12), b = rnd({7}, 13);
  Tensor y;
  {
    const amp::AutocastRegion region(DType::BF16);
    y = linear(x, w, b);
  }
  // bf16 operands, f32 accumulation, one rounding of the result to bf16.
  const Tensor expected = linear(bf16_rounded(x), bf16_rounded(w), bf16_rounded(b)).to(DType::BF16);
  CHECK(test::compare(y.to(DType::F32), expected.to(DType::F32), 1e-2, 1e-2) == "");
  const Tensor img = rnd({2, 3, 7, 7}, 14), k = rnd({4, 3, 3, 3}, 15);
  Tensor c;
  {
    const amp::AutocastRegion region(DType::BF16);
    c = conv2d(img, k, Tensor(), Conv2dParams{});
  }
  const Tensor c_expected = conv2d(bf16_rounded(img), bf16_rounded(k), Tensor(), Conv2dParams{});
  CHECK(test::compare(c.to(DType::F32), c_expected, 2e-2, 1e-2) == "");
}

TEST_CASE("autocast gradients reach the f32 weights", "[amp]") {
  const Tensor x = rnd({6, 10}, 21);
  const Tensor w = rnd({4, 10}, 22).set_requires_grad(), b = rnd({4}, 23).set_requires_grad();
  {
    const amp::AutocastRegion region(DType::BF16, {w, b});
    sum(log_softmax(linear(x, w, b), 1)).backward();
  }
  REQUIRE(w.grad().defined());
  CHECK(w.grad().dtype() == DType::F32);
  CHECK(b.grad().dtype() == DType::F32);
  // The same gradient in f32 from bf16-rounded operands, within bf16's precision.
  const Tensor w2 = bf16_rounded(w).detach().set_requires_grad(), b2 = bf16_rounded(b).detach().set_requires_grad();
  sum(log_softmax(linear(bf16_rounded(x), w2, b2), 1)).backward();
  CHECK(test::compare(w.grad(), w2.grad(), 3e-2, 3e-2) == "");
  CHECK(test::compare(b.grad(), b2.grad(), 3e-2, 3e-2) == "");
}

TEST_CASE("autocast casts each weight once per region and every use still gets its gradient", "[amp]") {
  const Tensor x = rnd({3, 5}, 31);
  const Tensor w = rnd({2, 5}, 32).set_requires_grad(), b = rnd({2}, 33).set_requires_grad();
  const amp::CastCacheStats before = amp::cast_cache_stats();
  {
    const amp::AutocastRegion region(DType::BF16, {w, b});
    sum(linear(x, w, b)).backward();
    sum(linear(x, w, b)).backward();  // a second micro-batch: cached casts, fresh graph
  }
  const amp::CastCacheStats after = amp::cast_cache_stats();
  CHECK(after.casts - before.casts == 2);  // w's transposed view and b
  CHECK(after.hits - before.hits == 2);
  // Both backward passes reached the weights: the gradient is twice one pass's.
  const Tensor w1 = w.detach().clone().set_requires_grad(), b1 = b.detach().clone().set_requires_grad();
  {
    const amp::AutocastRegion region(DType::BF16, {w1, b1});
    sum(linear(x, w1, b1)).backward();
  }
  CHECK(test::compare(w.grad(), w1.grad() * 2.0, 0.0, 0.0) == "");
  CHECK(test::compare(b.grad(), b1.grad() * 2.0, 0.0, 0.0) == "");
  // A new region casts again (the weights may have changed in between).
  {
    const amp::AutocastRegion region(DType::BF16, {w, b});
    (void)linear(x, w, b);
  }
  CHECK(amp::cast_cache_stats().casts - after.casts == 4);  // w1, b1 above, then w, b
}

TEST_CASE("autocast is off while a backward pass runs", "[amp]") {
  // A node recorded in bf16 gets its gradient in bf16; nothing in backward is recast (the bias
  // gradient is a SUM over the batch: under autocast it would be an unrounded f32 sum).
  const Tensor x = rnd({64, 6}, 41).set_requires_grad();
  const Tensor w = rnd({3, 6}, 42).set_requires_grad(), b = rnd({3}, 43).set_requires_grad();
  const Tensor scale = rnd({64, 3}, 44);
  Tensor inside_x, inside_w, inside_b;
  {
    const amp::AutocastRegion region(DType::BF16, {w, b});
    Tensor y = linear(x, w, b);
    sum(y.to(DType::F32) * scale).backward();
  }
  inside_x = x.grad().clone(), inside_w = w.grad().clone(), inside_b = b.grad().clone();
  x.set_grad(Tensor()), w.set_grad(Tensor()), b.set_grad(Tensor());
  Tensor y;
  {
    const amp::AutocastRegion region(DType::BF16, {w, b});
    y = linear(x, w, b);
  }
  sum(y.to(DType::F32) * scale).backward();  // outside the region
  CHECK(test::compare(x.grad(), inside_x, 0.0, 0.0) == "");
  CHECK(test::compare(w.grad(), inside_w, 0.0, 0.0) == "");
  CHECK(test::compare(b.grad(), inside_b, 0.0, 0.0) == "");
}

TEST_CASE("autocast with the reference backend alone accepts any low dtype", "[amp]") {
  // Core's tests run without plugins: f32 runs on the reference too, so nothing is slower.
  CHECK(amp::autocast_unsupported_reason(Device::cpu(), DType::BF16) == "");
  CHECK(amp::autocast_unsupported_reason(Device::cpu(), DType::F16) == "");
  CHECK_THROWS(amp::AutocastRegion(DType::F32));
}

}  // namespace
}  // namespace ingot

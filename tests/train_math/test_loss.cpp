// Loss functions: hand-checked values, numerical stability at extreme logits, argument errors
// and accuracy_count. Parity with torch over every option is in test_loss_golden.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/nn/loss.h"
#include "ingot/ops/ops.h"
#include "test_support.h"
#include "train_math_util.h"

namespace ingot {
namespace {

Tensor f32(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector<float>(v, s); }
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return Tensor::from_vector<int64_t>(v, s); }

bool all_finite(const Tensor& t) {
  for (double v : t.to_vector<double>())
    if (!std::isfinite(v)) return false;
  return true;
}

TEST_CASE("cross_entropy: hand-computed values", "[loss]") {
  // Row 0: uniform over 4 classes -> log 4. Row 1: logits (0, ln 3) -> -log(3/4) for class 1.
  const Tensor logits = f32({0, 0, 0, 0, 0, std::log(3.0f), 0, 0}, Shape{2, 4});
  const Tensor target = i64({2, 1}, Shape{2});
  nn::CrossEntropyOptions none;
  none.reduction = nn::Reduction::None;
  // Tolerance: f32 rounding of a few ops, 1e-6 relative.
  INGOT_REQUIRE_CLOSE(nn::cross_entropy(logits, target, none),
                      Tensor::from_vector<double>({std::log(4.0), -std::log(0.5)}, Shape{2}), 1e-6, 1e-6);
  const double mean = (std::log(4.0) - std::log(0.5)) / 2;
  REQUIRE(nn::cross_entropy(logits, target).item() == Approx(mean).epsilon(1e-6));
  // Weighted mean divides by the weights of the targets (w2 + w1), not by N.
  nn::CrossEntropyOptions weighted;
  weighted.weight = f32({1, 2, 3, 4}, Shape{4});
  REQUIRE(nn::cross_entropy(logits, target, weighted).item() ==
          Approx((3 * std::log(4.0) - 2 * std::log(0.5)) / 5).epsilon(1e-6));
  // An ignored target adds nothing to the sum nor to the count.
  nn::CrossEntropyOptions ignore;
  ignore.ignore_index = 1;
  REQUIRE(nn::cross_entropy(logits, target, ignore).item() == Approx(std::log(4.0)).epsilon(1e-6));
}

TEST_CASE("losses: hand-computed regression and KL values", "[loss]") {
  const Tensor a = f32({1, 2, 3, 4}, Shape{2, 2}), b = f32({1, 0, 5, 4}, Shape{2, 2});
  REQUIRE(nn::mse_loss(a, b).item() == Approx(2.0));  // (0 + 4 + 4 + 0) / 4
  REQUIRE(nn::mse_loss(a, b, nn::Reduction::Sum).item() == Approx(8.0));
  REQUIRE(nn::l1_loss(a, b).item() == Approx(1.0));
  // KL(p || q) with p = (1/2, 1/2, 0), q uniform: sum p log(p / q) = log(3/2) per row; 0 log 0 = 0.
  const Tensor log_q = full(Shape{2, 3}, -std::log(3.0));
  const Tensor p = f32({0.5f, 0.5f, 0, 0.5f, 0, 0.5f}, Shape{2, 3});
  REQUIRE(nn::kl_div(log_q, p).item() == Approx(std::log(1.5)).epsilon(1e-6));  // batchmean
  REQUIRE(nn::kl_div(log_q, p, {nn::Reduction::Sum, false}).item() == Approx(2 * std::log(1.5)).epsilon(1e-6));
  REQUIRE(nn::kl_div(log_q, p, {nn::Reduction::Mean, false}).item() == Approx(std::log(1.5) / 3).epsilon(1e-6));
  // BCE with logits at x = 0 is log 2 whatever the target.
  REQUIRE(nn::binary_cross_entropy_with_logits(zeros(Shape{3}), f32({0, 1, 0.5f}, Shape{3})).item() ==
          Approx(std::log(2.0)).epsilon(1e-6));
}

TEST_CASE("losses: finite values and gradients at logits of +-1e4", "[loss][stability]") {
  const Tensor logits = f32({1e4f, -1e4f, 0, -1e4f, -1e4f, 1e4f, 1e4f, 1e4f, -1e4f}, Shape{3, 3});
  const Tensor target = i64({1, 2, 0}, Shape{3});
  nn::CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1;
  const Tensor ce = nn::cross_entropy(logits, target, smooth);
  REQUIRE(all_finite(ce));
  // Row 0 picks a logit 2e4 below the max: the loss is 2e4 (exact in f32), not inf.
  nn::CrossEntropyOptions none;
  none.reduction = nn::Reduction::None;
  INGOT_REQUIRE_CLOSE(nn::cross_entropy(logits, target, none), f32({2e4f, 0, std::log(2.0f)}, Shape{3}), 1e-6, 1e-6);
  const Tensor y = f32({0, 1, 1, 0, 1, 0, 0.5f, 0.5f, 0.5f}, Shape{3, 3});
  const Tensor bce = nn::binary_cross_entropy_with_logits(logits, y, {nn::Reduction::None, Tensor(), Tensor()});
  REQUIRE(all_finite(bce));
  REQUIRE(bce.to_vector<float>()[0] == Approx(1e4));  // x = 1e4, y = 0: loss x
  REQUIRE(bce.to_vector<float>()[2] == Approx(std::log(2.0)));

  for (int which = 0; which < 2; ++which) {
    const Tensor x = logits.clone();
    x.set_requires_grad(true);
    const Tensor loss = which == 0 ? nn::cross_entropy(x, target, smooth) : nn::binary_cross_entropy_with_logits(x, y);
    loss.backward();
    INFO((which == 0 ? "cross_entropy" : "bce_with_logits") << " grad " << x.grad());
    REQUIRE(all_finite(x.grad()));
  }
  // d CE / d logits = softmax - onehot: row 0 is (0, -1, 0) / 3 for the mean over 3 rows.
  const Tensor x = logits.clone();
  x.set_requires_grad(true);
  nn::cross_entropy(x, target).backward();
  INGOT_REQUIRE_CLOSE(x.grad().slice(0, 0, 1), f32({1.0f / 3, -1.0f / 3, 0}, Shape{1, 3}), 1e-6, 1e-6);
}

TEST_CASE("losses: argument errors name shapes and values", "[loss][errors]") {
  const Tensor logits = zeros(Shape{4, 3});
  REQUIRE_THROWS_WITH(nn::cross_entropy(logits, i64({0, 1, 2}, Shape{3})),
                      Catch::Contains("target [3] does not fit input [4, 3]"));
  REQUIRE_THROWS_WITH(nn::cross_entropy(logits, i64({0, 1, 3, 0}, Shape{4})),
                      Catch::Contains("target 3 at flat index 2 is not a class index in [0, 3)"));
  REQUIRE_THROWS_WITH(nn::cross_entropy(logits, zeros(Shape{4})), Catch::Contains("integer class indices"));
  nn::CrossEntropyOptions bad_weight;
  bad_weight.weight = ones(Shape{4});
  REQUIRE_THROWS_WITH(nn::cross_entropy(logits, i64({0, 1, 2, 0}, Shape{4}), bad_weight),
                      Catch::Contains("weight [4] must have one entry per class (3)"));
  nn::CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1;
  REQUIRE_THROWS_WITH(nn::nll_loss(logits, i64({0, 1, 2, 0}, Shape{4}), smooth), Catch::Contains("label_smoothing"));
  REQUIRE_THROWS_WITH(nn::mse_loss(logits, zeros(Shape{3, 4})), Catch::Contains("input [4, 3] and target [3, 4]"));
  REQUIRE_THROWS_WITH(nn::l1_loss(logits, logits, nn::Reduction::BatchMean), Catch::Contains("batchmean"));
  REQUIRE_THROWS_AS(nn::parse_reduction("avg"), ConfigError);
  REQUIRE(nn::parse_reduction("batchmean") == nn::Reduction::BatchMean);
  REQUIRE(std::string(nn::reduction_name(nn::Reduction::Sum)) == "sum");
}

TEST_CASE("accuracy_count: argmax hits, ignoring ignore_index", "[loss][accuracy]") {
  const Tensor logits = f32({0.1f, 0.9f, 0, 2, 1, 0, 0, 0, 5, 1, 1, 0}, Shape{4, 3});
  REQUIRE(nn::accuracy_count(logits, i64({1, 0, 2, 1}, Shape{4})) == 3);  // first max of a tie wins
  REQUIRE(nn::accuracy_count(logits, i64({1, -100, 2, 0}, Shape{4})) == 3);
  REQUIRE(nn::accuracy_count(logits, i64({0, 1, 0, 2}, Shape{4})) == 0);
  REQUIRE_THROWS_WITH(nn::accuracy_count(logits, i64({1, 0}, Shape{2})), Catch::Contains("target [2]"));
}

}  // namespace
}  // namespace ingot

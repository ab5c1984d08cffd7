// Layers: output shapes agree with output_shape(), shape errors name the layer, BatchNorm's
// counters, and Dropout's mask (the Philox Bernoulli draw, so reproducible from a seed).
#include <catch2/catch.hpp>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

TEST_CASE("nn layers: forward shapes equal output_shape", "[nn]") {
  Generator g(3);
  Pool2dParams mp;
  mp.kernel = {3, 3};
  mp.stride = {2, 2};
  mp.padding = {1, 1};
  Conv2dOptions co;
  co.stride = {2, 2};
  co.padding = {1, 1};
  co.groups = 2;
  struct C {
    ModulePtr m;
    Shape in;
  };
  const std::vector<C> cases = {
      {std::make_shared<Linear>(5, 3, true, &g), {2, 4, 5}},
      {std::make_shared<Conv2d>(4, 6, 3, co, &g), {2, 4, 7, 7}},
      {std::make_shared<BatchNorm2d>(4), {2, 4, 3, 3}},
      {std::make_shared<LayerNorm>(Shape{6}), {3, 6}},
      {std::make_shared<MaxPool2d>(mp), {1, 2, 7, 7}},
      {std::make_shared<AvgPool2d>(mp), {1, 2, 7, 7}},
      {std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{3, 2}), {1, 2, 7, 5}},
      {std::make_shared<Flatten>(), {2, 3, 4, 5}},
      {std::make_shared<GELU>(), {3, 3}},
      {std::make_shared<BasicBlock>(4, 8, 2, &g), {2, 4, 6, 6}},
      {make_resnet(ResNetOptions{8, 4, 3, 5}, &g), {2, 3, 8, 8}},
  };
  for (const C& c : cases) {
    INFO(c.m->type_name() << " " << c.in.str());
    const Tensor y = c.m->forward(test::random_tensor(c.in, DType::F32, 7));
    CHECK(y.shape() == c.m->output_shape(c.in));
  }
  Embedding emb(10, 4, &g);
  const Tensor idx = Tensor::from_vector<int64_t>({1, 2, 9, 0, 0, 3}, {2, 3});
  CHECK(emb.forward(idx).shape() == Shape{2, 3, 4});
  INGOT_REQUIRE_CLOSE(emb.forward(idx).select(0, 1).select(0, 0), emb.weight().select(0, 0), 0.0, 0.0);
  CHECK_THROWS_WITH(emb.forward(Tensor::from_vector<int64_t>({10}, {1})), Catch::Contains("out of range"));
}

TEST_CASE("nn layers: shape errors name the layer and both shapes", "[nn]") {
  Linear lin(100, 10);
  CHECK_THROWS_AS(lin.forward(zeros({2, 3136})), ShapeError);
  CHECK_THROWS_WITH(lin.output_shape({2, 3136}), Catch::Contains("Linear(100 -> 10)") && Catch::Contains("[2, 3136]"));
  CHECK_THROWS_WITH(Conv2d(3, 8, 3).output_shape({1, 1, 28, 28}), Catch::Contains("3 channels"));
  CHECK_THROWS_WITH(BatchNorm2d(8).output_shape({1, 4, 2, 2}), Catch::Contains("BatchNorm2d(8)"));
  Sequential s{std::make_shared<Flatten>(), std::make_shared<Linear>(100, 10)};
  CHECK_THROWS_WITH(s.output_shape({1, 64, 7, 7}), Catch::Contains("layer '1' (Linear)"));
  CHECK_THROWS(Conv2d(3, 8, 3, Conv2dOptions{{1, 1}, {0, 0}, {1, 1}, 2, true}));  // groups must divide 3
}

TEST_CASE("nn layers: BatchNorm2d counts batches in training only and uses running stats in eval", "[nn]") {
  BatchNorm2d bn(2);
  const Tensor x = test::random_tensor({4, 2, 3, 3}, DType::F32, 11, -1.0, 3.0);
  bn.forward(x);
  bn.forward(x);
  CHECK(bn.num_batches_tracked().item() == 2);
  bn.eval();
  const Tensor y = bn.forward(x);
  CHECK(bn.num_batches_tracked().item() == 2);
  // eval: (x - running_mean) / sqrt(running_var + eps) with the updated statistics
  const Tensor rm = bn.running_mean().reshape({1, 2, 1, 1}), rv = bn.running_var().reshape({1, 2, 1, 1});
  INGOT_REQUIRE_CLOSE(y, (x - rm) / sqrt(rv + 1e-5), 1e-5, 1e-5);
  BatchNormOptions o;
  o.track_running_stats = false;
  BatchNorm2d free(2, o);
  CHECK(free.state_dict().size() == 2);
  free.eval();  // no running stats: batch statistics even in eval
  const Tensor z = free.forward(x);
  INGOT_REQUIRE_CLOSE(mean(z, {0, 2, 3}), zeros({2}), 1e-5, 0.0);
}

TEST_CASE("nn layers: Dropout is the identity in eval and a Philox mask in training", "[nn]") {
  Dropout d(0.25);
  const Tensor x = test::random_tensor({64, 64}, DType::F32, 5, 1.0, 2.0);
  d.eval();
  CHECK(d.forward(x).same_tensor(x));
  d.train();
  Generator g(42);
  d.set_generator(&g);
  const Tensor y = d.forward(x);
  CHECK(g.offset() == 64 * 64 / 4);
  const auto xv = x.to_vector<float>(), yv = y.to_vector<float>();
  int64_t kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    if (yv[i] != 0.0f) {
      ++kept;
      CHECK(yv[i] == xv[i] * static_cast<float>(1.0 / 0.75));
    }
  }
  CHECK(std::abs(static_cast<double>(kept) / 4096.0 - 0.75) < 0.03);  // ~4.4 standard errors
  // the mask is BERNOULLI(1 - p) from the same generator state, bit for bit
  Generator g2(42);
  const Tensor keep = bernoulli({64, 64}, 0.75, DType::Bool, &g2);
  INGOT_REQUIRE_CLOSE(ne(y, 0.0), keep, 0.0, 0.0);
  // reproducible: same seed, same mask; next call, another mask
  Generator g3(42);
  d.set_generator(&g3);
  INGOT_REQUIRE_CLOSE(d.forward(x), y, 0.0, 0.0);
  CHECK(test::excess_error(d.forward(x), y, 0.0, 0.0) > 0.0);
}

TEST_CASE("nn layers: functional dropout edge cases", "[nn]") {
  Generator g(1);
  const Tensor x = test::random_tensor({3, 5}, DType::F32, 2);
  INGOT_REQUIRE_CLOSE(dropout(x, 0.0, true, &g), x, 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(dropout(x, 1.0, true, &g), zeros({3, 5}), 0.0, 0.0);
  const Tensor xt = test::random_tensor({5, 3}, DType::F64, 2).transpose(0, 1);
  const DropoutResult r = dropout_with_mask(xt, 0.5, &g);
  INGOT_REQUIRE_CLOSE(r.y, where(r.keep, xt * 2.0, 0.0), 0.0, 0.0);
  CHECK(dropout(zeros({0, 3}), 0.5, true, &g).numel() == 0);
  CHECK_THROWS_WITH(dropout(x, 1.5, true, &g), Catch::Contains("p = 1.5"));
  CHECK_THROWS_AS(dropout_with_mask(zeros({3}, DType::I64), 0.5, &g), DTypeError);
}

TEST_CASE("nn layers: Dropout gradient is the mask scaled by 1 / (1 - p)", "[nn][autograd]") {
  Generator g(9);
  const Tensor x = test::random_tensor({4, 9}, DType::F32, 3).set_requires_grad(true);
  const DropoutResult r = dropout_with_mask(x, 0.4, &g);
  const Tensor go = test::random_tensor({4, 9}, DType::F32, 4);
  r.y.backward(go);
  REQUIRE(x.grad().defined());
  INGOT_REQUIRE_CLOSE(x.grad(), where(r.keep, go * (1.0 / 0.6), 0.0), 1e-6, 1e-6);
}

// ln_structured made permanent: the layers rebuilt smaller compute what the masked model computed
// (within 1e-5, in eval and in training mode) for the CNN and MLP presets, a conv with bias and
// no BatchNorm, and a ResNet, whose residual sums keep their channels.
#include <catch2/catch.hpp>

#include <map>

#include "channel_plan.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/pooling.h"
#include "ingot/nn/presets.h"
#include "pruner.h"
#include "test_support.h"

namespace ingot::prune {
namespace {

using Catch::Matchers::Contains;

/// BatchNorm affine parameters and running statistics away from their 1 / 0 defaults, so that a
/// BatchNorm channel left unmasked would show in the output.
void randomize_norms(nn::Module& model) {
  const NoGradGuard no_grad;
  uint64_t seed = 100;
  for (const auto& [name, m] : model.named_modules())
    if (auto* bn = dynamic_cast<nn::BatchNorm2d*>(m)) {
      const Shape c{bn->num_features()};
      bn->weight().copy_(test::random_tensor(c, DType::F32, ++seed, 0.5, 1.5));
      bn->bias().copy_(test::random_tensor(c, DType::F32, ++seed, -0.5, 0.5));
      bn->running_mean().copy_(test::random_tensor(c, DType::F32, ++seed, -0.5, 0.5));
      bn->running_var().copy_(test::random_tensor(c, DType::F32, ++seed, 0.5, 1.5));
    }
}

Shape weight_shape(nn::Module& model, const std::string& layer) {
  const nn::ModulePtr m = model.get_submodule(layer);
  INGOT_CHECK(m != nullptr, "no layer '{}'", layer);
  return m->named_parameters(false).front().second.shape();
}

/// Prunes `model` with ln_structured (n, amount 0.5), checks that the shrunk model computes what
/// the masked one did, that the weights have `shapes` and that nothing else changed.
std::vector<ShapeChange> check_shrink(nn::Module& model, const Tensor& x, int64_t n,
                                      const std::map<std::string, Shape>& shapes) {
  randomize_norms(model);
  model.train();
  const Tensor dense = model(x);
  PruneConfig c;
  c.method = Method::LnStructured;
  c.n = n;
  c.amount = Amount::of_fraction(0.5);
  c.where = "test";
  Pruner p(model, c, 0);
  p.prune(c.amount);
  const int64_t params = model.num_parameters();
  const Tensor masked_train = model(x);  // (updates the running statistics once)
  REQUIRE(test::excess_error(masked_train, dense, 1e-3, 0.0) > 0.0);  // pruning did change the output
  model.eval();
  const Tensor masked_eval = model(x);
  const std::vector<ShapeChange> changes = p.make_permanent();
  INGOT_REQUIRE_CLOSE(model(x), masked_eval, 1e-5, 0.0);
  model.train();
  INGOT_REQUIRE_CLOSE(model(x), masked_train, 1e-5, 0.0);
  REQUIRE(changes.size() == shapes.size());
  for (const auto& [layer, shape] : shapes) {
    INFO(layer);
    REQUIRE(weight_shape(model, layer) == shape);
  }
  REQUIRE(model.num_parameters() < params);
  return changes;
}

TEST_CASE("shrink equals mask: simple_cnn (conv, BatchNorm, pool, flatten, linear)", "[prune][shrink]") {
  Generator gen(3);
  auto model = nn::make_simple_cnn({1, 8, 8, 4, 16, 3, 0.0}, &gen);
  const Tensor x = test::random_tensor({5, 1, 8, 8}, DType::F32, 9);
  const auto changes = check_shrink(*model, x, 2,
                                    {{"0", {2, 1, 3, 3}},
                                     {"1", {2}},
                                     {"4", {4, 2, 3, 3}},
                                     {"5", {4}},
                                     {"9", {8, 16}},
                                     {"12", {3, 8}}});
  REQUIRE(changes.front().layer == "0");
  REQUIRE(changes.front().params_before == 36);
  REQUIRE(changes.front().params_after == 18);
  REQUIRE(model->get_submodule("12")->named_parameters().front().second.size(0) == 3);  // the classes stay
}

TEST_CASE("shrink equals mask: mlp (linear -> relu -> linear)", "[prune][shrink]") {
  Generator gen(4);
  auto model = nn::make_mlp({{20, 16, 12, 5}, "relu", 0.0}, &gen);
  const Tensor x = test::random_tensor({6, 20}, DType::F32, 10);
  check_shrink(*model, x, 1, {{"1", {8, 20}}, {"3", {6, 8}}, {"5", {5, 6}}});
}

TEST_CASE("shrink equals mask: convolutions with bias and no BatchNorm, adaptive pooling, tanh", "[prune][shrink]") {
  Generator gen(5);
  nn::Conv2dOptions pad;
  pad.padding = {1, 1};
  nn::Sequential model{std::make_shared<nn::Conv2d>(2, 6, 3, pad, &gen),
                       std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::AdaptiveAvgPool2d>(std::array<int64_t, 2>{2, 2}),
                       std::make_shared<nn::Flatten>(),
                       std::make_shared<nn::Linear>(24, 5, true, &gen),
                       std::make_shared<nn::Tanh>(),
                       std::make_shared<nn::Linear>(5, 3, true, &gen)};
  // Biases large enough that an unmasked bias of a removed filter would show.
  const NoGradGuard no_grad;
  for (const auto& [name, t] : model.named_parameters())
    if (name.find("bias") != std::string::npos) t.copy_(test::random_tensor(t.shape(), DType::F32, 77, 0.5, 1.0));
  const Tensor x = test::random_tensor({3, 2, 5, 5}, DType::F32, 11);
  check_shrink(model, x, 2, {{"0", {3, 2, 3, 3}}, {"4", {3, 12}}, {"6", {3, 3}}});
}

TEST_CASE("shrink equals mask: resnet, only conv1 -> bn1 -> conv2 inside each block", "[prune][shrink]") {
  Generator gen(6);
  auto model = nn::make_resnet({8, 4, 3, 3}, &gen);
  const ChannelPlan plan = plan_channels(*model);
  REQUIRE(plan.links.size() == 3);
  REQUIRE_THAT(plan.reason("conv1"), Contains("residual block 'layer1.0'"));
  REQUIRE_THAT(plan.reason("layer1.0.conv2"), Contains("residual sum of 'layer1.0'"));
  REQUIRE_THAT(plan.reason("layer2.0.shortcut.0"), Contains("residual sum of 'layer2.0'"));
  REQUIRE_THAT(plan.reason("fc"), Contains("output layer"));
  const Tensor x = test::random_tensor({2, 3, 8, 8}, DType::F32, 12);
  check_shrink(*model, x, 2,
               {{"layer1.0.conv1", {2, 4, 3, 3}},
                {"layer1.0.bn1", {2}},
                {"layer1.0.conv2", {4, 2, 3, 3}},
                {"layer2.0.conv1", {4, 4, 3, 3}},
                {"layer2.0.bn1", {4}},
                {"layer2.0.conv2", {8, 4, 3, 3}},
                {"layer3.0.conv1", {8, 8, 3, 3}},
                {"layer3.0.bn1", {8}},
                {"layer3.0.conv2", {16, 8, 3, 3}}});
  REQUIRE(weight_shape(*model, "conv1") == Shape{4, 3, 3, 3});
  REQUIRE(weight_shape(*model, "layer2.0.shortcut.0") == Shape{8, 4, 1, 1});
}

TEST_CASE("channel plan: layers it cannot see through are left out with the reason", "[prune][shrink]") {
  Generator gen(7);
  nn::Sequential model{std::make_shared<nn::Linear>(8, 6, true, &gen), std::make_shared<nn::Sigmoid>(),
                       std::make_shared<nn::Linear>(6, 4, true, &gen), std::make_shared<nn::ReLU>(),
                       std::make_shared<nn::Linear>(4, 2, true, &gen)};
  const ChannelPlan plan = plan_channels(model);
  REQUIRE(plan.links.size() == 1);
  REQUIRE(plan.links[0].producer == "2");
  REQUIRE_THAT(plan.reason("0"), Contains("Sigmoid '1'"));
  REQUIRE_THAT(plan.reason("4"), Contains("output layer"));
}

}  // namespace
}  // namespace ingot::prune

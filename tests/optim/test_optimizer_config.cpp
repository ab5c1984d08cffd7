// Optimizers from `train.optimizer:` YAML: types and torch defaults, the decay / no-decay split,
// per-type keys, betas, and the resolved config.
#include <catch2/catch.hpp>

#include "ingot/base/error.h"
#include "ingot/optim/clip_grad.h"
#include "ingot/optim/optimizer_config.h"
#include "test_support.h"

namespace ingot::optim {
namespace {

NamedParams model_params() {
  return {{"fc1.weight", test::random_tensor({4, 3}, DType::F32, 1)},
          {"fc1.bias", test::random_tensor({4}, DType::F32, 2)},
          {"norm.weight", test::random_tensor({4}, DType::F32, 3)},
          {"fc2.weight", test::random_tensor({2, 4}, DType::F32, 4)}};
}

std::unique_ptr<Optimizer> build(const std::string& yaml) {
  return make_optimizer(YAML::Load(yaml), model_params(), "test.yaml");
}

}  // namespace

TEST_CASE("optim config: types, torch defaults and the decay split", "[optim][config]") {
  auto adamw = build("type: adamw\nlr: 0.002\n");
  REQUIRE(adamw->type() == "adamw");
  REQUIRE(adamw->param_groups().size() == 2);
  REQUIRE(adamw->param_groups()[0].params.size() == 2);  // the two weight matrices
  REQUIRE(adamw->param_groups()[0].options.get("weight_decay") == 1e-2);
  REQUIRE(adamw->param_groups()[1].options.get("weight_decay") == 0.0);  // bias and norm weight
  REQUIRE(adamw->param_groups()[1].options.lr() == 0.002);
  REQUIRE(adamw->defaults().get("beta2") == 0.999);

  auto adam = build("type: adam\nbetas: [0.8, 0.99]\neps: 1.0e-6\namsgrad: true\nno_decay_on_bias_and_norm: false\n");
  REQUIRE(adam->param_groups().size() == 1);
  REQUIRE(adam->defaults().get("weight_decay") == 0.0);
  REQUIRE(adam->defaults().get("beta1") == 0.8);
  REQUIRE(adam->defaults().flag("amsgrad"));

  auto sgd = build("type: sgd\nlr: 0.1\nmomentum: 0.9\nnesterov: true\nweight_decay: 5.0e-4\n");
  REQUIRE(sgd->type() == "sgd");
  REQUIRE(sgd->param_groups()[0].options.flag("nesterov"));
  const YAML::Node resolved = optimizer_to_yaml(*sgd, true);
  REQUIRE(resolved["momentum"].as<double>() == 0.9);
  REQUIRE(resolved["dampening"].as<double>() == 0.0);
  REQUIRE(optimizer_to_yaml(*adam, false)["betas"][1].as<double>() == 0.99);

  const std::vector<GroupSpec> one = decay_groups(model_params(), false);
  REQUIRE(one.size() == 1);
  REQUIRE(one[0].params.size() == 4);
}

TEST_CASE("optim config: errors name the key and its line", "[optim][config]") {
  REQUIRE_THROWS_WITH(build("type: adamw\nmomentum: 0.9\n"), Catch::Contains("test.yaml:2") &&
                                                                 Catch::Contains("train.optimizer.momentum") &&
                                                                 Catch::Contains("does not apply to type 'adamw'"));
  REQUIRE_THROWS_WITH(build("type: sgd\nbetas: [0.9, 0.99]\n"), Catch::Contains("train.optimizer.betas"));
  REQUIRE_THROWS_WITH(build("type: adam\nbetas: [0.9]\n"), Catch::Contains("two numbers in [0, 1)"));
  REQUIRE_THROWS_WITH(build("type: adam\nbetas: [0.9, 1.5]\n"), Catch::Contains("two numbers in [0, 1)"));
  REQUIRE_THROWS_WITH(build("type: rmsprop\n"), Catch::Contains("type"));
  REQUIRE_THROWS_WITH(build("lr: 0.1\n"), Catch::Contains("type"));
  REQUIRE_THROWS_WITH(build("type: sgd\nlr: -1\n"), Catch::Contains("lr"));
  REQUIRE_THROWS_WITH(build("type: sgd\nmomentum: 0.9\ndampening: 0.1\nnesterov: true\n"),
                      Catch::Contains("test.yaml:1") && Catch::Contains("nesterov"));
  REQUIRE_THROWS_WITH(build("type: adam\nlearning_rate: 0.1\n"), Catch::Contains("learning_rate"));
  REQUIRE_THROWS_AS(build("type: adam\nlr: fast\n"), ConfigError);
  REQUIRE_THROWS_WITH(make_optimizer(YAML::Load("type: sgd"), {}, "test.yaml"), Catch::Contains("no parameters"));
}

TEST_CASE("optim: clip_grad_value_ and clip_grad_norm_ edge cases", "[optim]") {
  const Tensor p = test::random_tensor({6}, DType::F32, 5);
  p.set_requires_grad(true);
  p.set_grad(Tensor::from_vector<float>({-3, -0.5, 0, 0.25, 2, 7}, {6}));
  clip_grad_value_({p}, 1.0);
  REQUIRE(p.grad().to_vector<float>() == std::vector<float>{-1, -0.5, 0, 0.25, 1, 1});
  REQUIRE(clip_grad_norm_({p}, 10.0) == Approx(std::sqrt(1 + 0.25 + 0.0625 + 1 + 1)));
  REQUIRE(p.grad().to_vector<float>()[0] == -1.0f);  // under max_norm: untouched
  const Tensor q = test::random_tensor({2}, DType::F32, 6);
  REQUIRE(clip_grad_norm_({q}, 1.0) == 0.0);  // no gradients
  p.set_grad(Tensor::from_vector<float>({1, std::numeric_limits<float>::infinity(), 0, 0, 0, 0}, {6}));
  REQUIRE_THROWS_WITH(clip_grad_norm_({p}, 1.0, 2.0, true), Catch::Contains("not finite"));
}

}  // namespace ingot::optim

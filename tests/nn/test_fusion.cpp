// Layer fusion (nn/fusion.h): fused and BatchNorm-folded forwards equal the layers run one by one
// (outputs, input and parameter gradients, state after the step) in training and eval, on the
// reference backend and on cpu_onednn when it loads; fusion changes no module, name or tensor.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <optional>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/fusion.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/profiler.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

/// Sets the fusion mode for its scope (a failed REQUIRE must not leave fusion off).
struct FusionScope {
  bool prev = FusionMode::is_enabled();
  explicit FusionScope(bool on) { FusionMode::set_enabled(on); }
  ~FusionScope() { FusionMode::set_enabled(prev); }
};

/// A model from (parameter generator, dropout generator).
using Factory = std::function<ModulePtr(Generator&, Generator*)>;

struct Case {
  const char* name;
  Factory make;
  Shape input;
};

ModulePtr from_yaml(const std::string& yaml, Generator& gen, Generator* dropout_gen) {
  return build_model(YAML::Load(yaml)["model"], "fusion.yaml", gen, dropout_gen);
}

std::vector<Case> cases() {
  return {
      {"mlp relu",
       [](Generator& g, Generator* d) {
         return make_mlp(MlpOptions{{48, 32, 16, 5}, "relu", 0.2}, &g, d);
       },
       {3, 3, 4, 4}},
      {"mlp gelu",
       [](Generator& g, Generator* d) {
         return make_mlp(MlpOptions{{48, 32, 16, 5}, "gelu", 0.0}, &g, d);
       },
       {3, 48}},
      {"simple_cnn",
       [](Generator& g, Generator* d) {
         return make_simple_cnn(SimpleCnnOptions{1, 8, 8, 4, 16, 5, 0.25}, &g, d);
       },
       {2, 1, 8, 8}},
      {"resnet8",
       [](Generator& g, Generator*) {
         return make_resnet(ResNetOptions{8, 4, 3, 5}, &g);
       },
       {2, 3, 8, 8}},
      {"layers list",
       [](Generator& g, Generator* d) {
         return from_yaml(R"(
model:
  layers:
    - {type: conv2d, in: 2, out: 4, kernel: 3, padding: 1}
    - relu
    - {type: conv2d, in: 4, out: 6, kernel: 3, padding: 1}
    - {type: batchnorm2d, features: 6}
    - gelu
    - {type: conv2d, in: 6, out: 6, kernel: 3, padding: 1, bias: false}
    - {type: batchnorm2d, features: 6}
    - {type: maxpool2d, kernel: 2}
    - flatten
    - {type: linear, in: 54, out: 16}
    - gelu
    - {type: linear, in: 16, out: 8}
    - relu
    - {type: dropout, p: 0.3}
    - {type: linear, in: 8, out: 4}
)",
                          g, d);
       },
       {2, 2, 6, 6}},
      {"mobilenet_v2 width 0.25",
       [](Generator& g, Generator* d) {
         return from_yaml(
             "model: {preset: mobilenet_v2, input_shape: [3, 16, 16], width_mult: 0.25, classes: 5, "
             "dropout: 0.0}",
             g, d);
       },
       {2, 3, 16, 16}},
      {"relu6 both sides of its range",  // large weights: outputs below 0, inside and above 6
       [](Generator& g, Generator*) {
         Conv2dOptions o;
         o.padding = {1, 1};
         auto conv = std::make_shared<Conv2d>(3, 4, 3, o, &g);
         auto lin = std::make_shared<Linear>(64, 5, true, &g);
         const NoGradGuard no_grad;
         conv->weight().copy_(conv->weight() * 20.0);
         lin->weight().copy_(lin->weight() * 30.0);
         return std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
             conv, std::make_shared<ReLU6>(), std::make_shared<Flatten>(), lin, std::make_shared<ReLU6>()});
       },
       {2, 3, 4, 4}},
      {"batch norms without affine or running statistics",
       [](Generator& g, Generator*) {
         BatchNormOptions no_affine, batch_stats;
         no_affine.affine = false;
         batch_stats.track_running_stats = false;  // batch statistics in eval too: not folded
         Conv2dOptions o;
         o.padding = {1, 1};
         return std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
             std::make_shared<Conv2d>(2, 3, 3, o, &g), std::make_shared<BatchNorm2d>(3, no_affine),
             std::make_shared<ReLU>(), std::make_shared<Conv2d>(3, 4, 3, o, &g),
             std::make_shared<BatchNorm2d>(4, batch_stats), std::make_shared<ReLU>()});
       },
       {2, 2, 5, 5}},
  };
}

/// BatchNorm statistics and affine parameters away from their initial values (the fold of a
/// fresh BatchNorm is almost the identity and would hide a wrong formula).
void randomize_batch_norms(Module& m, uint64_t seed) {
  NoGradGuard no_grad;
  for (auto& [name, mod] : m.named_modules()) {
    auto* bn = dynamic_cast<BatchNorm2d*>(mod);
    if (bn == nullptr) continue;
    const Shape c{bn->num_features()};
    if (bn->options().track_running_stats) {
      bn->running_mean().copy_(test::random_tensor(c, DType::F32, seed++, -0.5, 0.5));
      bn->running_var().copy_(test::random_tensor(c, DType::F32, seed++, 0.3, 2.0));
    }
    if (bn->options().affine) {
      bn->weight().copy_(test::random_tensor(c, DType::F32, seed++, 0.5, 1.5));
      bn->bias().copy_(test::random_tensor(c, DType::F32, seed++, -0.5, 0.5));
    }
  }
}

/// What one forward (and backward, with `grad`) leaves behind.
struct Outcome {
  Tensor y, grad_x;
  std::vector<Tensor> grads;
  StateDict state;
};

Outcome run(Module& m, const Tensor& x0, bool fused, bool train, bool grad) {
  const FusionScope fusion(fused);
  m.train(train);
  m.zero_grad();
  Outcome o;
  if (grad) {
    const Tensor x = x0.clone().set_requires_grad();
    o.y = m.forward(x).strided();
    // a loss whose gradient differs per element, so every output position is checked
    sum(o.y * test::random_tensor(o.y.shape(), DType::F32, 99)).backward();
    o.grad_x = x.grad();
    for (const Tensor& p : m.parameters()) o.grads.push_back(p.grad());
  } else {
    const NoGradGuard no_grad;
    o.y = m.forward(x0).strided();
  }
  for (const auto& [name, t] : m.state_dict()) o.state.emplace_back(name, t.detach().clone());
  return o;
}

void require_same(const Outcome& a, const Outcome& b, double tol) {
  INGOT_REQUIRE_CLOSE(a.y, b.y, tol, tol);
  REQUIRE(a.grad_x.defined() == b.grad_x.defined());
  if (a.grad_x.defined()) INGOT_REQUIRE_CLOSE(a.grad_x, b.grad_x, tol, tol);
  REQUIRE(a.grads.size() == b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(a.grads[i].defined() == b.grads[i].defined());
    if (a.grads[i].defined()) INGOT_REQUIRE_CLOSE(a.grads[i], b.grads[i], tol, tol);
  }
  REQUIRE(a.state.size() == b.state.size());
  for (size_t i = 0; i < a.state.size(); ++i) {
    INFO(a.state[i].first);
    REQUIRE(a.state[i].first == b.state[i].first);
    INGOT_REQUIRE_CLOSE(a.state[i].second, b.state[i].second, tol, tol);
  }
}

/// The reference backend alone, then everything loaded (cpu_onednn when built).
std::vector<std::vector<std::string>> backend_sets() { return test::backend_sets("fusion"); }

using test::RestoreBackends;

/// Op calls by name during `f` (the profiler's table).
std::map<std::string, int64_t> op_calls(const std::function<void()>& f) {
  Profiler::instance().start();
  f();
  Profiler::instance().stop();
  std::map<std::string, int64_t> calls;
  for (const ProfileRow& r : Profiler::instance().report().rows)
    if (r.category == "op") calls[r.name] += r.calls;
  return calls;
}

}  // namespace

TEST_CASE("nn fusion: fused equals unfused, forward and backward, train and eval", "[nn][fusion]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    for (const Case& c : cases()) {
      // two identical models (same draws, same dropout streams): one runs fused, one not
      Generator ga(11), gb(11), da(5), db(5);
      const ModulePtr a = c.make(ga, &da), b = c.make(gb, &db);
      randomize_batch_norms(*a, 40);
      randomize_batch_norms(*b, 40);
      const StateDict names_before = a->state_dict();
      const std::string repr_before = a->repr();
      const Tensor x = test::random_tensor(c.input, DType::F32, 21);
      for (const bool train : {true, false}) {
        for (const bool grad : {true, false}) {
          INFO(c.name << (backends.empty() ? " on all backends" : " on reference") << (train ? " train" : " eval")
                      << (grad ? " with grad" : " no grad"));
          const Outcome fused = run(*a, x, true, train, grad);
          const Outcome plain = run(*b, x, false, train, grad);
          require_same(fused, plain, train ? 1e-5 : 2e-4);
        }
      }
      // the fusion is an execution detail: same names, shapes, tensors and parameter list
      const StateDict names_after = a->state_dict();
      REQUIRE(names_after.size() == names_before.size());
      for (size_t i = 0; i < names_after.size(); ++i) {
        CHECK(names_after[i].first == names_before[i].first);
        CHECK(names_after[i].second.same_tensor(names_before[i].second));
      }
      CHECK(a->repr() == repr_before);
      CHECK(a->output_shape(c.input) == b->output_shape(c.input));
    }
  }
}

TEST_CASE("nn fusion: activations and eval-mode BatchNorms run inside the matmul / conv", "[nn][fusion]") {
  Generator g(3);
  const auto cnn = make_simple_cnn(SimpleCnnOptions{1, 8, 8, 4, 16, 5, 0.25}, &g);
  const auto mlp = make_mlp(MlpOptions{{48, 32, 16, 5}, "relu", 0.2}, &g);
  const Tensor xc = test::random_tensor({1, 1, 8, 8}, DType::F32, 1);
  const Tensor xm = test::random_tensor({1, 48}, DType::F32, 2);
  cnn->eval();
  mlp->eval();
  const NoGradGuard no_grad;
  const auto forward_both = [&] {
    cnn->forward(xc);
    mlp->forward(xm);
  };
  auto fused = op_calls(forward_both);
  CHECK(fused["conv2d"] == 2);
  CHECK(fused["matmul"] == 5);
  CHECK(fused["relu"] == 0);
  CHECK(fused["batch_norm"] == 0);
  CHECK(fused["dropout"] == 0);
  const FusionScope off(false);
  auto plain = op_calls(forward_both);
  CHECK(plain["relu"] == 5);
  CHECK(plain["batch_norm"] == 2);
  // training: ReLU still fused into the MLP's matmuls, BatchNorm needs the batch statistics
  FusionMode::set_enabled(true);
  cnn->train();
  mlp->train();
  auto train = op_calls([&] {
    cnn->forward(test::random_tensor({2, 1, 8, 8}, DType::F32, 1));
    mlp->forward(xm);
  });
  CHECK(train["batch_norm"] == 2);
  CHECK(train["relu"] == 2);  // the two after the CNN's BatchNorms
  // GELU: fused without a graph; with one it stays separate (its fused gradient would recompute
  // the matmul)
  const auto gelu_mlp = make_mlp(MlpOptions{{48, 32, 16, 5}, "gelu", 0.0}, &g);
  CHECK(op_calls([&] { gelu_mlp->forward(xm); })["gelu"] == 0);
  // MobileNetV2 in eval: every conv + BN + ReLU6 is one conv (the 17 blocks' expansions and
  // depthwise convs, the stem and the last 1x1), no clamp left
  const ModulePtr mobilenet =
      build_model(YAML::Load("{preset: mobilenet_v2, input_shape: [3, 32, 32], width_mult: 0.25, classes: 5}"),
                  "fusion.yaml", g, nullptr);
  mobilenet->eval();
  {
    const NoGradGuard eval_no_grad;
    auto calls = op_calls([&] { mobilenet->forward(test::random_tensor({1, 3, 32, 32}, DType::F32, 4)); });
    CHECK(calls["clamp"] == 0);
    CHECK(calls["batch_norm"] == 0);
    CHECK(calls["conv2d"] == 52);
  }
  const EnableGradGuard grad;
  CHECK(op_calls([&] { gelu_mlp->forward(xm); })["gelu"] == 2);
}

TEST_CASE("nn fusion: folded weights follow parameter changes (training steps, load_state_dict)", "[nn][fusion]") {
  Generator g(7);
  const auto a = make_resnet(ResNetOptions{8, 4, 3, 5}, &g);
  const Tensor x = test::random_tensor({2, 3, 8, 8}, DType::F32, 3);
  const auto eval_both = [&] {
    a->eval();
    const NoGradGuard no_grad;
    const Tensor fused = a->forward(x).strided();
    const FusionScope off(false);
    const Tensor plain = a->forward(x).strided();
    INGOT_REQUIRE_CLOSE(fused, plain, 2e-4, 2e-4);
    return fused;
  };
  const Tensor before = eval_both();
  // a training step: the BatchNorms' running statistics and every weight change in place
  a->train();
  sum(a->forward(x)).backward();
  {
    const NoGradGuard no_grad;
    for (const Tensor& p : a->parameters()) p.copy_(p - p.grad() * 0.1);
  }
  const Tensor after_step = eval_both();
  CHECK(test::excess_error(after_step, before, 1e-3, 0.0) > 0.0);
  // load_state_dict of other weights
  Generator g2(8);
  a->load_state_dict(make_resnet(ResNetOptions{8, 4, 3, 5}, &g2)->state_dict());
  const Tensor after_load = eval_both();
  CHECK(test::excess_error(after_load, after_step, 1e-3, 0.0) > 0.0);
}

TEST_CASE("nn fusion: fold_batch_norm formula and its refusal in training", "[nn][fusion]") {
  Conv2dOptions o;
  o.bias = true;
  Generator g(2);
  Conv2d conv(2, 3, 1, o, &g);
  BatchNorm2d bn(3);
  randomize_batch_norms(bn, 4);
  CHECK_THROWS_WITH(fold_batch_norm(conv, bn), Catch::Contains("batch statistics"));
  bn.eval();
  for (const bool grad : {false, true}) {
    // with grad the fold is built from ops (differentiable), without it on the host
    std::optional<NoGradGuard> no_grad;
    if (!grad) no_grad.emplace();
    const FoldedConv f = fold_batch_norm(conv, bn);
    CHECK(f.weight.requires_grad() == grad);
    const Tensor scale = bn.weight() / sqrt(bn.running_var() + 1e-5);
    INGOT_REQUIRE_CLOSE(f.weight, conv.weight() * scale.reshape({3, 1, 1, 1}), 1e-6, 1e-6);
    INGOT_REQUIRE_CLOSE(f.bias, bn.bias() + (conv.bias() - bn.running_mean()) * scale, 1e-6, 1e-6);
  }
}

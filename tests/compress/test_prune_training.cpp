// Pruning while training: masks on gradients and weights around optimizer steps, the gradual
// schedule's masks at its update points, the gradual_prune callback's start and end, random
// masks from the seed, and make_permanent dropping the masks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <sstream>

#include "ingot/nn/presets.h"
#include "ingot/ops/ops.h"
#include "ingot/optim/sgd.h"
#include "mask_callback.h"
#include "pruner.h"
#include "test_support.h"

namespace ingot::prune {
namespace {

using Catch::Matchers::Contains;

std::shared_ptr<nn::Sequential> mlp() {
  Generator gen(11);
  return nn::make_mlp({{12, 10, 6, 3}, "relu", 0.0}, &gen);
}

PruneConfig config(Method method, double amount) {
  PruneConfig c;
  c.method = method;
  c.amount = Amount::of_fraction(amount);
  c.where = "test";
  return c;
}

/// One training step of `model` through the callback points, as train_loop calls them.
struct Stepper {
  nn::Module& model;
  optim::SGD opt;
  train::TrainPosition pos;
  train::TrainState state;
  Tensor x;

  explicit Stepper(nn::Module& m)
      : model(m), opt(m.parameters(), optim::SgdOptions{0.1, 0.9}), state{m, opt, pos},
        x(test::random_tensor({4, 12}, DType::F32, 5)) {}

  /// forward, backward, `cb` before the step, the step, `cb` after it.
  void step(train::TrainCallback& cb, const std::function<void()>& before_step = {}) {
    opt.zero_grad();
    const Tensor y = model(x);
    sum(y * y).backward();
    cb.before_optimizer_step(state);
    if (before_step) before_step();
    opt.step();
    cb.after_optimizer_step(state);
    ++pos.step;
  }
};

std::vector<float> host(const Tensor& t) { return t.to_vector<float>(); }

TEST_CASE("masks survive optimizer steps: masked gradients zeroed before, masked weights after", "[prune][train]") {
  auto model = mlp();
  auto pruner = std::make_shared<Pruner>(*model, config(Method::L1Unstructured, 0.5), 0);
  pruner->prune(Amount::of_fraction(0.5));
  MaskCallback cb(pruner, std::nullopt, 0.5);
  Stepper s(*model);
  const std::vector<float> start = host(pruner->targets()[0].weight);
  for (int i = 0; i < 3; ++i)
    s.step(cb, [&] {
      for (const Target& t : pruner->targets()) {
        const std::vector<float> g = host(t.weight.grad()), m = t.mask;
        for (size_t k = 0; k < g.size(); ++k)
          if (m[k] == 0.0f) REQUIRE(g[k] == 0.0f);
      }
    });
  int64_t moved = 0;
  for (const Target& t : pruner->targets()) {
    const std::vector<float> w = host(t.weight);
    REQUIRE(count_pruned(t.mask) == t.weight.numel() / 2);
    for (size_t k = 0; k < w.size(); ++k)
      if (t.mask[k] == 0.0f) REQUIRE(w[k] == 0.0f);
  }
  const std::vector<float> now = host(pruner->targets()[0].weight);
  for (size_t k = 0; k < now.size(); ++k) moved += now[k] != start[k];
  REQUIRE(moved > 0);  // the kept weights did train
  // Without the callback, momentum moves the pruned weights again: the masks are what holds them.
  struct None final : train::TrainCallback {
    const char* name() const override { return "none"; }
  } none;
  s.step(none);
  REQUIRE(count_pruned(host(pruner->targets()[0].weight)) < pruner->targets()[0].weight.numel() / 2);
}

TEST_CASE("gradual schedule: masks rise at the update points and reach the amount at the end", "[prune][schedule]") {
  auto model = mlp();
  auto pruner = std::make_shared<Pruner>(*model, config(Method::L1Unstructured, 0.8), 0);
  const ZhuGupta z{4, 2, 0.1, 1};  // updates before steps 2, 4 and 6 (t = 1, 3, 5)
  MaskCallback cb(pruner, z, 0.8);
  Stepper s(*model);
  std::vector<double> seen;
  for (int i = 0; i < 7; ++i) {
    s.step(cb);
    seen.push_back(pruner->sparsity());
  }
  const auto at = [&](int64_t t) {
    double pruned = 0, all = 0;
    for (const Target& tg : pruner->targets()) {
      const auto n = static_cast<double>(tg.weight.numel());
      pruned += static_cast<double>(round_half_even(z.sparsity_at(t, 0.8) * n));
      all += n;
    }
    return pruned / all;
  };
  REQUIRE(seen[0] == 0.0);
  REQUIRE(seen[1] > 0.0);
  REQUIRE(seen[1] == Approx(at(1)));
  REQUIRE(seen[2] == seen[1]);
  REQUIRE(seen[3] == Approx(at(3)));
  REQUIRE(seen[3] > seen[1]);
  REQUIRE(seen[5] == Approx(0.8).margin(0.01));
  REQUIRE(seen[6] == seen[5]);
  REQUIRE(cb.reached_final());
  // Composition: the weights pruned early stay pruned (masks only grow).
  REQUIRE(count_pruned(host(pruner->targets()[0].weight)) >= count_pruned(pruner->targets()[0].mask));
}

TEST_CASE("gradual_prune callback: starts on the first step, ends permanent with a report", "[prune][train]") {
  auto model = mlp();
  PruneConfig c = config(Method::GlobalUnstructured, 0.6);
  c.schedule = ZhuGupta{4, 1, 0.0, 0};
  std::ostringstream out;
  GradualPrune cb(c, out);
  Stepper s(*model);
  for (int i = 0; i < 3; ++i) s.step(cb);  // stops before the schedule's end (t = 4)
  cb.on_stage_end(s.state, "train");
  int64_t zeros = 0, all = 0;
  for (const auto& [name, p] : model->named_parameters())
    if (name.find("weight") != std::string::npos) {
      const std::vector<float> w = host(p);
      zeros += static_cast<int64_t>(std::count(w.begin(), w.end(), 0.0f));
      all += p.numel();
    }
  REQUIRE(zeros == round_half_even(0.6 * static_cast<double>(all)));
  REQUIRE_THAT(out.str(), Contains("training stopped before it") && Contains("gradual_prune (train)") &&
                              Contains("global L1 60%") && Contains("no speed-up"));
  // Permanent: the masks are gone, so training moves the zeros again; a later stage end is quiet.
  s.step(cb);
  const std::vector<float> w = host(model->named_parameters().front().second);
  REQUIRE(static_cast<int64_t>(std::count(w.begin(), w.end(), 0.0f)) < zeros);
  const size_t len = out.str().size();
  cb.on_stage_end(s.state, "evaluate");
  REQUIRE(out.str().size() == len);
}

TEST_CASE("gradual_prune resumed mid-schedule keeps the weights' zeros and catches up", "[prune][train]") {
  auto model = mlp();
  {  // what the interrupted run left: 30% of each layer zero
    Pruner earlier(*model, config(Method::L1Unstructured, 0.3), 0);
    earlier.prune(Amount::of_fraction(0.3));
    earlier.make_permanent();
  }
  const std::vector<float> zero_before = host(model->get_submodule("1")->named_parameters().front().second);
  PruneConfig c = config(Method::L1Unstructured, 0.6);
  c.schedule = ZhuGupta{10, 5, 0.0, 0};
  std::ostringstream out;
  GradualPrune cb(c, out);
  Stepper s(*model);
  s.pos.step = 7;  // resumed after 7 steps: the last update point was 5, s_5 = 0.6 - 0.6 / 8
  s.step(cb);
  for (const char* layer : {"1", "3", "5"}) {
    const std::vector<float> w = host(model->get_submodule(layer)->named_parameters().front().second);
    REQUIRE(static_cast<int64_t>(std::count(w.begin(), w.end(), 0.0f)) ==
            round_half_even(0.525 * static_cast<double>(w.size())));
  }
  const std::vector<float> w1 = host(model->get_submodule("1")->named_parameters().front().second);
  for (size_t k = 0; k < w1.size(); ++k)
    if (zero_before[k] == 0.0f) REQUIRE(w1[k] == 0.0f);
}

TEST_CASE("gradual_prune with ln_structured shrinks the layers when its stage ends", "[prune][train]") {
  auto model = mlp();
  PruneConfig c = config(Method::LnStructured, 0.5);
  c.n = 2;
  c.schedule = ZhuGupta{2, 1, 0.0, 0};
  std::ostringstream out;
  GradualPrune cb(c, out);
  Stepper s(*model);
  for (int i = 0; i < 4; ++i) s.step(cb);
  const Tensor y = (*model)(s.x);
  cb.on_stage_end(s.state, "train");
  REQUIRE(model->get_submodule("1")->named_parameters().front().second.shape() == Shape{5, 12});
  REQUIRE(model->get_submodule("3")->named_parameters().front().second.shape() == Shape{3, 5});
  REQUIRE(model->get_submodule("5")->named_parameters().front().second.shape() == Shape{3, 3});
  INGOT_REQUIRE_CLOSE((*model)(s.x), y, 1e-5, 0.0);
  REQUIRE_THAT(out.str(), Contains("L2 structured 50%: 2 linears shrunk"));
}

TEST_CASE("random_unstructured: the amount of each layer, drawn from the seed", "[prune][train]") {
  const auto masks = [](uint64_t seed) {
    auto model = mlp();
    Pruner p(*model, config(Method::RandomUnstructured, 0.3), seed);
    p.prune(Amount::of_fraction(0.3));
    std::vector<Mask> out;
    for (const Target& t : p.targets()) {
      REQUIRE(count_pruned(t.mask) == round_half_even(0.3 * static_cast<double>(t.weight.numel())));
      out.push_back(t.mask);
    }
    return out;
  };
  REQUIRE(masks(1) == masks(1));
  REQUIRE(masks(1) != masks(2));
}

TEST_CASE("make_permanent: masks folded into the weights and dropped (torch's prune.remove)", "[prune][train]") {
  auto model = mlp();
  auto pruner = std::make_shared<Pruner>(*model, config(Method::L1Unstructured, 0.5), 0);
  pruner->prune(Amount::of_fraction(0.5));
  const Tensor w = pruner->targets()[0].weight;
  const Shape shape = w.shape();
  REQUIRE(pruner->make_permanent().empty());  // unstructured: no layer changes shape
  REQUIRE(pruner->targets().empty());
  REQUIRE(model->get_submodule("1")->named_parameters().front().second.same_tensor(w));
  REQUIRE(w.shape() == shape);
  REQUIRE(count_pruned(host(w)) == w.numel() / 2);
  MaskCallback cb(pruner, std::nullopt, 0.0);  // an empty pruner masks nothing
  Stepper s(*model);
  s.step(cb);
  REQUIRE(count_pruned(host(w)) < w.numel() / 2);
}

}  // namespace
}  // namespace ingot::prune

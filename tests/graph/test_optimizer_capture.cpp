// A captured optimizer step (train.compile): the host half (prepare_step) each step, the updates
// (run_updates) captured and replayed. The replay reads each step's lr and step count from the
// hyper-parameter tensors, so it equals optimizer.step() bit for bit while the schedule changes the
// lr every step; new state tensors (load_state_dict) fail the guard and compile another graph.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/autograd/hooks.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/sgd.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::MlpStep;
using ingot::test::same_bits;

namespace {

/// `steps` steps of two equal MLPs: `eager` with optimizer.step(), `compiled` with its updates
/// captured. The lr changes each step; `reload_at` > 0 reloads both optimizers' state there;
/// `hook_calls`, when given, counts the calls of a gradient hook on every parameter of the
/// compiled model.
/// Checks the weights after every step; returns the compiled updates' stats.
template <class Opt, class Options>
CompileStats updates_side_by_side(const Options& options, int steps, int reload_at = 0, int* hook_calls = nullptr) {
  MlpStep eager, compiled;
  Opt opt_e(eager.params(), options), opt_c(compiled.params(), options);
  REQUIRE(opt_c.capturable());
  std::vector<Tensor> params = compiled.params();
  CompiledStep updates(CompileOptions{}, params);
  if (hook_calls != nullptr)  // as data parallelism's: backward calls it, the optimizer's graph does not
    for (const Tensor& p : params)
      autograd::register_post_accumulate_grad_hook(p, [hook_calls](const Tensor&) { ++*hook_calls; });
  for (int i = 0; i < steps; ++i) {
    const auto b = MlpStep::batch(8, static_cast<uint64_t>(40 + i));
    eager.step(b);
    compiled.step(b);
    const double lr = options.lr * (1.0 + 0.5 * std::cos(0.7 * i));  // a new lr every step
    opt_e.param_groups()[0].options.set_lr(lr);
    opt_c.param_groups()[0].options.set_lr(lr);
    if (i == reload_at && reload_at > 0) {  // fresh state tensors, the same values
      opt_e.load_state_dict(opt_e.state_dict());
      opt_c.load_state_dict(opt_c.state_dict());
    }
    opt_e.step();
    opt_c.prepare_step();
    updates.run({}, {{"updates", opt_c.updates_key()}}, [&] {
      opt_c.run_updates();
      return std::vector<Tensor>{};
    });
    opt_c.discard_updates();
    for (size_t k = 0; k < params.size(); ++k) {
      INFO("step " << i << ", parameter " << k);
      CHECK(same_bits(compiled.params()[k], eager.params()[k]));
    }
    eager.zero_grad();
    compiled.zero_grad();
  }
  return updates.stats();
}

}  // namespace

TEST_CASE("optimizer capture: AdamW's updates replay with each step's lr and bias corrections, bit for bit") {
  test::on_each_backend_set("the captured optimizer step", [](bool) {
    optim::AdamWOptions o;
    o.lr = 1e-2;
    o.weight_decay = 0.1;
    const CompileStats s = updates_side_by_side<optim::AdamW>(o, 10);
    CHECK(s.eager == 1);
    CHECK(s.captured == 2);
    CHECK(s.replayed == 7);
    CHECK(s.graphs == 1);
    CHECK(s.fallback.empty());
  });
}

TEST_CASE("optimizer capture: Adam with amsgrad and SGD with nesterov momentum replay bit for bit") {
  test::on_each_backend_set("the captured optimizer step", [](bool) {
    optim::AdamOptions a;
    a.lr = 1e-2;
    a.weight_decay = 1e-3;
    a.amsgrad = true;
    CHECK(updates_side_by_side<optim::Adam>(a, 8).replayed == 5);
    optim::SgdOptions s;
    s.lr = 0.1;
    s.momentum = 0.9;
    s.nesterov = true;
    s.weight_decay = 1e-4;
    CHECK(updates_side_by_side<optim::SGD>(s, 8).replayed == 5);
    s.momentum = 0.0;
    s.nesterov = false;
    CHECK(updates_side_by_side<optim::SGD>(s, 8).replayed == 5);
  });
}

TEST_CASE("optimizer capture: new state tensors (load_state_dict) compile another graph, same bits") {
  optim::SgdOptions s;
  s.lr = 0.1;
  s.momentum = 0.9;
  const CompileStats st = updates_side_by_side<optim::SGD>(s, 12, 6);
  CHECK(st.graphs == 2);
  CHECK(st.replayed == 12 - 6);  // each key: one eager step, two captures
}

TEST_CASE("optimizer capture: gradient hooks (data parallelism's) do not keep the optimizer step eager") {
  optim::SgdOptions s;
  s.lr = 0.1;
  s.momentum = 0.9;
  int calls = 0;
  const CompileStats st = updates_side_by_side<optim::SGD>(s, 6, 0, &calls);
  CHECK(st.replayed == 3);
  CHECK(st.fallback.empty());
  CHECK(calls == 6 * static_cast<int>(MlpStep().params().size()));  // backward's only: one per parameter and step
}

// StepGate, the trainer's optimizer-step decision on its own: finite gradients step; on_nonfinite
// stop throws naming the step and the quantity; skip_step skips and counts, up to max_skipped in
// a row; a weight gone non-finite always stops; a loss scaler's overflow skips and backs off.
#include <catch2/catch.hpp>

#include <limits>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/linear.h"
#include "ingot/ops/creation.h"
#include "ingot/train/step_gate.h"

using namespace ingot;
using namespace ingot::train;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A Linear(3 -> 2) whose gradients are all `g` (its weight's first element `first` instead).
struct Model {
  Generator gen{1};
  nn::Linear layer{3, 2, true, &gen};

  void grads(double g, double first) {
    for (const Tensor& p : layer.parameters()) p.set_grad(full(p.shape(), g));
    const NoGradGuard no_grad;
    layer.parameters().front().grad().slice(0, 0, 1).slice(1, 0, 1).fill_(first);
  }
};

TrainConfig nonfinite_config(const std::string& on_nonfinite, int64_t max_skipped = 10) {
  TrainConfig c;
  c.on_nonfinite = on_nonfinite;
  c.max_skipped = max_skipped;
  return c;
}

}  // namespace

TEST_CASE("step gate: finite gradients step, stop names the step and what is not finite", "[train][nonfinite]") {
  Model m;
  StepGate gate(nonfinite_config("stop"), m.layer, nullptr, nullptr);
  m.grads(0.5, 0.5);
  CHECK(gate.decide(1, "").outcome == StepOutcome::Step);
  m.grads(0.5, kNaN);
  CHECK_THROWS_WITH(gate.decide(2, ""), "step 2: the gradient of weight is not finite");
  m.grads(0.5, 0.5);  // a non-finite loss names the loss while the weights are fine
  CHECK_THROWS_AS(gate.decide(3, "the loss (NaN)"), NonFiniteError);
  CHECK_THROWS_WITH(gate.decide(3, "the loss (NaN)"), "step 3: the loss (NaN) is not finite");
}

TEST_CASE("step gate: skip_step skips and counts up to max_skipped in a row, a bad weight stops",
          "[train][nonfinite]") {
  Model m;
  StepGate gate(nonfinite_config("skip_step", 2), m.layer, nullptr, nullptr);
  m.grads(0.5, kNaN);
  const StepDecision d = gate.decide(1, "");
  CHECK(d.outcome == StepOutcome::SkipNonFinite);
  CHECK(d.what == "step 1: the gradient of weight is not finite");
  CHECK(gate.skipped() == 1);
  m.grads(0.5, 0.5);
  CHECK(gate.decide(1, "").outcome == StepOutcome::Step);  // a step: the run of skips starts over
  m.grads(0.5, kNaN);
  CHECK(gate.decide(2, "").outcome == StepOutcome::SkipNonFinite);
  CHECK_THROWS_WITH(
      gate.decide(2, "the loss (inf)"),
      "step 2: the loss (inf) is not finite, and that made 2 steps in a row skipped (train.max_skipped: 2)");
  CHECK(gate.skipped() == 3);

  StepGate fresh(nonfinite_config("skip_step"), m.layer, nullptr, nullptr);
  {
    const NoGradGuard no_grad;
    m.layer.parameters().back().fill_(kNaN);  // the bias
  }
  CHECK_THROWS_WITH(fresh.decide(5, "the loss (NaN)"), "step 5: the weight bias is not finite");
}

TEST_CASE("step gate: with a loss scaler, overflowed gradients skip the step and back the scale off",
          "[train][nonfinite][amp]") {
  Model m;
  amp::GradScalerOptions o;
  o.init_scale = 1024.0;
  amp::GradScaler scaler(o);
  StepGate gate(nonfinite_config("stop"), m.layer, &scaler, nullptr);
  m.grads(512.0, 512.0);  // scaled gradients: unscale_ divides them by 1024
  CHECK(gate.decide(1, "").outcome == StepOutcome::Step);
  CHECK(m.layer.parameters().front().grad().to_vector<float>()[1] == 0.5f);
  scaler.update(false);  // (the trainer's, after the optimizer step)
  m.grads(512.0, std::numeric_limits<double>::infinity());
  CHECK(gate.decide(2, "").outcome == StepOutcome::Overflow);
  CHECK(scaler.get_scale() == 512.0);
  CHECK(gate.skipped() == 0);  // an overflow is the scaler's skip, not skip_step's

  amp::GradScalerOptions floor = o;
  floor.min_scale = 1024.0;
  amp::GradScaler at_floor(floor);
  StepGate stuck(nonfinite_config("stop"), m.layer, &at_floor, nullptr);
  m.grads(512.0, std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH(stuck.decide(7, ""), Catch::Contains("step 7: the gradients are not finite at the smallest loss "
                                                         "scale allowed (1024 = train.amp.loss_scale.min_scale)"));
}

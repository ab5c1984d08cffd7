// The trainer's non-finite guard: skip_step leaves the weights untouched on the steps whose loss
// is NaN and trains on; stop throws NonFiniteError naming the step; a weight that becomes
// non-finite after the step is named by parameter.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"
#include "ingot/train/trainer.h"
#include "small_training.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::train;

namespace {

/// Adds NaN to the loss of the listed batches, or sets a weight to inf after a chosen step.
class Poison final : public TrainCallback {
 public:
  const char* name() const override { return "poison"; }
  Tensor extra_loss(TrainState&, const data::Batch& b, const Tensor&, const Tensor& loss) override {
    seen_batch = b.index;
    return nan_batches.count(b.index) ? mul(loss, std::numeric_limits<double>::quiet_NaN()) : Tensor();
  }
  void after_backward(TrainState& s) override {
    if (nan_batches.count(seen_batch)) before.push_back(s.model.parameters().front().detach().clone());
  }
  void before_optimizer_step(TrainState& s) override {
    if (!inf_weight) return;
    NoGradGuard no_grad;
    s.model.parameters().front().slice(0, 0, 1).fill_(std::numeric_limits<double>::infinity());
  }
  void after_optimizer_step(TrainState&) override { ++steps; }

  std::set<int64_t> nan_batches;
  bool inf_weight = false;
  int64_t seen_batch = -1;
  int steps = 0;
  std::vector<Tensor> before;
};

struct Result {
  TrainPosition position;
  int steps = 0;
  std::vector<Tensor> weights;
};

Result run(const std::string& mode, std::set<int64_t> nan_batches, bool inf_weight = false) {
  Poison poison;
  poison.nan_batches = std::move(nan_batches);
  poison.inf_weight = inf_weight;
  test::SmallTraining t;
  t.samples = 64;
  t.config.on_nonfinite = mode;
  t.config.max_skipped = 3;
  t.callbacks = {&poison};
  const test::SmallTraining::Result result = t.run();  // may throw NonFiniteError
  CHECK(result.status == TrainStatus::Finished);
  return Result{result.position, poison.steps, result.weights};
}

}  // namespace

TEST_CASE("non-finite guard: skip_step skips the poisoned steps and trains on", "[train][nonfinite]") {
  const Result r = run("skip_step", {2, 5});
  CHECK(r.steps == 6);  // 8 batches, 2 skipped
  CHECK(r.position.step == 6);
  CHECK(r.position.epoch == 1);  // the whole epoch consumed
  for (const Tensor& w : r.weights)
    for (float v : w.to_vector<float>()) REQUIRE(std::isfinite(v));
}

TEST_CASE("non-finite guard: stop names the step, max_skipped ends a run that keeps failing", "[train][nonfinite]") {
  REQUIRE_THROWS_MATCHES(run("stop", {3}), NonFiniteError,
                         Catch::Matchers::Message("step 4: the loss (NaN) is not finite"));
  REQUIRE_THROWS_WITH(run("skip_step", {1, 2, 3}),
                      Catch::Contains("step 2: the loss (NaN) is not finite, and that made 3 steps in a row skipped"));
}

TEST_CASE("non-finite guard: a weight that went non-finite is named, in either mode", "[train][nonfinite]") {
  // The weight is poisoned before step 1's update; step 2's loss is then NaN, and the cause named.
  REQUIRE_THROWS_MATCHES(run("stop", {}, true), NonFiniteError,
                         Catch::Matchers::Message("step 2: the weight 1.weight is not finite"));
  REQUIRE_THROWS_MATCHES(run("skip_step", {}, true), NonFiniteError,
                         Catch::Matchers::Message("step 2: the weight 1.weight is not finite"));
}

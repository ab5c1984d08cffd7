// Trainer callbacks: each point of the loop is reached in order and as often as it should be; an
// extra loss changes the gradients as a loss term would; a change after the optimizer step sticks.
#include <catch2/catch.hpp>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"
#include "ingot/train/trainer.h"
#include "small_training.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::train;

namespace {

/// Records every call; optionally doubles the loss and zeroes one weight after each step.
class Recorder final : public TrainCallback {
 public:
  const char* name() const override { return "recorder"; }
  void on_step_begin(TrainState&, const data::Batch&) override { log.push_back("begin"); }
  Tensor extra_loss(TrainState&, const data::Batch&, const Tensor& output, const Tensor& loss) override {
    CHECK(output.dim() == 2);
    return double_loss ? loss : Tensor();
  }
  void after_backward(TrainState&) override { log.push_back("backward"); }
  void before_optimizer_step(TrainState& s) override {
    CHECK(s.model.parameters().front().grad().defined());
    log.push_back("before_step");
  }
  void after_optimizer_step(TrainState& s) override {
    log.push_back("after_step");
    if (zero_first_weight) {
      NoGradGuard no_grad;
      s.model.parameters().front().slice(0, 0, 1).fill_(0.0);
    }
  }
  void on_epoch_end(TrainState& s) override { log.push_back("epoch " + std::to_string(s.epoch)); }

  std::vector<std::string> log;
  bool double_loss = false;
  bool zero_first_weight = false;
};

struct Run {
  std::vector<Tensor> weights;
  std::vector<std::string> log;
};

/// One epoch of 4 batches (accumulate 2: 2 steps) of SGD on a small MLP.
Run train_run(double lr, bool double_loss, bool zero_first_weight) {
  Recorder rec;
  rec.double_loss = double_loss;
  rec.zero_first_weight = zero_first_weight;
  test::SmallTraining t;
  t.lr = lr;
  t.config.accumulate = 2;
  t.callbacks = {&rec};
  const test::SmallTraining::Result result = t.run();
  REQUIRE(result.status == TrainStatus::Finished);
  return Run{result.weights, rec.log};
}

}  // namespace

TEST_CASE("trainer callbacks: every point of the loop, in order", "[train][callbacks]") {
  const Run r = train_run(0.1, false, false);
  const std::vector<std::string> step{"begin", "backward", "begin", "backward", "before_step", "after_step"};
  std::vector<std::string> expected = step;
  expected.insert(expected.end(), step.begin(), step.end());
  expected.push_back("epoch 0");
  CHECK(r.log == expected);
}

TEST_CASE("trainer callbacks: an extra loss is a loss term, a change after the step stays", "[train][callbacks]") {
  // SGD without momentum: adding the loss to itself doubles the gradient, i.e. doubles the lr.
  const Run doubled = train_run(0.1, true, false);
  const Run faster = train_run(0.2, false, false);
  for (size_t i = 0; i < doubled.weights.size(); ++i)
    INGOT_REQUIRE_CLOSE(doubled.weights[i], faster.weights[i], 1e-6, 1e-5);
  const Run masked = train_run(0.1, false, true);
  const std::vector<float> row = masked.weights.front().slice(0, 0, 1).to_vector<float>();
  CHECK(row == std::vector<float>(row.size(), 0.0f));
}

// train.compile in the training loop: the same weights, position and generator state as the eager
// loop, bit for bit — with a short last batch (a second graph), gradient accumulation (micro-batches
// that add to existing gradients), bf16 autocast, fp16 loss scaling, and a captured optimizer step
// under a schedule that changes the lr every step.
#include <catch2/catch.hpp>

#include "small_training.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::train;
using ingot::test::SmallTraining;

namespace {

void check_same_run(SmallTraining eager) {
  SmallTraining compiled = eager;
  compiled.config.compile.enabled = true;
  const auto a = eager.run();
  const auto b = compiled.run();
  CHECK(a.status == TrainStatus::Finished);
  CHECK(b.status == a.status);
  CHECK(b.position.step == a.position.step);
  CHECK(b.position.rng == a.position.rng);
  REQUIRE(a.weights.size() == b.weights.size());
  for (size_t i = 0; i < a.weights.size(); ++i) CHECK(test::compare(b.weights[i], a.weights[i], 0.0, 0.0) == "");
}

}  // namespace

TEST_CASE("trainer compile: the weights of 3 epochs equal the eager loop's bit for bit", "[train][compile]") {
  SmallTraining t;
  t.samples = 36;  // a short last batch of 4: its own graph
  t.config.epochs = 3;
  check_same_run(t);
}

TEST_CASE("trainer compile: AdamW under a cosine schedule, its updates captured, equals the eager loop",
          "[train][compile]") {
  SmallTraining t;
  t.samples = 64;
  t.config.epochs = 3;
  t.lr = 0.01;
  t.adamw = true;
  t.schedule = "{type: cosine}";  // a new lr every step, and AdamW's bias corrections change each step
  check_same_run(t);
}

TEST_CASE("trainer compile: SGD with momentum under a step schedule equals the eager loop", "[train][compile]") {
  SmallTraining t;
  t.samples = 64;
  t.config.epochs = 3;
  t.momentum = 0.9;
  t.schedule = "{type: step, step_size: 3, gamma: 0.5}";
  check_same_run(t);
}

TEST_CASE("trainer compile: gradient accumulation replays the micro-batches that add to gradients", "[train][compile]") {
  SmallTraining t;
  t.samples = 64;
  t.config.epochs = 2;
  t.config.accumulate = 2;
  check_same_run(t);
}

TEST_CASE("trainer compile: bf16 autocast gives the eager loop's weights", "[train][compile]") {
  SmallTraining t;
  t.samples = 64;
  t.config.epochs = 2;
  t.config.amp.enabled = true;
  t.config.amp.dtype = DType::BF16;
  check_same_run(t);
}

TEST_CASE("trainer compile: fp16 with loss scaling reads the live scale at each replay", "[train][compile]") {
  SmallTraining t;
  t.samples = 64;
  t.config.epochs = 3;
  t.config.amp.enabled = true;
  t.config.amp.dtype = DType::F16;
  amp::GradScalerOptions so;
  so.enabled = true;
  so.growth_interval = 3;  // the scale doubles every 3 steps: a stale copy would show
  amp::GradScaler scaler_a(so), scaler_b(so);
  SmallTraining compiled = t;
  t.scaler = &scaler_a;
  compiled.scaler = &scaler_b;
  compiled.config.compile.enabled = true;
  const auto a = t.run();
  const auto b = compiled.run();
  CHECK(scaler_a.get_scale() == scaler_b.get_scale());
  CHECK(scaler_a.get_scale() > 65536.0);
  for (size_t i = 0; i < a.weights.size(); ++i) CHECK(test::compare(b.weights[i], a.weights[i], 0.0, 0.0) == "");
}

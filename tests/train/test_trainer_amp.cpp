// Mixed precision in the training loop: autocast per optimizer step (f32 weights, each weight
// cast once per step however many micro-batches), and the loss scaler's contract — an overflowed
// step is skipped without advancing the schedule, the scale backs off and grows, min_scale stops
// the run, and a run resumed from the scaler's state continues bit-identically.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "ingot/amp/autocast.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/creation.h"
#include "ingot/train/nonfinite_guard.h"
#include "small_training.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::train;

namespace {

/// Puts an inf into the first parameter's gradient after the backward pass of the chosen
/// micro-batches (0-based, counted over the run), as an fp16 overflow would.
class InjectInf final : public TrainCallback {
 public:
  explicit InjectInf(std::vector<int64_t> at) : at_(std::move(at)) {}
  const char* name() const override { return "inject_inf"; }
  void after_backward(TrainState& s) override {
    if (std::find(at_.begin(), at_.end(), micro_++) == at_.end()) return;
    const Tensor p = s.model.parameters().front();
    p.set_grad(full(p.shape(), std::numeric_limits<double>::infinity()));
  }
  void before_optimizer_step(TrainState& s) override { lrs.push_back(s.optimizer.param_groups()[0].options.lr()); }
  std::vector<double> lrs;

 private:
  std::vector<int64_t> at_;
  int64_t micro_ = 0;
};

train::AmpConfig amp_config(DType dtype, bool scaler) {
  train::AmpConfig a;
  a.enabled = true;
  a.dtype = dtype;
  a.scaler.enabled = scaler;
  return a;
}

}  // namespace

TEST_CASE("trainer amp: bf16 autocast trains f32 weights, casting each weight once per step", "[train][amp]") {
  test::SmallTraining plain;
  plain.samples = 48;
  test::SmallTraining mixed = plain;
  mixed.config.amp = amp_config(DType::BF16, false);
  mixed.config.accumulate = 3;  // 6 batches: 2 steps of 3 micro-batches
  const amp::CastCacheStats before = amp::cast_cache_stats();
  const auto r = mixed.run();
  const amp::CastCacheStats after = amp::cast_cache_stats();
  REQUIRE(r.status == TrainStatus::Finished);
  CHECK(r.position.step == 2);
  for (const Tensor& w : r.weights) CHECK(w.dtype() == DType::F32);
  // 4 parameters (2 Linear layers) cast once per step, reused by the other micro-batches.
  CHECK(after.casts - before.casts == 2 * 4);
  CHECK(after.hits - before.hits == 2 * 4 * 2);
  // bf16 training follows f32 training closely on this small problem.
  plain.config.accumulate = 3;
  const auto f32 = plain.run();
  for (size_t i = 0; i < r.weights.size(); ++i) CHECK(test::compare(r.weights[i], f32.weights[i], 2e-2, 5e-2) == "");
}

TEST_CASE("trainer amp: an overflowed step is skipped, backs the scale off and leaves the schedule", "[train][amp]") {
  amp::GradScalerOptions o;
  o.init_scale = 1024.0;
  o.growth_interval = 2;
  amp::GradScaler scaler(o);
  InjectInf inject({1, 2, 6});
  test::SmallTraining t;
  t.samples = 80;  // 10 steps of batch 8
  t.schedule = "{type: linear, start_factor: 1.0, end_factor: 0.1}";
  t.config.amp = amp_config(DType::BF16, true);
  t.scaler = &scaler;
  t.callbacks = {&inject};
  const auto r = t.run();
  REQUIRE(r.status == TrainStatus::Finished);
  CHECK(scaler.skipped_steps() == 3);
  CHECK(r.position.step == 7);  // 10 batches, 3 of them skipped
  // Steps taken: batch 0 (clean, tracker 1), 1 and 2 overflow (1024 -> 512 -> 256), 3, 4 clean
  // (grow to 512), 5 clean, 6 overflows (-> 256), 7, 8 clean (-> 512), 9 clean.
  CHECK(scaler.get_scale() == 512.0);
  CHECK(scaler.growth_tracker() == 1);
  // The lr of the 7 real steps is the schedule's at steps 0..6: skipped steps did not advance it.
  REQUIRE(inject.lrs.size() == 7);
  const auto sched = optim::make_schedule(YAML::Load(t.schedule), "test", 7);
  for (size_t k = 0; k < inject.lrs.size(); ++k) CHECK(inject.lrs[k] == Approx(sched->lr(static_cast<int64_t>(k), t.lr)));
  for (const Tensor& w : r.weights) CHECK(NonFiniteGuard({{"w", w}}).check_weights() == "");
}

TEST_CASE("trainer amp: a scale that would fall below min_scale stops the run", "[train][amp]") {
  amp::GradScalerOptions o;
  o.init_scale = 8.0;
  o.min_scale = 2.0;
  amp::GradScaler scaler(o);
  InjectInf inject({0, 1, 2, 3, 4, 5, 6, 7});
  test::SmallTraining t;
  t.samples = 64;
  t.config.amp = amp_config(DType::BF16, true);
  t.scaler = &scaler;
  t.callbacks = {&inject};
  try {
    (void)t.run();
    FAIL("expected NonFiniteError");
  } catch (const NonFiniteError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("step 1: the gradients are not finite at the smallest loss scale allowed (2 = "
                   "train.amp.loss_scale.min_scale)") != std::string::npos);
  }
  CHECK(scaler.get_scale() == 2.0);
}

TEST_CASE("trainer amp: training resumed from the scaler's state continues bit-identically", "[train][amp]") {
  // The whole run versus the same run split in two: the second half starts from the first's
  // weights, optimizer state, position and scaler state (what a checkpoint holds).
  amp::GradScalerOptions o;
  o.init_scale = 64.0;
  o.growth_interval = 2;
  const auto setup = [&](test::SmallTraining& t) {
    t.samples = 80;
    t.config.amp = amp_config(DType::BF16, true);
  };
  amp::GradScaler whole_scaler(o);
  InjectInf whole_inject({3});
  test::SmallTraining whole;
  setup(whole);
  whole.scaler = &whole_scaler;
  whole.callbacks = {&whole_inject};
  const auto full = whole.run();

  amp::GradScaler first_scaler(o);
  InjectInf first_inject({3});
  test::SmallTraining first;
  setup(first);
  first.scaler = &first_scaler;
  first.callbacks = {&first_inject};
  first.config.steps = 5;  // stops after 5 real steps (6 batches: one skipped)
  const auto half = first.run();
  REQUIRE(half.position.step == 5);
  CHECK(first_scaler.skipped_steps() == 1);

  amp::GradScaler resumed_scaler(o);
  resumed_scaler.load_state_dict(first_scaler.state_dict());
  test::SmallTraining second;
  setup(second);
  second.scaler = &resumed_scaler;
  second.start = std::make_shared<test::SmallTraining::Result>(half);  // the first half's end
  const auto rest = second.run();
  CHECK(rest.position.step == full.position.step);
  CHECK(resumed_scaler.get_scale() == whole_scaler.get_scale());
  CHECK(resumed_scaler.skipped_steps() == whole_scaler.skipped_steps());
  for (size_t i = 0; i < full.weights.size(); ++i) CHECK(test::compare(rest.weights[i], full.weights[i], 0, 0) == "");
}

TEST_CASE("trainer amp: clipping sees unscaled gradients, so a scaled run equals the unscaled one", "[train][amp]") {
  // Scaling by a power of two and unscaling by its inverse is exact (no overflow, no subnormals
  // here), so with clipping applied after unscale_ both runs take the same steps bit for bit;
  // clipping the scaled gradients would clip 1024 times harder.
  const auto run = [](bool scaled) {
    amp::GradScalerOptions o;
    o.init_scale = 1024.0;
    o.growth_interval = 1000000;
    o.enabled = scaled;
    amp::GradScaler scaler(o);
    test::SmallTraining t;
    t.samples = 48;
    t.config.amp = amp_config(DType::BF16, scaled);
    t.config.clip_grad_norm = 0.05;  // small enough to clip every step
    t.scaler = &scaler;
    return t.run();
  };
  const auto plain = run(false), scaled = run(true);
  for (size_t i = 0; i < plain.weights.size(); ++i)
    CHECK(test::compare(scaled.weights[i], plain.weights[i], 0, 0) == "");
}

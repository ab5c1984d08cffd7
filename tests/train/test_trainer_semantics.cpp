// What the training loop means, pinned down: the lr each step uses is the schedule's at that
// step (warm-up included), and gradient accumulation over k micro-batches of b samples equals one
// batch of k * b samples, a short last group included.
#include <catch2/catch.hpp>

#include "ingot/optim/lr_schedule.h"
#include "ingot/train/trainer.h"
#include "small_training.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::train;

namespace {

/// Records the lr of every step as the trainer hands it to the callbacks.
class LrLog final : public TrainCallback {
 public:
  const char* name() const override { return "lr_log"; }
  void before_optimizer_step(TrainState& s) override { lrs.push_back(s.optimizer.param_groups()[0].options.lr()); }
  std::vector<double> lrs;
};

struct Run {
  std::vector<Tensor> weights;
  std::vector<double> lrs;
};

Run train_with(int64_t batch, int64_t accumulate, const std::string& schedule_yaml) {
  LrLog log;
  test::SmallTraining t;
  t.samples = 40;
  t.batch = batch;
  t.data_seed = 2;
  t.init_seed = 3;
  t.lr = 0.2;
  t.schedule = schedule_yaml;
  t.config.accumulate = accumulate;
  t.callbacks = {&log};
  const test::SmallTraining::Result result = t.run();
  REQUIRE(result.status == TrainStatus::Finished);
  return Run{result.weights, log.lrs};
}

}  // namespace

TEST_CASE("trainer semantics: each step uses the schedule's lr at that step", "[train][semantics]") {
  const std::string yaml = "{type: cosine, warmup: {steps: 3, start_factor: 0.25}}";
  const Run r = train_with(4, 1, yaml);
  REQUIRE(r.lrs.size() == 10);
  const auto schedule = optim::make_schedule(YAML::Load(yaml), "test", 10);
  CHECK(r.lrs[0] == Approx(0.2 * 0.25));  // step 1: base lr x start_factor
  for (size_t k = 0; k < r.lrs.size(); ++k) CHECK(r.lrs[k] == Approx(schedule->lr(static_cast<int64_t>(k), 0.2)));
}

TEST_CASE("trainer semantics: accumulating k micro-batches equals one batch of k times the size", "[train][semantics]") {
  // 40 samples: batch 4 x accumulate 3 gives groups of 3, 3, 3, 1 batches; batch 12 gives 12, 12, 12, 4.
  const Run accumulated = train_with(4, 3, "{type: constant, factor: 1.0}");
  const Run big = train_with(12, 1, "{type: constant, factor: 1.0}");
  REQUIRE(accumulated.lrs.size() == 4);
  for (size_t i = 0; i < big.weights.size(); ++i)
    INGOT_REQUIRE_CLOSE(accumulated.weights[i], big.weights[i], 1e-6, 1e-5);
}

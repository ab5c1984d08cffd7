// Anomaly detection (train.detect_anomaly): the first op whose output went non-finite is named —
// in the forward pass with its layer, in the backward pass with its backward node — and the
// trainer's non-finite message carries it; removing the detector leaves no interceptor or hook.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/dispatch_chain.h"
#include "ingot/train/anomaly_detector.h"
#include "small_training.h"
#include "test_support.h"

using namespace ingot;
using Catch::Matchers::Contains;

namespace {

bool chain_has_anomaly() {
  const auto names = dispatch_chain::names();
  return std::find(names.begin(), names.end(), "anomaly") != names.end();
}

/// Sets a non-finite loss on every batch, from a finite one (loss * 0 / 0 = NaN).
class NanLoss final : public train::TrainCallback {
 public:
  const char* name() const override { return "nan_loss"; }
  Tensor extra_loss(train::TrainState&, const data::Batch&, const Tensor&, const Tensor& loss) override {
    return div(mul(loss, 0.0), mul(loss, 0.0));
  }
};

}  // namespace

TEST_CASE("anomaly detection: names the forward op and its layer", "[train][anomaly]") {
  Generator gen(1);
  const auto model = nn::make_mlp({{4, 3, 2}, "relu", 0.0}, &gen);
  {
    NoGradGuard no_grad;
    model->parameters().front().fill_(1e30);  // the first Linear's weight: x @ W^T overflows
  }
  train::AnomalyDetector detector(*model);
  CHECK(chain_has_anomaly());
  (void)(*model)(full({2, 4}, 1e10));
  const std::string first = detector.first();
  CHECK_THAT(first, Contains("(forward, in layer '1' Linear) made inf") && Contains("from finite inputs"));
  // Only the first op of a step is kept (ReLU and the second Linear saw inf and NaN after it).
  (void)(*model)(full({2, 4}, 1e10));
  CHECK(detector.first() == first);
  detector.clear();
  CHECK(detector.first().empty());
  (void)(*model)(full({2, 4}, 0.0));
  CHECK(detector.first().empty());  // finite all through
}

TEST_CASE("anomaly detection: names the backward node, an input already bad is said", "[train][anomaly]") {
  Generator gen(1);
  const auto model = nn::make_mlp({{4, 2}, "relu", 0.0}, &gen);
  const Tensor bad = full({1, 4}, std::numeric_limits<double>::quiet_NaN());  // made before it watches
  train::AnomalyDetector detector(*model);
  // d sqrt(x)/dx at 0 is inf: finite forward, a non-finite gradient from the backward pass.
  const Tensor x = zeros({3}).set_requires_grad();
  sum(sqrt(x)).backward();
  CHECK_THAT(detector.first(), Contains("(backward, in ") && Contains("made inf"));
  detector.clear();
  // A NaN that was there before the step: the first op that reads it says so.
  (void)(*model)(bad);
  CHECK_THAT(detector.first(), Contains("from input 1 that already held NaN"));
}

TEST_CASE("anomaly detection: removed with the detector, layers keep no hooks", "[train][anomaly]") {
  Generator gen(1);
  const auto model = nn::make_mlp({{4, 3, 2}, "relu", 0.0}, &gen);
  {
    train::AnomalyDetector detector(*model);
    CHECK(model->has_hooks());
  }
  CHECK_FALSE(chain_has_anomaly());
  for (const auto& [name, m] : model->named_modules()) CHECK_FALSE(m->has_hooks());
}

TEST_CASE("anomaly detection: the trainer's non-finite message names the op", "[train][anomaly]") {
  NanLoss nan;
  test::SmallTraining t;
  t.config.detect_anomaly = true;
  t.callbacks = {&nan};
  REQUIRE_THROWS_MATCHES(t.run(), NonFiniteError,
                         Catch::Matchers::Predicate<std::exception>(
                             [](const std::exception& e) {
                               const std::string m = e.what();
                               return m.find("step 1: the loss (NaN) is not finite (anomaly detection: op ") == 0 &&
                                      m.find("outside the model's layers") != std::string::npos &&
                                      m.find("from finite inputs") != std::string::npos;
                             },
                             "names the op outside the model"));
  CHECK_FALSE(chain_has_anomaly());
  t.config.detect_anomaly = false;
  REQUIRE_THROWS_MATCHES(
      t.run(), NonFiniteError,
      Catch::Matchers::Predicate<std::exception>(
          [](const std::exception& e) { return std::string(e.what()).find("anomaly") == std::string::npos; },
          "says nothing of anomaly detection when it is off"));
}

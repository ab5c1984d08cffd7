// LR schedules: torch parity step by step (tests/golden/data/sched_torch.json, built through
// the YAML factory) and hand-checked values of each closed form.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <numbers>

#include "ingot/optim/lr_schedule.h"
#include "train_math_util.h"

namespace ingot {
namespace {

using namespace ingot::optim;

// torch steps most schedules recursively (lr_t from lr_{t-1}); Ingot uses closed forms, so the
// two differ by accumulated double rounding only: at most 9.7e-16 relative on these fixtures
// (25 cases, 30-200 steps). The bound leaves room for other libm builds and is far below what
// f32 training can see.
constexpr double kRtol = 1e-11, kAtol = 1e-15;

TEST_CASE("lr schedules equal torch.optim.lr_scheduler step by step", "[sched][golden]") {
  std::ifstream in(test::golden_path("sched_torch.json"));
  REQUIRE(in.good());
  const nlohmann::json cases = nlohmann::json::parse(in)["cases"];
  REQUIRE(cases.size() >= 20);
  for (const auto& c : cases) {
    const std::string name = c["name"];
    // JSON is YAML: the same text a user writes under train.scheduler.
    const YAML::Node config = YAML::Load(c["config"].dump());
    const int64_t total = c["total_steps"];
    const double base_lr = c["base_lr"];
    const auto schedule = make_schedule(config, name, total);
    const std::vector<double> expected = c["lr"];
    REQUIRE(static_cast<int64_t>(expected.size()) == total);
    for (int64_t s = 0; s < total; ++s) {
      const double want = expected[s], got = schedule->lr(s, base_lr);
      INFO(name << " step " << s << ": ingot " << got << " torch " << want);
      REQUIRE(std::fabs(got - want) <= kAtol + kRtol * std::fabs(want));
    }
  }
}

TEST_CASE("lr schedules: closed forms at chosen steps", "[sched]") {
  // Exact in double where the arithmetic is (powers of two, cos(pi) = -1).
  REQUIRE(ConstantSchedule().lr(123, 0.1) == 0.1);
  REQUIRE(ConstantSchedule(0.5, 3).lr(2, 0.1) == 0.05);
  REQUIRE(ConstantSchedule(0.5, 3).lr(3, 0.1) == 0.1);
  REQUIRE(StepSchedule(7, 0.5).lr(6, 1.0) == 1.0);
  REQUIRE(StepSchedule(7, 0.5).lr(14, 1.0) == 0.25);
  REQUIRE(MultiStepSchedule({30, 10, 30}, 0.5).lr(9, 1.0) == 1.0);
  REQUIRE(MultiStepSchedule({30, 10, 30}, 0.5).lr(10, 1.0) == 0.5);
  REQUIRE(MultiStepSchedule({30, 10, 30}, 0.5).lr(30, 1.0) == 0.125);  // a repeated milestone counts twice
  REQUIRE(ExponentialSchedule(0.5).lr(3, 1.0) == 0.125);
  const CosineSchedule cosine(10, 0.01);
  REQUIRE(cosine.lr(0, 0.1) == 0.1);
  REQUIRE(cosine.lr(10, 0.1) == 0.01);
  REQUIRE(cosine.lr(5, 0.1) == Approx(0.055).epsilon(1e-14));
  REQUIRE(cosine.lr(20, 0.1) == Approx(0.1).epsilon(1e-14));  // torch's cosine is periodic past t_max
  const LinearSchedule warm(0.25, 1.0, 4);
  REQUIRE(warm.lr(0, 1.0) == 0.25);
  REQUIRE(warm.lr(2, 1.0) == 0.625);
  REQUIRE(warm.lr(4, 1.0) == 1.0);
  REQUIRE(warm.lr(400, 1.0) == 1.0);
  REQUIRE(LinearSchedule(0.0, 1.0, 4).lr(1, 1.0) == 0.25);  // torch 1.13 divides by zero here

  std::vector<std::unique_ptr<LrSchedule>> parts;
  parts.push_back(std::make_unique<LinearSchedule>(0.1, 1.0, 5));
  parts.push_back(std::make_unique<ExponentialSchedule>(0.5));
  const SequentialSchedule seq(std::move(parts), {5});
  REQUIRE(seq.lr(0, 1.0) == Approx(0.1));
  REQUIRE(seq.lr(4, 1.0) == Approx(0.82));
  REQUIRE(seq.lr(5, 1.0) == 1.0);  // the second schedule restarts at its own step 0
  REQUIRE(seq.lr(7, 1.0) == 0.25);
}

TEST_CASE("lr schedules: one-cycle phases", "[sched]") {
  OneCycleSchedule::Options o;
  o.max_lr = 1.0;
  o.total_steps = 101;  // phase ends at pct * 101 - 1 = 29.3 and 100
  o.div_factor = 10.0;
  o.final_div_factor = 100.0;
  const OneCycleSchedule cos(o);
  REQUIRE(cos.lr(0, 123.0) == Approx(0.1).epsilon(1e-15));  // max_lr / div_factor; base_lr unused when max_lr is set
  REQUIRE(cos.lr(100, 123.0) == Approx(0.001).epsilon(1e-12));  // initial / final_div_factor
  double peak = 0.0;
  for (int64_t s = 0; s <= 100; ++s) peak = std::max(peak, cos.lr(s, 0.0));
  REQUIRE(peak == Approx(1.0).epsilon(1e-2));
  REQUIRE_THROWS_WITH(cos.lr(102, 0.1), Catch::Contains("past total_steps 101"));
  o.max_lr = 0.0;  // each group's base lr is its max lr
  REQUIRE(OneCycleSchedule(o).lr(0, 2.0) == Approx(0.2).epsilon(1e-15));
  o.pct_start = 0.005;  // 0.005 * 101 - 1 < 0: no warmup step
  REQUIRE_THROWS_WITH(OneCycleSchedule{o}, Catch::Contains("leaves a phase without steps"));
}

TEST_CASE("lr schedules: constructor checks", "[sched][errors]") {
  REQUIRE_THROWS_WITH(StepSchedule(0), Catch::Contains("step_size must be >= 1, got 0"));
  REQUIRE_THROWS_WITH(CosineSchedule(0), Catch::Contains("t_max must be >= 1"));
  REQUIRE_THROWS_WITH(LinearSchedule(1.5), Catch::Contains("start_factor must be in [0, 1], got 1.5"));
  REQUIRE_THROWS_WITH(ConstantSchedule(0.5, 0), Catch::Contains("total_iters must be >= 1"));
  REQUIRE_THROWS_WITH(ExponentialSchedule(0.9).lr(-1, 0.1), Catch::Contains("step must be >= 0"));
  std::vector<std::unique_ptr<LrSchedule>> parts;
  parts.push_back(std::make_unique<ConstantSchedule>());
  parts.push_back(std::make_unique<ConstantSchedule>());
  REQUIRE_THROWS_WITH(SequentialSchedule(std::move(parts), {}),
                      Catch::Contains("2 schedules need 1 milestones, got 0"));
}

}  // namespace
}  // namespace ingot

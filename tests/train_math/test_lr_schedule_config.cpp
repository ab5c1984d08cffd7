// The `train.scheduler:` YAML factory: defaults from the run's total steps, warmup, the resolved
// config round trip, and one clear "FILE:LINE" error per mistake.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/base/error.h"
#include "ingot/optim/lr_schedule.h"

namespace ingot {
namespace {

using optim::make_schedule;

std::unique_ptr<optim::LrSchedule> from_yaml(const std::string& text, int64_t total_steps) {
  return make_schedule(YAML::Load(text), "run.yaml", total_steps);
}

TEST_CASE("scheduler config: defaults come from the run's total steps", "[sched][config]") {
  // cosine without t_max spans the whole run: eta_min at the last step + 1.
  auto cosine = from_yaml("{type: cosine, eta_min: 0.001}", 100);
  REQUIRE(cosine->lr(100, 0.1) == Approx(0.001));
  REQUIRE(cosine->lr(50, 0.1) == Approx(0.0505));
  // With a warmup the cosine spans what is left of the run.
  auto warm = from_yaml("{type: cosine, warmup: {steps: 20, start_factor: 0.1}}", 100);
  REQUIRE(warm->lr(0, 1.0) == Approx(0.1));
  REQUIRE(warm->lr(10, 1.0) == Approx(0.55));
  REQUIRE(warm->lr(20, 1.0) == 1.0);
  REQUIRE(warm->lr(60, 1.0) == Approx(0.5));
  REQUIRE(warm->lr(100, 1.0) == Approx(0.0).margin(1e-15));
  // one_cycle's total_steps defaults to the run's.
  auto cycle = from_yaml("{type: one_cycle, max_lr: 0.5}", 50);
  REQUIRE(cycle->lr(49, 0.1) > 0.0);
  REQUIRE_THROWS(cycle->lr(51, 0.1));
  // No section at all: a constant lr.
  REQUIRE(make_schedule(YAML::Node(), "run.yaml", 10)->lr(7, 0.3) == 0.3);
}

TEST_CASE("scheduler config: the resolved config rebuilds the same schedule", "[sched][config]") {
  const char* configs[] = {
      "{type: constant, factor: 0.5, total_iters: 3}",
      "{type: step, step_size: 4, gamma: 0.7}",
      "{type: multistep, milestones: [3, 9]}",
      "{type: exponential, gamma: 0.9}",
      "{type: cosine, eta_min: 0.01, warmup: {steps: 5}}",
      "{type: linear, start_factor: 0.2, end_factor: 0.8, total_iters: 6}",
      "{type: sequential, milestones: [4], schedulers: [{type: linear, total_iters: 4}, {type: cosine}]}",
      "{type: one_cycle, anneal_strategy: linear, three_phase: true}",
  };
  for (const char* text : configs) {
    INFO(text);
    const auto a = from_yaml(text, 40);
    const YAML::Node resolved = a->to_yaml();
    const auto b = make_schedule(resolved, "resolved.yaml", 0);  // nothing left to default
    for (int64_t s = 0; s < 40; ++s) REQUIRE(b->lr(s, 0.3) == a->lr(s, 0.3));
  }
}

void require_error(const std::string& text, int64_t total_steps, const std::string& message) {
  INFO(text);
  try {
    from_yaml(text, total_steps);
    FAIL("no error for " << text);
  } catch (const ConfigError& e) {
    REQUIRE_THAT(e.what(), Catch::Contains(message));
  }
}

TEST_CASE("scheduler config: errors name the file, line and key", "[sched][config][errors]") {
  require_error("type: cosine\nt_maxx: 10\n", 100,
                "run.yaml:2: unknown key 't_maxx' in train.scheduler; did you mean 't_max'?");
  require_error("type: cosin\n", 100, "must be one of");
  require_error(
      "type: cosine\ngamma: 0.5\n", 100,
      "run.yaml:2: 'train.scheduler.gamma' does not apply to scheduler type 'cosine'; its keys: t_max, eta_min");
  require_error("type: step\ngamma: 0.5\n", 100, "scheduler type 'step' needs 'train.scheduler.step_size'");
  require_error("gamma: 0.5\n", 100, "missing required key 'type'");
  require_error("type: cosine\n", 0, "'train.scheduler.t_max' is required here");
  require_error("type: cosine\nwarmup: {steps: 100}\n", 100,
                "'train.scheduler.warmup.steps' (100) must be below the run's 100 steps");
  require_error("type: one_cycle\ntotal_steps: 50\n", 100,
                "'train.scheduler.total_steps' (50) is below the run's 100 steps");
  require_error("type: one_cycle\nwarmup: {steps: 5}\n", 100, "one_cycle warms up by itself");
  require_error("type: multistep\nmilestones: [10, x]\n", 100,
                "run.yaml:2: 'train.scheduler.milestones[1]' must be an integer >= 0, got 'x'");
  require_error("type: sequential\nmilestones: [10]\nschedulers: [{type: constant}]\n", 100,
                "1 schedulers need 0 milestones, got 1");
  require_error(
      "type: sequential\nmilestones: [10, 5]\nschedulers: [{type: constant}, {type: constant}, {type: constant}]\n",
      100, "milestones must be increasing");
  require_error("type: sequential\nmilestones: [10]\nschedulers: [{type: constant}, {type: step}]\n", 100,
                "needs 'train.scheduler.schedulers[1].step_size'");
  require_error("type: step\nstep_size: 0\n", 100, "'train.scheduler.step_size' must be >= 1, got 0");
  require_error("type: linear\nstart_factor: 2\n", 100, "'train.scheduler.start_factor' must be <= 1, got 2");
}

TEST_CASE("scheduler config: the schema lists every type's keys", "[sched][config]") {
  const auto schema = optim::scheduler_schema();
  for (const char* key : {"type", "gamma", "milestones", "t_max", "eta_min", "warmup", "max_lr", "three_phase"}) {
    INFO(key);
    REQUIRE(schema.find(key) != nullptr);
  }
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

/// lr halves every `every` steps: a type registered like an extension's.
class Halving final : public optim::LrSchedule {
 public:
  explicit Halving(int64_t every) : every_(every) {}
  double lr(int64_t step, double base_lr) const override {
    return base_lr * std::pow(0.5, static_cast<double>(step / every_));
  }
  YAML::Node to_yaml() const override {
    YAML::Node n;
    n["type"] = "halving_test";
    n["every"] = every_;
    return n;
  }

 private:
  int64_t every_;
};

}  // namespace

TEST_CASE("scheduler config: a registered type is built, warmed up and checked like a built-in", "[sched][config]") {
  optim::ScheduleRegistry& r = optim::schedule_registry();
  if (!r.has("halving_test")) {
    config::Schema keys;
    keys.integer("every", 1);
    r.add({"halving_test", keys,
           [](const YAML::Node& node, const std::string&, int64_t, const std::string&) -> std::unique_ptr<optim::LrSchedule> {
             return std::make_unique<Halving>(node["every"] ? node["every"].as<int64_t>() : 10);
           },
           "test"});
  }
  const auto s = optim::make_schedule(YAML::Load("{type: halving_test, every: 4}"), "s.yaml", 100);
  CHECK(s->lr(3, 1.0) == 1.0);
  CHECK(s->lr(8, 1.0) == 0.25);
  const auto warm = optim::make_schedule(YAML::Load("{type: halving_test, every: 4, warmup: {steps: 2}}"), "s.yaml", 100);
  CHECK(warm->lr(0, 1.0) == Approx(1.0 / 3.0));
  REQUIRE_THROWS_WITH(optim::make_schedule(YAML::Load("{type: halving_test, gamma: 0.5}"), "s.yaml", 100),
                      Catch::Contains("does not apply to scheduler type 'halving_test'; its keys: every"));
  CHECK(optim::scheduler_schema().find("every") != nullptr);
}

}  // namespace ingot

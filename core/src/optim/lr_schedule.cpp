// The learning-rate schedules in closed form; they equal torch's step-by-step (recursive) values
// to rounding: <= 1e-15 relative on the recorded torch runs (tests/train_math/test_lr_schedule.cpp).
#include "ingot/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ingot/base/error.h"

// Where they differ by design: torch's recursion follows any outside change of the group's lr, a
// pure function does not; torch 1.13 divides by zero for LinearLR start_factor 0 and ConstantLR
// factor 0, where the closed forms are well defined.
namespace ingot::optim {
namespace {

void check_step(int64_t step, const char* what) {
  INGOT_CHECK(step >= 0, "{} schedule: step must be >= 0, got {}", what, step);
}

YAML::Node int_list(const std::vector<int64_t>& values) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (int64_t v : values) n.push_back(v);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

}  // namespace

ConstantSchedule::ConstantSchedule(double factor, int64_t total_iters) : factor_(factor), total_iters_(total_iters) {
  INGOT_CHECK(factor >= 0.0 && factor <= 1.0, "constant schedule: factor must be in [0, 1], got {}", factor);
  INGOT_CHECK(total_iters >= 1, "constant schedule: total_iters must be >= 1, got {}", total_iters);
}
double ConstantSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "constant");
  return step < total_iters_ ? base_lr * factor_ : base_lr;
}
YAML::Node ConstantSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "constant";
  n["factor"] = factor_;
  n["total_iters"] = total_iters_;
  return n;
}

StepSchedule::StepSchedule(int64_t step_size, double gamma) : step_size_(step_size), gamma_(gamma) {
  INGOT_CHECK(step_size >= 1, "step schedule: step_size must be >= 1, got {}", step_size);
}
double StepSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "step");
  return base_lr * std::pow(gamma_, static_cast<double>(step / step_size_));
}
YAML::Node StepSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "step";
  n["step_size"] = step_size_;
  n["gamma"] = gamma_;
  return n;
}

MultiStepSchedule::MultiStepSchedule(std::vector<int64_t> milestones, double gamma)
    : milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  INGOT_CHECK(milestones_.empty() || milestones_.front() >= 0, "multistep schedule: milestones must be >= 0");
}
double MultiStepSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "multistep");
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), step) - milestones_.begin();
  return base_lr * std::pow(gamma_, static_cast<double>(passed));
}
YAML::Node MultiStepSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "multistep";
  n["milestones"] = int_list(milestones_);
  n["gamma"] = gamma_;
  return n;
}

ExponentialSchedule::ExponentialSchedule(double gamma) : gamma_(gamma) {}
double ExponentialSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "exponential");
  return base_lr * std::pow(gamma_, static_cast<double>(step));
}
YAML::Node ExponentialSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "exponential";
  n["gamma"] = gamma_;
  return n;
}

CosineSchedule::CosineSchedule(int64_t t_max, double eta_min) : t_max_(t_max), eta_min_(eta_min) {
  INGOT_CHECK(t_max >= 1, "cosine schedule: t_max must be >= 1, got {}", t_max);
}
double CosineSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "cosine");
  // torch's _get_closed_form_lr, operation for operation.
  const double angle = std::numbers::pi * static_cast<double>(step) / static_cast<double>(t_max_);
  return eta_min_ + (base_lr - eta_min_) * (1.0 + std::cos(angle)) / 2.0;
}
YAML::Node CosineSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "cosine";
  n["t_max"] = t_max_;
  n["eta_min"] = eta_min_;
  return n;
}

LinearSchedule::LinearSchedule(double start_factor, double end_factor, int64_t total_iters)
    : start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  // torch 1.13 accepts start_factor 0 but then divides by zero at step 1; the closed form does not.
  INGOT_CHECK(start_factor >= 0.0 && start_factor <= 1.0, "linear schedule: start_factor must be in [0, 1], got {}",
              start_factor);
  INGOT_CHECK(end_factor >= 0.0 && end_factor <= 1.0, "linear schedule: end_factor must be in [0, 1], got {}",
              end_factor);
  INGOT_CHECK(total_iters >= 1, "linear schedule: total_iters must be >= 1, got {}", total_iters);
}
double LinearSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "linear");
  const double done = static_cast<double>(std::min(total_iters_, step));
  return base_lr * (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_));
}
YAML::Node LinearSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "linear";
  n["start_factor"] = start_factor_;
  n["end_factor"] = end_factor_;
  n["total_iters"] = total_iters_;
  return n;
}

SequentialSchedule::SequentialSchedule(std::vector<std::unique_ptr<LrSchedule>> schedules,
                                       std::vector<int64_t> milestones)
    : schedules_(std::move(schedules)), milestones_(std::move(milestones)) {
  INGOT_CHECK(!schedules_.empty(), "sequential schedule: needs at least one schedule");
  INGOT_CHECK(milestones_.size() + 1 == schedules_.size(),
              "sequential schedule: {} schedules need {} milestones, got {}", schedules_.size(), schedules_.size() - 1,
              milestones_.size());
  for (size_t i = 0; i < milestones_.size(); ++i) {
    INGOT_CHECK(milestones_[i] >= 1 && (i == 0 || milestones_[i] > milestones_[i - 1]),
                "sequential schedule: milestones must be increasing and >= 1, got {} at position {}", milestones_[i],
                i);
  }
  for (const auto& s : schedules_) INGOT_CHECK(s != nullptr, "sequential schedule: a schedule is null");
}
double SequentialSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "sequential");
  // bisect_right, as torch: at a milestone the next schedule starts at its own step 0.
  const auto idx = std::upper_bound(milestones_.begin(), milestones_.end(), step) - milestones_.begin();
  const int64_t start = idx == 0 ? 0 : milestones_[idx - 1];
  return schedules_[idx]->lr(step - start, base_lr);
}
YAML::Node SequentialSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "sequential";
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& s : schedules_) list.push_back(s->to_yaml());
  n["schedulers"] = list;
  n["milestones"] = int_list(milestones_);
  return n;
}

OneCycleSchedule::OneCycleSchedule(const Options& options) : o_(options) {
  const double t = static_cast<double>(o_.total_steps);
  INGOT_CHECK(o_.total_steps >= 1, "one_cycle schedule: total_steps must be >= 1, got {}", o_.total_steps);
  INGOT_CHECK(o_.pct_start >= 0.0 && o_.pct_start <= 1.0, "one_cycle schedule: pct_start must be in [0, 1], got {}",
              o_.pct_start);
  INGOT_CHECK(o_.div_factor > 0.0 && o_.final_div_factor > 0.0,
              "one_cycle schedule: div_factor and final_div_factor must be > 0, got {} and {}", o_.div_factor,
              o_.final_div_factor);
  // torch divides by each phase's length; refuse the settings where one is empty or reversed.
  const double up = o_.pct_start * t - 1.0;
  const double last = o_.three_phase ? (t - 1.0) - (2.0 * o_.pct_start * t - 2.0) : (t - 1.0) - up;
  INGOT_CHECK(up > 0.0 && last > 0.0,
              "one_cycle schedule: pct_start {} with total_steps {} leaves a phase without steps; the warmup needs "
              "pct_start * total_steps > 1 and the decay at least one step",
              o_.pct_start, o_.total_steps);
}
double OneCycleSchedule::lr(int64_t step, double base_lr) const {
  check_step(step, "one_cycle");
  INGOT_CHECK(step <= o_.total_steps, "one_cycle schedule: step {} is past total_steps {}; raise total_steps", step,
              o_.total_steps);
  const double max_lr = o_.max_lr > 0.0 ? o_.max_lr : base_lr;
  const double initial = max_lr / o_.div_factor;
  const double min_lr = initial / o_.final_div_factor;
  const double t = static_cast<double>(o_.total_steps);
  struct Phase {
    double end_step, start_lr, end_lr;
  };
  std::vector<Phase> phases;
  if (o_.three_phase) {
    phases = {{o_.pct_start * t - 1.0, initial, max_lr},
              {2.0 * o_.pct_start * t - 2.0, max_lr, initial},
              {t - 1.0, initial, min_lr}};
  } else {
    phases = {{o_.pct_start * t - 1.0, initial, max_lr}, {t - 1.0, max_lr, min_lr}};
  }
  // torch's get_lr: the first phase whose end is not before the step (the last one otherwise).
  const double s = static_cast<double>(step);
  double start_step = 0.0;
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& p = phases[i];
    if (s <= p.end_step || i + 1 == phases.size()) {
      const double pct = (s - start_step) / (p.end_step - start_step);
      if (o_.anneal == Anneal::Linear) return (p.end_lr - p.start_lr) * pct + p.start_lr;
      return p.end_lr + (p.start_lr - p.end_lr) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
    }
    start_step = p.end_step;
  }
  return min_lr;  // unreachable: the last phase always matches
}
YAML::Node OneCycleSchedule::to_yaml() const {
  YAML::Node n;
  n["type"] = "one_cycle";
  if (o_.max_lr > 0.0) n["max_lr"] = o_.max_lr;
  n["total_steps"] = o_.total_steps;
  n["pct_start"] = o_.pct_start;
  n["anneal_strategy"] = o_.anneal == Anneal::Cos ? "cos" : "linear";
  n["div_factor"] = o_.div_factor;
  n["final_div_factor"] = o_.final_div_factor;
  n["three_phase"] = o_.three_phase;
  return n;
}

}  // namespace ingot::optim

// Learning-rate schedules: each is a pure function of the optimizer step and the group's base lr,
// giving the values torch.optim.lr_scheduler produces, plus the `train.scheduler:` YAML factory.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingot/config/type_registry.h"

namespace ingot::optim {

/// A learning-rate schedule. `step` is the number of optimizer steps taken so far (0-based: the
/// lr used by step `step`); `base_lr` is the param group's configured lr. Equal to torch's lr
/// after `step` calls of scheduler.step(). Being pure, a resumed run needs only the step count.
class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  virtual double lr(int64_t step, double base_lr) const = 0;
  /// The resolved config (type and every parameter, defaults filled in), as make_schedule reads it.
  virtual YAML::Node to_yaml() const = 0;
};

/// base_lr * factor for steps < total_iters, then base_lr (torch ConstantLR; factor 1 = constant lr).
class ConstantSchedule final : public LrSchedule {
 public:
  explicit ConstantSchedule(double factor = 1.0, int64_t total_iters = 5);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  double factor_;
  int64_t total_iters_;
};

/// base_lr * gamma^(step / step_size) (torch StepLR).
class StepSchedule final : public LrSchedule {
 public:
  explicit StepSchedule(int64_t step_size, double gamma = 0.1);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// base_lr * gamma^(number of milestones <= step) (torch MultiStepLR; repeated milestones count twice).
class MultiStepSchedule final : public LrSchedule {
 public:
  explicit MultiStepSchedule(std::vector<int64_t> milestones, double gamma = 0.1);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  std::vector<int64_t> milestones_;  ///< sorted
  double gamma_;
};

/// base_lr * gamma^step (torch ExponentialLR).
class ExponentialSchedule final : public LrSchedule {
 public:
  explicit ExponentialSchedule(double gamma);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  double gamma_;
};

/// eta_min + (base_lr - eta_min) (1 + cos(pi step / t_max)) / 2 (torch CosineAnnealingLR). Like
/// torch it does not stop at t_max: the lr rises again over the next t_max steps (period 2 t_max).
class CosineSchedule final : public LrSchedule {
 public:
  explicit CosineSchedule(int64_t t_max, double eta_min = 0.0);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

/// base_lr * factor moving linearly from start_factor (step 0) to end_factor (step total_iters),
/// then constant (torch LinearLR): the usual linear warmup.
class LinearSchedule final : public LrSchedule {
 public:
  explicit LinearSchedule(double start_factor = 1.0 / 3.0, double end_factor = 1.0, int64_t total_iters = 5);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

/// Schedule i runs from milestone i-1 (restarted at its own step 0) to milestone i (torch
/// SequentialLR): e.g. a linear warmup then cosine decay.
class SequentialSchedule final : public LrSchedule {
 public:
  SequentialSchedule(std::vector<std::unique_ptr<LrSchedule>> schedules, std::vector<int64_t> milestones);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  std::vector<std::unique_ptr<LrSchedule>> schedules_;
  std::vector<int64_t> milestones_;
};

/// torch OneCycleLR's learning rate: from max_lr / div_factor up to max_lr over pct_start of
/// total_steps, then down to max_lr / (div_factor * final_div_factor) (three_phase: back to the
/// initial lr first, then down). Without max_lr, each group's base_lr is its max_lr. Steps past
/// total_steps are an error, as in torch.
class OneCycleSchedule final : public LrSchedule {
 public:
  enum class Anneal { Cos, Linear };
  struct Options {
    double max_lr = 0.0;  ///< <= 0: use base_lr
    int64_t total_steps = 0;
    double pct_start = 0.3;
    Anneal anneal = Anneal::Cos;
    double div_factor = 25.0;
    double final_div_factor = 1e4;
    bool three_phase = false;
  };
  explicit OneCycleSchedule(const Options& options);
  double lr(int64_t step, double base_lr) const override;
  YAML::Node to_yaml() const override;

 private:
  Options o_;
};

/// Schedules by `type:` (constant, step, multistep, exponential, cosine, linear, sequential,
/// one_cycle, and any an extension adds). A factory gets the section, the file, how many steps
/// the schedule covers (<= 0: unknown) and the section's path for messages.
using ScheduleRegistry = config::TypeRegistry<std::unique_ptr<LrSchedule>, int64_t, const std::string&>;
ScheduleRegistry& schedule_registry();

/// The keys of `train.scheduler:` (every type's keys; make_schedule rejects those that do not
/// apply to the given type). `type:` constant | step | multistep | exponential | cosine | linear
/// | sequential | one_cycle; `warmup: {steps, start_factor, end_factor}` puts a linear warmup
/// before any type.
config::Schema scheduler_schema();

/// Builds the schedule of a `train.scheduler:` map (null or absent node: constant lr).
/// `total_steps` is the run's number of optimizer steps; when omitted, cosine's t_max and
/// one_cycle's total_steps default to it, minus the warmup steps when a warmup is configured.
/// Throws ConfigError "FILE:LINE: ..." naming the key, e.g. for a key of another type.
std::unique_ptr<LrSchedule> make_schedule(const YAML::Node& node, const std::string& file, int64_t total_steps,
                                          const std::string& path = "train.scheduler");

}  // namespace ingot::optim

// Checkpointed modules: segments of a Sequential, one module's forward, and the train/eval
// modes a segment had at its forward, set again while the backward pass recomputes it.
#include "ingot/nn/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ingot/autograd/checkpoint.h"
#include "ingot/base/grad_mode.h"

namespace ingot::nn {

namespace {

/// Each module of the subtrees and its training flag, parents before their children.
using Modes = std::vector<std::pair<Module*, bool>>;

void collect(Module* m, Modes& out) {
  out.emplace_back(m, m->is_training());
  for (const auto& [name, child] : m->named_children()) collect(child.get(), out);
}

Modes modes_of(const std::vector<Module*>& modules) {
  Modes out;
  for (Module* m : modules) collect(m, out);
  return out;
}

/// Module::train recurses, so setting parents first and then each child leaves every module
/// with its own flag.
void set_modes(const Modes& modes) {
  for (const auto& [m, training] : modes)
    if (m->is_training() != training) m->train(training);
}

bool same_modes(const Modes& a) {
  for (const auto& [m, training] : a)
    if (m->is_training() != training) return false;
  return true;
}

}  // namespace

Tensor run_checkpointed(const std::vector<Module*>& modules, const std::function<Tensor(const Tensor&)>& run,
                        const Tensor& x) {
  if (!GradMode::is_enabled()) return run(x);
  return autograd::checkpoint(
      [at_forward = modes_of(modules), run](const Tensor& in) {
        if (!autograd::is_recomputing() || same_modes(at_forward)) return run(in);
        // The mode changed between forward and backward (an evaluation in between): recompute
        // what the forward computed, then put the current modes back.
        Modes now;
        now.reserve(at_forward.size());
        for (const auto& [m, training] : at_forward) now.emplace_back(m, m->is_training());
        struct Restore {
          const Modes& modes;
          ~Restore() { set_modes(modes); }
        } restore{now};
        set_modes(at_forward);
        return run(in);
      },
      x);
}

void checkpoint_sequential(Sequential& model, int64_t segments) {
  INGOT_CHECK_AS(segments >= 0 && segments <= static_cast<int64_t>(model.size()), InputError,
                 "checkpoint_sequential: {} segments for a Sequential of {} layers: give 1 to {} (0 turns it off)",
                 segments, model.size(), model.size());
  model.set_checkpoint_segments(segments);
}

CheckpointPlan apply_checkpointing(Module& model, const CheckpointingOptions& options,
                                   const std::function<Tensor(int64_t)>& make_input, const std::string& where) {
  auto* seq = dynamic_cast<Sequential*>(&model);
  if (seq == nullptr && options.blocks) {  // a model graph of its own (a GPT): each block its own segment
    CheckpointPlan plan;
    for (auto& [name, m] : model.named_modules()) {
      if (!m->is_block()) continue;
      const bool nested = std::any_of(plan.names.begin(), plan.names.end(),
                                      [&](const std::string& outer) { return name.rfind(outer + ".", 0) == 0; });
      if (nested) continue;
      m->set_checkpoint(true);
      plan.names.push_back(name);
      plan.ends.push_back(plan.ends.size() + 1);
    }
    if (!plan.names.empty()) return plan;  // (peak and plain: not measured for a non-Sequential model)
  }
  if (seq == nullptr) {
    throw ConfigError(
        fmt::format("{}: train.checkpointing needs a Sequential model (a layers: list or a preset); this "
                    "model is a {}: mark its blocks with 'checkpoint: true' instead",
                    where, model.type_name()));
  }
  const std::vector<Sequential::Unit> units = seq->units();
  if (options.segments > static_cast<int64_t>(units.size())) {
    throw ConfigError(
        fmt::format("{}: train.checkpointing.segments is {} but the model has {} layers and blocks to cut "
                    "between ({} top-level, nested Sequentials unrolled): give at most {}",
                    where, options.segments, units.size(), seq->size(), units.size()));
  }
  const bool any_block = std::any_of(units.begin(), units.end(), [](const auto& u) { return u.module().is_block(); });
  if (options.blocks && !any_block) {
    throw ConfigError(
        fmt::format("{}: train.checkpointing.blocks: this model has no blocks (residual or "
                    "transformer blocks) to checkpoint one by one: give segments: N instead",
                    where));
  }
  const std::vector<UnitCost> costs = measure_units(*seq, make_input);
  CheckpointPlan plan = options.blocks ? block_plan(units, costs) : balanced_plan(costs, options.segments);
  name_segments(plan, units);
  seq->set_checkpoint_plan(plan.ends);
  return plan;
}

}  // namespace ingot::nn

// Sequential (torch.nn.Sequential): children run in order; named "0", "1", ... unless given
// names (torch's Sequential(OrderedDict)), which is what state_dict names follow.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ingot/nn/module.h"

namespace ingot::nn {

class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  explicit Sequential(std::initializer_list<ModulePtr> modules);
  /// Appends a module named by its position.
  Sequential& push_back(ModulePtr module);
  /// Appends a module under `name` (must be unique).
  Sequential& push_back(const std::string& name, ModulePtr module);

  /// Runs the children in order; a fusable run of children (Linear + ReLU, Conv2d + BatchNorm2d
  /// + ReLU in eval, ...) runs as one op, with the same result (ingot/nn/fusion.h).
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;

  size_t size() const { return named_children().size(); }
  ModulePtr operator[](size_t i) const { return named_children().at(i).second; }

  /// Gradient checkpointing by segments (nn::checkpoint_sequential, which checks the count):
  /// forward runs the children in `segments` contiguous runs, all but the last checkpointed.
  void set_checkpoint_segments(int64_t segments) { checkpoint_segments_ = segments; }
  int64_t checkpoint_segments() const { return checkpoint_segments_; }

  /// What forward runs, in order: the children, each child that is itself a plain Sequential
  /// (exactly that type, no hooks, no checkpointing of its own) replaced by its own units. A
  /// nested Sequential's forward is exactly its units in turn, so running the units is running
  /// the model, and a checkpoint plan may cut between the blocks of a ResNet stage.
  struct Unit {
    Sequential* owner = nullptr;  ///< the Sequential whose child this is
    size_t index = 0;             ///< its position there
    std::string name;             ///< its dotted name from here ("layer1.0")
    Module& module() const { return *owner->named_children().at(index).second; }
  };
  std::vector<Unit> units();
  /// Runs the fusable run of units that starts at units[i] (forward_fused within its owner) on
  /// `y`; returns how many units it covered.
  static size_t run_unit(const std::vector<Unit>& units, size_t i, Tensor& y);

  /// Gradient checkpointing by a plan (nn/checkpoint_plan.h): the units split before each of
  /// `ends` (unit positions, increasing; the last equal to the unit count), every segment but the
  /// last checkpointed. Replaces set_checkpoint_segments; empty turns it off.
  void set_checkpoint_plan(std::vector<size_t> ends) { checkpoint_ends_ = std::move(ends); }
  const std::vector<size_t>& checkpoint_plan() const { return checkpoint_ends_; }

 private:
  Tensor forward_planned(const Tensor& x);

  int64_t checkpoint_segments_ = 0;
  std::vector<size_t> checkpoint_ends_;
};

}  // namespace ingot::nn

// Sequential (torch.nn.Sequential): children run in order; named "0", "1", ... unless given
// names (torch's Sequential(OrderedDict)), which is what state_dict names follow.
#pragma once

#include <cstdint>
#include <initializer_list>

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

 private:
  int64_t checkpoint_segments_ = 0;
};

}  // namespace ingot::nn

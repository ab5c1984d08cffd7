// CompiledUpdates (train.compile): the optimizer's updates as a captured graph beside the
// micro-batch's. Each step the optimizer does its host half (state, step counts, this step's lr and
// step written into small float64 tensors), then the graph — or, for a step it cannot replay, the
// updates themselves — runs the CAPTURABLE update ops, which read those tensors. Same bits as
// optimizer.step().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/graph/compiled_step.h"
#include "ingot/optim/optimizer.h"

namespace ingot::train {

class CompiledUpdates {
 public:
  /// Null, with `why_not` saying why, when the optimizer's step cannot be captured: an optimizer
  /// that is not capturable() (an extension's), or a device whose backends lack the CAPTURABLE
  /// update ops (the step would leave the device).
  static std::unique_ptr<CompiledUpdates> make(optim::Optimizer& opt, graph::CompileOptions options,
                                               std::string& why_not);

  /// One optimizer step (optimizer.step()'s place in the loop).
  void step();
  const graph::CompileStats& stats() const { return compiled_.stats(); }
  void on_message(std::function<void(const std::string&)> message) { compiled_.on_message(std::move(message)); }
  void disable(const std::string& why) { compiled_.disable(why); }

 private:
  CompiledUpdates(optim::Optimizer& opt, graph::CompileOptions options, std::vector<Tensor> params);

  optim::Optimizer& opt_;
  graph::CompiledStep compiled_;
};

}  // namespace ingot::train

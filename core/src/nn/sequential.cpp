// Sequential: forward and shape inference chain the children; forward runs fusable runs of
// children (Linear + ReLU, Conv2d + BatchNorm2d + ReLU in eval, ...) as one op (nn/fusion.h), and
// with checkpoint segments or a checkpoint plan set, runs all segments but the last as
// checkpointed segments.
#include "ingot/nn/sequential.h"

#include <algorithm>
#include <memory>
#include <typeinfo>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/checkpoint.h"
#include "ingot/nn/fusion.h"

namespace ingot::nn {

Sequential::Sequential(std::initializer_list<ModulePtr> modules) : Module("Sequential") {
  for (const ModulePtr& m : modules) push_back(m);
}

Sequential& Sequential::push_back(ModulePtr module) { return push_back(std::to_string(size()), std::move(module)); }

Sequential& Sequential::push_back(const std::string& name, ModulePtr module) {
  register_module(name, std::move(module));
  return *this;
}

namespace {

using Layers = std::vector<std::pair<std::string, ModulePtr>>;

/// Runs the fusable runs of `layers` that start in [begin, end) (the last may reach past `end`:
/// a boundary never splits Linear | ReLU, so a segment computes what the plain forward does).
/// Returns where the next run starts.
size_t run_layers(const Layers& layers, size_t begin, size_t end, Tensor& y) {
  size_t i = begin;
  while (i < end) i += forward_fused(layers, i, y);
  return i;
}

}  // namespace

namespace {

void collect_units(Sequential& seq, const std::string& prefix, std::vector<Sequential::Unit>& out) {
  const Layers& layers = seq.named_children();
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& [name, child] = layers[i];
    const std::string dotted = prefix.empty() ? name : prefix + "." + name;
    auto* nested = dynamic_cast<Sequential*>(child.get());
    const bool plain = nested != nullptr && typeid(*nested) == typeid(Sequential) && !nested->runs_alone() &&
                       nested->checkpoint_segments() <= 1 && nested->checkpoint_plan().empty();
    if (plain) {
      collect_units(*nested, dotted, out);
    } else {
      out.push_back({&seq, i, dotted});
    }
  }
}

}  // namespace

std::vector<Sequential::Unit> Sequential::units() {
  std::vector<Unit> out;
  collect_units(*this, "", out);
  return out;
}

size_t Sequential::run_unit(const std::vector<Unit>& units, size_t i, Tensor& y) {
  return forward_fused(units[i].owner->named_children(), units[i].index, y);
}

Tensor Sequential::forward_planned(const Tensor& x) {
  auto units = std::make_shared<const std::vector<Unit>>(this->units());
  INGOT_CHECK(checkpoint_ends_.back() == units->size(),
              "Sequential: the checkpoint plan covers {} units but the model now has {}: make the plan again "
              "(nn::apply_checkpoint_plan) after changing the model's structure",
              checkpoint_ends_.back(), units->size());
  const auto run = [](const std::vector<Unit>& u, size_t begin, size_t end, Tensor& y) {
    size_t i = begin;
    while (i < end) i += run_unit(u, i, y);
    return i;
  };
  Tensor y = x;
  size_t i = 0;
  for (size_t s = 0; s + 1 < checkpoint_ends_.size(); ++s) {
    const size_t end = checkpoint_ends_[s];
    if (i >= end) continue;        // the previous segment's last fused run covered this one
    std::vector<Module*> modules;  // (and the ones a run may fuse past the boundary)
    for (size_t j = i; j < std::min(units->size(), end + 2); ++j) modules.push_back(&(*units)[j].module());
    auto next = std::make_shared<size_t>(i);
    y = run_checkpointed(
        modules,
        [units, begin = i, end, next, run](const Tensor& in) {
          Tensor out = in;
          *next = run(*units, begin, end, out);
          return out;
        },
        y);
    i = *next;
  }
  run(*units, i, units->size(), y);
  return y;
}

Tensor Sequential::forward(const Tensor& x) {
  if (!checkpoint_ends_.empty() && GradMode::is_enabled()) return forward_planned(x);
  const Layers& layers = named_children();
  const auto n = static_cast<int64_t>(layers.size());
  Tensor y = x;
  if (checkpoint_segments_ <= 1 || checkpoint_segments_ > n || !GradMode::is_enabled()) {
    run_layers(layers, 0, layers.size(), y);
    return y;
  }
  // torch.utils.checkpoint_sequential's split: n / segments layers each, the rest in the last,
  // which is not checkpointed (its output is needed at once).
  const auto per = static_cast<size_t>(n / checkpoint_segments_);
  const auto shared = std::make_shared<const Layers>(layers);  // the graph may outlive a replace_child
  size_t i = 0;
  for (int64_t s = 0; s + 1 < checkpoint_segments_; ++s) {
    const size_t end = (static_cast<size_t>(s) + 1) * per;
    // (the previous segment's last fused run may have covered this one)
    if (i >= end) continue;
    std::vector<Module*> modules;  // (and the ones a run may fuse past the boundary)
    for (size_t j = i; j < std::min(layers.size(), end + 2); ++j) modules.push_back(layers[j].second.get());
    auto next = std::make_shared<size_t>(i);
    y = run_checkpointed(
        modules,
        [shared, begin = i, end, next](const Tensor& in) {
          Tensor out = in;
          *next = run_layers(*shared, begin, end, out);
          return out;
        },
        y);
    i = *next;
  }
  run_layers(layers, i, layers.size(), y);
  return y;
}

Shape Sequential::output_shape(const Shape& input) const {
  Shape s = input;
  for (const auto& [name, m] : named_children()) {
    try {
      s = m->output_shape(s);
    } catch (const ShapeError& e) {
      throw ShapeError(fmt::format("layer '{}' ({}): {}", name, m->type_name(), e.what()));
    }
  }
  return s;
}

}  // namespace ingot::nn

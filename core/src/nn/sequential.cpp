// Sequential: forward and shape inference chain the children; forward runs fusable runs of
// children (Linear + ReLU, Conv2d + BatchNorm2d + ReLU in eval, ...) as one op (nn/fusion.h).
#include "ingot/nn/sequential.h"

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

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  const auto& layers = named_children();
  for (size_t i = 0; i < layers.size();) i += forward_fused(layers, i, y);
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

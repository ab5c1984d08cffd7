// Unit discovery (exact layer types: a subclass may compute something else) and BN folding, which
// reuses the fusion rules' fold_batch_norm so that the folded conv is what eval already runs.
#include "layer_units.h"

#include <set>
#include <typeinfo>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/fusion.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/sequential.h"
#include "passthrough.h"

namespace ingot::quant {
namespace {

template <class T>
bool is(const nn::ModulePtr& m) {
  return m != nullptr && typeid(*m) == typeid(T);
}

bool foldable_bn(const nn::ModulePtr& m) {
  return is<nn::BatchNorm2d>(m) && nn::batch_norm_foldable(static_cast<const nn::BatchNorm2d&>(*m));
}

}  // namespace

std::string join_path(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

std::string Unit::kind() const {
  std::string k = conv ? "Conv2d" : "Linear";
  if (!bn.empty()) k += "+BN";
  if (!relu.empty()) k += "+ReLU";
  return k;
}

std::vector<Unit> find_units(nn::Module& model, bool linear_only) {
  std::vector<Unit> units;
  for (const auto& [prefix, module] : model.named_modules()) {
    const auto& children = module->named_children();
    const bool sequential = typeid(*module) == typeid(nn::Sequential);
    const bool block = typeid(*module) == typeid(nn::BasicBlock);
    for (size_t i = 0; i < children.size(); ++i) {
      const auto& [name, child] = children[i];
      const bool conv = is<nn::Conv2d>(child);
      if (!is<nn::Linear>(child) && !(conv && !linear_only)) continue;
      Unit u;
      u.path = join_path(prefix, name);
      u.parent = prefix;
      u.index = u.last = i;
      u.conv = conv;
      u.chainable = sequential && !linear_only;
      if (linear_only) {
        units.push_back(std::move(u));
        continue;
      }
      if (sequential) {
        size_t j = i + 1;
        if (conv && j < children.size() && foldable_bn(children[j].second)) {
          u.bn = join_path(prefix, children[j].first);
          u.last = j++;
        }
        if (j < children.size() && is<nn::ReLU>(children[j].second)) {
          u.relu = join_path(prefix, children[j].first);
          u.last = j;
        }
      } else if (block && conv && (name == "conv1" || name == "conv2")) {
        const std::string bn = name == "conv1" ? "bn1" : "bn2";
        if (foldable_bn(module->get_submodule(bn))) u.bn = join_path(prefix, bn);
      }
      units.push_back(std::move(u));
    }
  }
  return units;
}

std::shared_ptr<nn::Conv2d> conv_with_bias(const nn::Conv2d& conv) {
  const Conv2dParams p = conv.params();
  nn::Conv2dOptions o;
  o.stride = p.stride;
  o.padding = p.padding;
  o.dilation = p.dilation;
  o.groups = p.groups;
  o.bias = true;
  Generator scratch(0);
  const Tensor w = conv.weight();
  auto out = std::make_shared<nn::Conv2d>(conv.in_channels(), conv.out_channels(),
                                          std::array<int64_t, 2>{w.size(2), w.size(3)}, o, &scratch);
  out->to(w.device());
  out->train(conv.is_training());
  return out;
}

void fold_units(nn::Module& model, std::vector<Unit>& units) {
  NoGradGuard no_grad;
  for (Unit& u : units) {
    u.f32 = model.get_submodule(u.path);
    if (!u.relu.empty()) u.relu_module = model.get_submodule(u.relu);
    if (u.bn.empty()) continue;
    const auto& conv = static_cast<const nn::Conv2d&>(*u.f32);
    const auto& bn = static_cast<const nn::BatchNorm2d&>(*model.get_submodule(u.bn));
    const nn::FoldedConv folded = nn::fold_batch_norm(conv, bn);
    auto fused = conv_with_bias(conv);
    fused->weight().copy_(folded.weight);
    fused->bias().copy_(folded.bias);
    fused->eval();
    model.replace_child(u.path, fused);
    model.replace_child(u.bn, std::make_shared<Identity>());
    u.f32 = fused;
  }
}

}  // namespace ingot::quant

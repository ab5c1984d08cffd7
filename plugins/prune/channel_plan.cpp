// Walking the model for channel pruning: Sequential chains (nested ones inlined) and the
// residual blocks in them; any other container is a wall the walk does not see through.
#include "channel_plan.h"

#include <fmt/format.h>

#include <typeinfo>

#include "ingot/nn/activation.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/pooling.h"
#include "ingot/nn/sequential.h"

namespace ingot::prune {

const ChannelLink* ChannelPlan::find(const std::string& layer) const {
  for (const ChannelLink& l : links)
    if (l.producer == layer) return &l;
  return nullptr;
}

std::string ChannelPlan::reason(const std::string& layer) const {
  for (const auto& [name, why] : skipped)
    if (name == layer) return why;
  return "";
}

namespace {

using Item = std::pair<std::string, nn::Module*>;

template <class T>
T* as(nn::Module* m) {
  return m != nullptr && typeid(*m) == typeid(T) ? static_cast<T*>(m) : nullptr;
}

bool is_layer(nn::Module* m) { return as<nn::Conv2d>(m) != nullptr || as<nn::Linear>(m) != nullptr; }

int64_t out_channels(nn::Module* m) {
  if (auto* c = as<nn::Conv2d>(m)) return c->out_channels();
  return as<nn::Linear>(m)->out_features();
}

/// Layers after which a zero channel stays zero and stays one channel.
bool passes_channels(nn::Module* m) {
  return as<nn::ReLU>(m) || as<nn::ReLU6>(m) || as<nn::GELU>(m) || as<nn::Tanh>(m) || as<nn::MaxPool2d>(m) ||
         as<nn::AvgPool2d>(m) || as<nn::AdaptiveAvgPool2d>(m) || as<nn::Dropout>(m);
}

bool flattens_all(nn::Module* m) {
  return as<nn::Flatten>(m) != nullptr && m->extra_repr() == "start_dim=1, end_dim=-1";
}

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void inline_sequential(nn::Module& seq, const std::string& prefix, std::vector<Item>& out) {
  for (const auto& [name, child] : seq.named_children()) {
    if (as<nn::Sequential>(child.get()) != nullptr)
      inline_sequential(*child, join(prefix, name), out);
    else
      out.emplace_back(join(prefix, name), child.get());
  }
}

class Planner {
 public:
  ChannelPlan plan;

  void visit(nn::Module& m, const std::string& path, const std::string& end_reason) {
    if (is_layer(&m)) {
      skip(path, end_reason);
    } else if (as<nn::Sequential>(&m) != nullptr) {
      std::vector<Item> items;
      inline_sequential(m, path, items);
      chain(items, end_reason);
      for (const auto& [p, child] : items)
        if (!child->named_children().empty()) visit(*child, p, "");
    } else if (auto* b = as<nn::BasicBlock>(&m)) {
      block(*b, path);
    } else {
      const std::string wall = fmt::format("inside {} '{}', whose data flow channel pruning does not follow",
                                           m.type_name(), path);
      for (const auto& [name, child] : m.named_children())
        visit(*child, join(path, name), wall);
    }
  }

 private:
  void skip(const std::string& path, const std::string& why) { plan.skipped.emplace_back(path, why); }

  void chain(const std::vector<Item>& items, const std::string& end_reason) {
    for (size_t i = 0; i < items.size(); ++i) {
      const auto& [path, layer] = items[i];
      if (!is_layer(layer)) continue;
      const int64_t channels = out_channels(layer);
      if (auto* c = as<nn::Conv2d>(layer); c != nullptr && c->params().groups != 1) {
        skip(path, fmt::format("a grouped convolution (groups={})", c->params().groups));
        continue;
      }
      ChannelLink link{path, {}, "", 1};
      std::string why;
      bool flat = false;
      for (size_t j = i + 1; j < items.size() && link.consumer.empty() && why.empty(); ++j) {
        const auto& [next_path, next] = items[j];
        if (passes_channels(next)) continue;
        if (auto* bn = as<nn::BatchNorm2d>(next); bn != nullptr && !flat) {
          if (!bn->options().affine)
            why = fmt::format("BatchNorm2d '{}' after it has no weight and bias to mask", next_path);
          else if (bn->num_features() != channels)
            why = fmt::format("BatchNorm2d '{}' has {} channels, not {}", next_path, bn->num_features(), channels);
          else
            link.norms.push_back(next_path);
        } else if (flattens_all(next)) {
          flat = true;
        } else if (auto* conv = as<nn::Conv2d>(next); conv != nullptr && !flat) {
          if (conv->params().groups != 1)
            why = fmt::format("the next convolution '{}' is grouped", next_path);
          else if (conv->in_channels() != channels)
            why = fmt::format("the next convolution '{}' takes {} channels, not {}", next_path, conv->in_channels(),
                              channels);
          else
            link.consumer = next_path;
        } else if (auto* lin = as<nn::Linear>(next)) {
          const bool from_conv = as<nn::Conv2d>(layer) != nullptr;
          if (from_conv && !flat)
            why = fmt::format("Linear '{}' is applied to its 4-D output without a Flatten", next_path);
          else if (lin->in_features() % channels != 0 || (!from_conv && lin->in_features() != channels))
            why = fmt::format("Linear '{}' takes {} inputs, which are not {} channels' blocks", next_path,
                              lin->in_features(), channels);
          else
            link.consumer = next_path, link.block = lin->in_features() / channels;
        } else if (as<nn::BasicBlock>(next) != nullptr) {
          why = fmt::format("its outputs enter the residual block '{}' (they reach its residual sum)", next_path);
        } else {
          why = fmt::format("followed by {} '{}', which channel pruning does not see through", next->type_name(),
                            next_path);
        }
      }
      if (!link.consumer.empty())
        plan.links.push_back(std::move(link));
      else
        skip(path, why.empty() ? (end_reason.empty() ? "its outputs are its container's outputs" : end_reason) : why);
    }
  }

  void block(nn::BasicBlock& b, const std::string& path) {
    const std::string sum = fmt::format("its outputs reach the residual sum of '{}'", path);
    nn::Module* conv1 = b.get_submodule("conv1").get();
    auto* c1 = as<nn::Conv2d>(conv1);
    auto* bn1 = as<nn::BatchNorm2d>(b.get_submodule("bn1").get());
    auto* c2 = as<nn::Conv2d>(b.get_submodule("conv2").get());
    if (c1 != nullptr && bn1 != nullptr && c2 != nullptr && c1->params().groups == 1 && c2->params().groups == 1 &&
        bn1->options().affine && bn1->num_features() == c1->out_channels() && c2->in_channels() == c1->out_channels())
      plan.links.push_back({join(path, "conv1"), {join(path, "bn1")}, join(path, "conv2"), 1});
    else if (is_layer(conv1))
      skip(join(path, "conv1"), "conv1 -> bn1 -> conv2 of its block are not the plain layers");
    if (is_layer(b.get_submodule("conv2").get())) skip(join(path, "conv2"), sum);
    if (const nn::ModulePtr shortcut = b.get_submodule(b.shortcut_name()))
      for (const auto& [name, m] : shortcut->named_modules(join(path, b.shortcut_name())))
        if (is_layer(m)) skip(name, sum);
  }
};

}  // namespace

ChannelPlan plan_channels(nn::Module& root) {
  Planner p;
  p.visit(root, "", "the model's output layer: its outputs are the model's outputs (the classes)");
  return std::move(p.plan);
}

}  // namespace ingot::prune

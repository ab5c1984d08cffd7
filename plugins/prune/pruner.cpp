// Pruner: resolving the layers, keeping host and device masks in step, and applying them.
#include "pruner.h"

#include <fmt/format.h>

#include <algorithm>
#include <typeinfo>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/linear.h"
#include "ingot/ops/elementwise.h"

namespace ingot::prune {

std::vector<std::pair<std::string, nn::Module*>> prunable_layers(nn::Module& root) {
  std::vector<std::pair<std::string, nn::Module*>> out;
  for (const auto& [name, m] : root.named_modules())
    if (typeid(*m) == typeid(nn::Conv2d) || typeid(*m) == typeid(nn::Linear)) out.emplace_back(name, m);
  return out;
}

namespace {

Tensor weight_of(nn::Module* m) {
  if (typeid(*m) == typeid(nn::Conv2d)) return static_cast<nn::Conv2d*>(m)->weight();
  return static_cast<nn::Linear*>(m)->weight();
}

Tensor bias_of(nn::Module* m) {
  if (typeid(*m) == typeid(nn::Conv2d)) return static_cast<nn::Conv2d*>(m)->bias();
  return static_cast<nn::Linear*>(m)->bias();
}

/// The device copy of a host 0/1 mask, in `like`'s dtype and on its device.
Tensor to_device(const Mask& m, const Shape& shape, const Tensor& like) {
  return Tensor::from_vector(m, shape).to(like.dtype()).to(like.device());
}

/// The row mask of a structured mask (1 where the row is kept).
Mask row_mask(const Mask& mask, int64_t rows) {
  const std::vector<uint8_t> alive = alive_rows(mask, rows);
  return Mask(alive.begin(), alive.end());
}

}  // namespace

Pruner::Pruner(nn::Module& root, const PruneConfig& cfg, uint64_t seed)
    : root_(root), cfg_(cfg), gen_(seed ^ 0x7072756e65ull) {
  const bool structured = is_structured(cfg.method);
  if (structured) plan_ = plan_channels(root);
  const auto layers = prunable_layers(root);
  std::vector<std::pair<std::string, nn::Module*>> chosen;
  if (cfg.layers.empty()) {
    for (const auto& [name, m] : layers) {
      if (structured && plan_.find(name) == nullptr)
        skipped_.emplace_back(name, plan_.reason(name));
      else
        chosen.emplace_back(name, m);
    }
  } else {
    std::vector<std::string> known;
    for (const auto& l : layers) known.push_back(l.first);
    for (const std::string& name : cfg.layers) {
      const auto it = std::find_if(layers.begin(), layers.end(), [&](const auto& l) { return l.first == name; });
      if (it == layers.end()) {
        const nn::ModulePtr m = root.get_submodule(name);
        throw ConfigError(fmt::format("{}.layers: {}; the model's Conv2d and Linear layers are: {}", cfg.where,
                                      m ? fmt::format("'{}' is a {}, not a Conv2d or Linear", name, m->type_name())
                                        : fmt::format("no layer '{}' in the model", name),
                                      fmt::join(known, ", ")));
      }
      if (structured && plan_.find(name) == nullptr)
        throw ConfigError(fmt::format("{}.layers: ln_structured cannot remove the filters of '{}': {}; leave it out "
                                      "(or leave `layers` out to prune every layer that can shrink)",
                                      cfg.where, name, plan_.reason(name)));
      if (std::any_of(chosen.begin(), chosen.end(), [&](const auto& c) { return c.first == name; }))
        throw ConfigError(fmt::format("{}.layers: '{}' is listed twice", cfg.where, name));
      chosen.push_back(*it);
    }
  }
  if (chosen.empty())
    throw ConfigError(fmt::format("{}: no layer to prune with {}{}", cfg.where, method_name(cfg.method),
                                  skipped_.empty() ? "" : fmt::format(" ({}: {})", skipped_[0].first, skipped_[0].second)));
  for (const auto& [name, m] : chosen) {
    Target t;
    t.name = name;
    t.type = m->type_name();
    t.weight = weight_of(m);
    t.rows = t.weight.size(0);
    t.mask.assign(static_cast<size_t>(t.weight.numel()), 1.0f);
    if (structured) {
      t.link = *plan_.find(name);
      if (const Tensor b = bias_of(m); b.defined()) t.row_tensors.push_back(b);
      for (const std::string& norm : t.link->norms) {
        const auto& bn = static_cast<const nn::BatchNorm2d&>(*root.get_submodule(norm));
        t.row_tensors.push_back(bn.weight());
        t.row_tensors.push_back(bn.bias());
      }
    }
    upload(t);
    targets_.push_back(std::move(t));
  }
}

void Pruner::upload(Target& t) const {
  t.mask_dev = to_device(t.mask, t.weight.shape(), t.weight);
  if (t.link) t.row_mask_dev = to_device(row_mask(t.mask, t.rows), Shape{t.rows}, t.weight);
}

void Pruner::prune_layer(Target& t, const std::vector<float>& w, const Amount& amount) {
  const std::string what = fmt::format("layer '{}'", t.name);
  switch (cfg_.method) {
    case Method::RandomUnstructured:
      random_unstructured(rand(Shape{t.weight.numel()}, DType::F32, &gen_).to_vector<float>(), t.mask, amount, what);
      break;
    case Method::LnStructured: {
      ln_structured(w, t.rows, t.mask, amount, cfg_.n, what);
      const std::vector<uint8_t> alive = alive_rows(t.mask, t.rows);
      if (std::none_of(alive.begin(), alive.end(), [](uint8_t a) { return a != 0; }))
        throw ConfigError(fmt::format("{}: ln_structured would remove all {} filters of '{}'; give an amount below 1",
                                      cfg_.where, t.rows, t.name));
      break;
    }
    default:
      l1_unstructured(w, t.mask, amount, what);
  }
}

void Pruner::prune(const Amount& amount) {
  if (cfg_.method == Method::GlobalUnstructured) {
    std::vector<std::vector<float>> ws;
    std::vector<const std::vector<float>*> wp;
    std::vector<Mask*> mp;
    for (Target& t : targets_) ws.push_back(t.weight.to_vector<float>());
    for (size_t i = 0; i < targets_.size(); ++i) wp.push_back(&ws[i]), mp.push_back(&targets_[i].mask);
    global_unstructured(wp, mp, amount);
  } else {
    for (Target& t : targets_) prune_layer(t, t.weight.to_vector<float>(), amount);
  }
  for (Target& t : targets_) upload(t);
  apply_masks();
}

void Pruner::prune_to(double sparsity) {
  if (cfg_.method == Method::GlobalUnstructured) {
    int64_t total = 0, pruned = 0;
    for (const Target& t : targets_) total += t.weight.numel(), pruned += count_pruned(t.mask);
    const int64_t want = round_half_even(sparsity * static_cast<double>(total));
    if (want > pruned) prune(Amount::of_count(want - pruned));
    return;
  }
  bool changed = false;
  for (Target& t : targets_) {
    const bool rows = is_structured(cfg_.method);
    const int64_t total = rows ? t.rows : t.weight.numel();
    int64_t pruned = count_pruned(t.mask);
    if (rows) {
      const std::vector<uint8_t> alive = alive_rows(t.mask, t.rows);
      pruned = t.rows - static_cast<int64_t>(std::count(alive.begin(), alive.end(), uint8_t{1}));
    }
    const int64_t want = round_half_even(sparsity * static_cast<double>(total));
    if (want <= pruned) continue;
    prune_layer(t, t.weight.to_vector<float>(), Amount::of_count(want - pruned));
    upload(t);
    changed = true;
  }
  if (changed) apply_masks();
}

void Pruner::masks_from_weights() {
  for (Target& t : targets_) {
    const std::vector<float> w = t.weight.to_vector<float>();
    for (size_t i = 0; i < w.size(); ++i) t.mask[i] = w[i] != 0.0f ? 1.0f : 0.0f;
    if (t.link) {  // whole rows: a row with any weight left is kept whole
      const size_t cols = w.size() / static_cast<size_t>(t.rows);
      const std::vector<uint8_t> alive = alive_rows(t.mask, t.rows);
      for (size_t r = 0; r < alive.size(); ++r)
        std::fill(t.mask.begin() + r * cols, t.mask.begin() + (r + 1) * cols, alive[r] ? 1.0f : 0.0f);
    }
    upload(t);
  }
  apply_masks();
}

void Pruner::apply_masks() const {
  const NoGradGuard no_grad;
  for (const Target& t : targets_) {
    t.weight.copy_(t.weight * t.mask_dev);
    for (const Tensor& r : t.row_tensors) r.copy_(r * t.row_mask_dev);
  }
}

void Pruner::mask_gradients() const {
  const NoGradGuard no_grad;
  const auto mask_grad = [](const Tensor& p, const Tensor& m) {
    if (const Tensor g = p.grad(); g.defined()) g.copy_(g * m);
  };
  for (const Target& t : targets_) {
    mask_grad(t.weight, t.mask_dev);
    for (const Tensor& r : t.row_tensors) mask_grad(r, t.row_mask_dev);
  }
}

std::vector<ShapeChange> Pruner::make_permanent() {
  apply_masks();
  std::vector<ShapeChange> changes;
  if (is_structured(cfg_.method)) {
    std::vector<ChannelLink> links;
    std::vector<std::vector<uint8_t>> keep;
    for (const Target& t : targets_) links.push_back(*t.link), keep.push_back(alive_rows(t.mask, t.rows));
    changes = shrink_channels(root_, links, keep);
  }
  targets_.clear();
  return changes;
}

double Pruner::sparsity() const {
  int64_t total = 0, pruned = 0;
  for (const Target& t : targets_) total += t.weight.numel(), pruned += count_pruned(t.mask);
  return total > 0 ? static_cast<double>(pruned) / static_cast<double>(total) : 0.0;
}

}  // namespace ingot::prune

// Rebuilding Conv2d, Linear and BatchNorm2d layers with a subset of their channels: the kept
// weights copied on the host, the layer built fresh (its own init drawn from a local generator,
// so the process's default stream is untouched) and moved to where the old one was.
#include "shrink.h"

#include <fmt/format.h>

#include <map>
#include <typeinfo>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/linear.h"

namespace ingot::prune {

namespace {

/// What one layer loses: output channels (rows), input channels (blocks of `block` inputs).
struct Cut {
  std::vector<uint8_t> out;  ///< empty = all kept
  std::vector<uint8_t> in;   ///< empty = all kept
  int64_t block = 1;
};

int64_t kept(const std::vector<uint8_t>& keep, int64_t all) {
  if (keep.empty()) return all;
  int64_t n = 0;
  for (const uint8_t k : keep) n += k != 0;
  return n;
}

/// `w` viewed as [rows, cols, inner] with the rows and the columns (inputs, in blocks of cut.block) kept.
std::vector<float> select(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t inner, const Cut& cut) {
  std::vector<float> out;
  out.reserve(w.size());
  for (int64_t r = 0; r < rows; ++r) {
    if (!cut.out.empty() && cut.out[r] == 0) continue;
    for (int64_t c = 0; c < cols; ++c) {
      if (!cut.in.empty() && cut.in[c / cut.block] == 0) continue;
      const auto at = w.begin() + (r * cols + c) * inner;
      out.insert(out.end(), at, at + inner);
    }
  }
  return out;
}

std::vector<float> select_channels(const Tensor& t, const std::vector<uint8_t>& keep) {
  std::vector<float> v = t.to_vector<float>(), out;
  for (size_t i = 0; i < v.size(); ++i)
    if (keep[i] != 0) out.push_back(v[i]);
  return out;
}

void assign(const Tensor& dst, const std::vector<float>& values) {
  dst.copy_(Tensor::from_vector(values, dst.shape()).to(dst.dtype()));
}

/// Puts `fresh` where `old` was: same device, dtype (of the weight), mode.
void place(nn::Module& root, const std::string& path, const nn::Module& old, const Tensor& old_weight,
           const nn::ModulePtr& fresh) {
  if (old_weight.dtype() != DType::F32) fresh->to(old_weight.dtype());
  fresh->to(old_weight.device());
  fresh->train(old.is_training());
  root.replace_child(path, fresh);
}

ShapeChange rebuild(nn::Module& root, const std::string& path, const Cut& cut) {
  const nn::ModulePtr old = root.get_submodule(path);
  INGOT_CHECK(old != nullptr, "prune: no layer '{}' to shrink", path);
  const NoGradGuard no_grad;
  Generator scratch(0);
  ShapeChange change{path, old->type_name(), {}, {}, old->num_parameters(), 0};
  nn::ModulePtr fresh;
  Tensor old_weight;
  if (typeid(*old) == typeid(nn::Conv2d)) {
    const auto& c = static_cast<const nn::Conv2d&>(*old);
    old_weight = c.weight();
    const Shape& s = old_weight.shape();
    const int64_t o = kept(cut.out, s[0]), i = kept(cut.in, s[1]);
    const Conv2dParams p = c.params();
    nn::Conv2dOptions opt{p.stride, p.padding, p.dilation, p.groups, c.bias().defined()};
    auto conv = std::make_shared<nn::Conv2d>(i * p.groups, o, std::array<int64_t, 2>{s[2], s[3]}, opt, &scratch);
    assign(conv->weight(), select(old_weight.to_vector<float>(), s[0], s[1], s[2] * s[3], cut));
    if (c.bias().defined())
      assign(conv->bias(), cut.out.empty() ? c.bias().to_vector<float>() : select_channels(c.bias(), cut.out));
    fresh = conv;
  } else if (typeid(*old) == typeid(nn::Linear)) {
    const auto& l = static_cast<const nn::Linear&>(*old);
    old_weight = l.weight();
    const Shape& s = old_weight.shape();
    const int64_t o = kept(cut.out, s[0]);
    const int64_t i = cut.in.empty() ? s[1] : kept(cut.in, s[1] / cut.block) * cut.block;
    auto lin = std::make_shared<nn::Linear>(i, o, l.bias().defined(), &scratch);
    assign(lin->weight(), select(old_weight.to_vector<float>(), s[0], s[1], 1, cut));
    if (l.bias().defined())
      assign(lin->bias(), cut.out.empty() ? l.bias().to_vector<float>() : select_channels(l.bias(), cut.out));
    fresh = lin;
  } else if (typeid(*old) == typeid(nn::BatchNorm2d)) {
    const auto& b = static_cast<const nn::BatchNorm2d&>(*old);
    old_weight = b.weight();
    auto bn = std::make_shared<nn::BatchNorm2d>(kept(cut.out, b.num_features()), b.options());
    assign(bn->weight(), select_channels(b.weight(), cut.out));
    assign(bn->bias(), select_channels(b.bias(), cut.out));
    if (b.running_mean().defined()) {
      assign(bn->running_mean(), select_channels(b.running_mean(), cut.out));
      assign(bn->running_var(), select_channels(b.running_var(), cut.out));
      bn->num_batches_tracked().copy_(b.num_batches_tracked().to(Device::cpu()));
    }
    fresh = bn;
  } else {
    throw Error(fmt::format("prune: cannot shrink {} '{}'", old->type_name(), path));
  }
  change.before = old_weight.shape();
  place(root, path, *old, old_weight, fresh);
  const nn::ModulePtr now = root.get_submodule(path);
  change.after = now->named_parameters().front().second.shape();
  change.params_after = now->num_parameters();
  return change;
}

}  // namespace

std::vector<ShapeChange> shrink_channels(nn::Module& root, const std::vector<ChannelLink>& links,
                                         const std::vector<std::vector<uint8_t>>& keep) {
  std::map<std::string, Cut> cuts;
  for (size_t k = 0; k < links.size(); ++k) {
    const ChannelLink& link = links[k];
    INGOT_CHECK(kept(keep[k], 1) > 0, "prune: '{}' would keep none of its {} channels", link.producer,
                keep[k].size());
    cuts[link.producer].out = keep[k];
    for (const std::string& bn : link.norms) cuts[bn].out = keep[k];
    Cut& in = cuts[link.consumer];
    in.in = keep[k];
    in.block = link.block;
  }
  // (the paths first: rebuilding frees the modules named_modules points to)
  std::vector<std::string> order;
  for (const auto& named : root.named_modules())
    if (cuts.count(named.first) != 0) order.push_back(named.first);
  std::vector<ShapeChange> changes;
  for (const std::string& path : order) changes.push_back(rebuild(root, path, cuts.at(path)));
  return changes;
}

}  // namespace ingot::prune

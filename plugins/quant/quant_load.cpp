// Loading an int8 model: the units of the f32 model (the rules quantization used), each rebuilt
// from the file's tensors, then a strict load_state_dict as the final check of names and shapes.
#include "quant_load.h"

#include <fmt/format.h>

#include "dynamic_linear.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/io/state_dict.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/linear.h"
#include "layer_units.h"
#include "passthrough.h"
#include "quantized_layers.h"

namespace ingot::quant {
namespace {

class FileView {
 public:
  FileView(const io::SafetensorsFile& f, const std::string& source) : f_(f), source_(source) {}
  bool has(const std::string& name) const { return f_.tensors.count(name) != 0; }
  Tensor get(const std::string& name) const {
    const auto it = f_.tensors.find(name);
    if (it == f_.tensors.end()) throw InputError(fmt::format("{}: no tensor '{}'", source_, name));
    return it->second.clone();
  }
  Tensor maybe(const std::string& name) const { return has(name) ? get(name) : Tensor(); }
  QParams params(const std::string& prefix, DType dtype) const {
    QParams q;
    q.scale = get(prefix + "_scale").to(DType::F32);
    q.zero_point = get(prefix + "_zero_point").to(DType::I32);
    q.dtype = dtype;
    std::tie(q.quant_min, q.quant_max) = quant_range(dtype);
    return q;
  }
  const std::string& source() const { return source_; }

 private:
  const io::SafetensorsFile& f_;
  const std::string& source_;
};

/// The int8 module of unit `u` from the file, or null when the file has it in f32.
nn::ModulePtr int8_module(const Unit& u, const nn::Module& layer, const FileView& f, bool bn_folded) {
  const std::string p = u.path + ".";
  const Tensor w = f.get(p + "weight");
  if (w.dtype() != DType::I8) return nullptr;
  const Tensor f32 =
      u.conv ? static_cast<const nn::Conv2d&>(layer).weight() : static_cast<const nn::Linear&>(layer).weight();
  if (w.shape() != f32.shape())
    throw InputError(
        fmt::format("{}: {}.weight is {} in the file, {} in the model; was the file saved from this model?", f.source(),
                    u.path, w.shape().str(), f32.shape().str()));
  if (f.has(p + "input_quant_range")) {
    if (u.conv)
      throw InputError(
          fmt::format("{}: {} is a Conv2d but the file has it as a DynamicQuantizedLinear", f.source(), u.path));
    return std::make_shared<DynamicQuantizedLinear>(w, f.params(p + "weight", DType::I8), f.maybe(p + "bias"),
                                                    f.get(p + "input_quant_range"));
  }
  if (!u.bn.empty() && !bn_folded)
    throw InputError(fmt::format("{}: {} is int8 but the file also has the BatchNorm2d {} that folds into it",
                                 f.source(), u.path, u.bn));
  std::optional<QParams> out;
  if (f.has(p + "output_scale")) out = f.params(p + "output", DType::U8);
  const QuantizedState s{w,
                         f.params(p + "weight", DType::I8),
                         f.maybe(p + "bias"),
                         f.params(p + "input", DType::U8),
                         out,
                         u.relu.empty() ? Activation::None : Activation::Relu};
  if (u.conv) return std::make_shared<QuantizedConv2d>(s, static_cast<const nn::Conv2d&>(layer).params());
  return std::make_shared<QuantizedLinear>(s);
}

/// Every int8 layer that hands on u8 must be followed, through pass-through layers only, by an int8
/// layer that takes it with the same parameters.
void check_chains(nn::Module& model, const std::vector<Unit>& units, const std::string& source) {
  const bool pools = device_pools_u8(model.device());
  for (const Unit& u : units) {
    const auto* q = dynamic_cast<const QuantizedLayer*>(model.get_submodule(u.path).get());
    if (q == nullptr || !q->requantizes()) continue;
    const nn::Module& parent = u.parent.empty() ? model : *model.get_submodule(u.parent);
    const auto& children = parent.named_children();
    const QuantizedLayer* next = nullptr;
    for (size_t k = u.last + 1; k < children.size() && next == nullptr; ++k) {
      next = dynamic_cast<const QuantizedLayer*>(children[k].second.get());
      if (next == nullptr && !passes_u8(*children[k].second, pools)) break;
    }
    const std::optional<QParams> out = q->output_qparams();
    const bool same = next != nullptr && next->input_qparams().scale.item() == out->scale.item() &&
                      next->input_qparams().zero_point.item() == out->zero_point.item();
    if (!same)
      throw InputError(
          fmt::format("{}: {} hands on u8 (output_scale) but no int8 layer after it takes it with the "
                      "same parameters; was the file saved from this model?",
                      source, u.path));
  }
}

}  // namespace

LoadSummary load_quantized(nn::Module& model, const io::SafetensorsFile& file, const std::string& source) {
  io::require_finite(io::NamedTensors(file.tensors.begin(), file.tensors.end()), source);
  NoGradGuard no_grad;
  model.eval();
  const Device device = model.device();
  const FileView f(file, source);
  std::vector<Unit> units = find_units(model, false);
  LoadSummary summary;
  summary.layers = units.size();
  for (const Unit& u : units) {
    if (!f.has(u.path + ".weight"))
      throw InputError(fmt::format("{}: no tensor '{}.weight' for the {} at {}; was the file saved from this model?",
                                   source, u.path, u.conv ? "Conv2d" : "Linear", u.path));
    const bool bn_folded = !u.bn.empty() && !f.has(u.bn + ".running_mean");
    const nn::ModulePtr layer = model.get_submodule(u.path);
    nn::ModulePtr replacement = int8_module(u, *layer, f, bn_folded);
    if (replacement != nullptr) {
      ++summary.int8;
      if (dynamic_cast<DynamicQuantizedLinear*>(replacement.get()) != nullptr) {
        ++summary.dynamic;
      } else if (!u.relu.empty()) {
        model.replace_child(u.relu, std::make_shared<Identity>());
      }
    } else if (bn_folded) {
      replacement = conv_with_bias(static_cast<const nn::Conv2d&>(*layer));
    }
    if (bn_folded) model.replace_child(u.bn, std::make_shared<Identity>());
    if (replacement != nullptr) {
      replacement->eval();
      model.replace_child(u.path, replacement);
    }
  }
  model.to(device);
  try {
    model.load_state_dict(file.tensors, true);
  } catch (const Error& e) {
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
  check_chains(model, units, source);
  return summary;
}

LoadSummary load_quantized(nn::Module& model, const std::filesystem::path& path) {
  return load_quantized(model, io::load_safetensors(path), path.string());
}

}  // namespace ingot::quant

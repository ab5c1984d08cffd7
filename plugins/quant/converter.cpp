// The converter: every install starts from the f32 layers, then decides the u8 links from the
// wanted int8 set, then builds the int8 modules with the parameters those links give.
#include "converter.h"

#include <fmt/format.h>

#include <algorithm>

#include "dynamic_linear.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/linear.h"
#include "passthrough.h"
#include "quantized_layers.h"

namespace ingot::quant {
namespace {

Tensor f32_weight(const Unit& u) {
  return u.conv ? static_cast<const nn::Conv2d&>(*u.f32).weight() : static_cast<const nn::Linear&>(*u.f32).weight();
}

Tensor f32_bias(const Unit& u) {
  const Tensor b =
      u.conv ? static_cast<const nn::Conv2d&>(*u.f32).bias() : static_cast<const nn::Linear&>(*u.f32).bias();
  return b.defined() ? b.detach().clone() : b;
}

std::string scale_span(const QParams& q) {
  const std::vector<float> s = q.scale.to_vector<float>();
  const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
  return *lo == *hi ? fmt::format("{:.4g}", *lo) : fmt::format("{:.4g}..{:.4g}", *lo, *hi);
}

std::string u8_params(const QParams& q) {
  return fmt::format("scale {:.4g} zp {}", q.scale.to_vector<float>()[0], q.zero_point.to_vector<int32_t>()[0]);
}

}  // namespace

Converter::Converter(nn::Module& model, std::vector<Unit>& units, const QuantOptions& options)
    : model_(model),
      units_(units),
      options_(options),
      device_(model.device()),
      int8_(units.size(), false),
      runs_f32_(units.size()),
      runs_u8_(units.size()),
      producer_(units.size()),
      requantizes_(units.size(), false) {
  for (Unit& u : units_) {
    INGOT_CHECK(u.f32 != nullptr, "quantize: unit {} was not prepared (fold_units)", u.path);
    std::tie(u.qweight, u.weight_q) = quantize_weight(f32_weight(u), options_.per_channel);
  }
}

size_t Converter::int8_count() const { return static_cast<size_t>(std::count(int8_.begin(), int8_.end(), true)); }

nn::ModulePtr Converter::make_int8(size_t i, const QParams* in, const std::optional<QParams>& out) const {
  const Unit& u = units_[i];
  if (options_.dynamic)
    return std::make_shared<DynamicQuantizedLinear>(u.qweight, u.weight_q, f32_bias(u), options_.reduce_range);
  QuantizedState s{u.qweight, u.weight_q, f32_bias(u), *in, out, u.relu.empty() ? Activation::None : Activation::Relu};
  if (u.conv) return std::make_shared<QuantizedConv2d>(s, static_cast<const nn::Conv2d&>(*u.f32).params());
  return std::make_shared<QuantizedLinear>(s);
}

bool Converter::device_runs_unit(size_t i) {
  if (!runs_f32_[i]) {
    const Unit& u = units_[i];
    const QParams dummy = QParams::per_tensor(1.0, 0, DType::U8, device_);
    QuantizedState s{u.qweight,    u.weight_q,
                     f32_bias(u),  options_.dynamic ? dummy : u.input_q,
                     std::nullopt, u.relu.empty() || options_.dynamic ? Activation::None : Activation::Relu};
    const Conv2dParams p = u.conv ? static_cast<const nn::Conv2d&>(*u.f32).params() : Conv2dParams{};
    runs_f32_[i] = device_runs(s, u.conv ? &p : nullptr, device_);
    s.output_q = u.output_q;
    runs_u8_[i] = *runs_f32_[i] && !options_.dynamic && device_runs(s, u.conv ? &p : nullptr, device_);
  }
  return *runs_f32_[i];
}

std::optional<size_t> Converter::consumer(size_t i, const std::vector<bool>& want) {
  const Unit& u = units_[i];
  if (!u.chainable || options_.dynamic) return std::nullopt;
  const nn::Module& parent = u.parent.empty() ? model_ : *model_.get_submodule(u.parent);
  const auto& children = parent.named_children();
  const bool pools = device_pools_u8(device_);
  for (size_t k = u.last + 1; k < children.size(); ++k) {
    for (size_t j = 0; j < units_.size(); ++j) {
      if (units_[j].parent == u.parent && units_[j].index == k)
        return want[j] ? std::optional<size_t>(j) : std::nullopt;
    }
    if (!passes_u8(*children[k].second, pools)) return std::nullopt;
  }
  return std::nullopt;
}

void Converter::install(const std::vector<bool>& int8) {
  INGOT_CHECK(int8.size() == units_.size(), "quantize: {} choices for {} layers", int8.size(), units_.size());
  NoGradGuard no_grad;
  for (const Unit& u : units_) {
    model_.replace_child(u.path, u.f32);
    if (u.relu_module) model_.replace_child(u.relu, u.relu_module);
  }
  for (size_t i = 0; i < units_.size(); ++i) int8_[i] = int8[i] && device_runs_unit(i);
  std::fill(producer_.begin(), producer_.end(), std::nullopt);
  std::fill(requantizes_.begin(), requantizes_.end(), false);
  for (size_t i = 0; i < units_.size(); ++i) {
    if (!int8_[i]) continue;
    const std::optional<size_t> j = consumer(i, int8_);
    if (j && *runs_u8_[i]) {
      producer_[*j] = i;
      requantizes_[i] = true;
    }
  }
  for (size_t i = 0; i < units_.size(); ++i) {
    if (!int8_[i]) continue;
    const Unit& u = units_[i];
    const QParams* in = producer_[i] ? &units_[*producer_[i]].output_q : &u.input_q;
    nn::ModulePtr m = make_int8(i, in, requantizes_[i] ? std::optional<QParams>(u.output_q) : std::nullopt);
    m->to(device_);
    m->eval();
    model_.replace_child(u.path, m);
    if (!u.relu.empty() && !options_.dynamic) model_.replace_child(u.relu, std::make_shared<Identity>());
  }
}

std::string Converter::describe(size_t i) const {
  const Unit& u = units_[i];
  const std::string head = fmt::format("{:<16} {:<15}", u.path, u.kind());
  if (!int8_[i]) return head + " f32";
  const std::string scheme =
      fmt::format("{} weight scales {}", options_.per_channel ? "per-channel" : "per-tensor", scale_span(u.weight_q));
  if (options_.dynamic)
    return fmt::format("{} int8 dynamic, {}, input u8 per batch [0, {}]", head, scheme,
                       options_.reduce_range ? 127 : 255);
  const std::string in = producer_[i] ? fmt::format("in u8 from {} ({})", units_[*producer_[i]].path,
                                                    u8_params(units_[*producer_[i]].output_q))
                                      : fmt::format("in f32 -> u8 {}", u8_params(u.input_q));
  const std::string out = requantizes_[i] ? fmt::format("out u8 {}", u8_params(u.output_q)) : "out f32";
  return fmt::format("{} int8 {}, {}, {}", head, scheme, in, out);
}

}  // namespace ingot::quant

// The accuracy gate: sensitivities from a few batches, decisions from full evaluations.
#include "accuracy_gate.h"

#include <fmt/format.h>

#include <optional>

#include "ingot/base/grad_mode.h"

namespace ingot::quant {
namespace {

/// The model's outputs (host f32) on up to `batches` batches of `loader`.
std::vector<std::vector<float>> outputs(nn::Module& model, data::DataLoader& loader, int64_t batches) {
  NoGradGuard no_grad;
  const Device device = model.device();
  std::vector<std::vector<float>> out;
  loader.begin_epoch(0);
  while (static_cast<int64_t>(out.size()) < batches) {
    std::optional<data::Batch> b = loader.next();
    if (!b) break;
    out.push_back(model(b->inputs.to(device)).to_vector<float>());
  }
  loader.stop();
  return out;
}

}  // namespace

std::vector<double> sensitivities(nn::Module& model, Converter& converter, data::DataLoader& loader, int64_t batches) {
  const bool training = model.is_training();
  model.eval();
  const size_t n = converter.units().size();
  converter.install(std::vector<bool>(n, false));
  const std::vector<std::vector<float>> ref = outputs(model, loader, batches);
  double ref_norm = 0.0;
  for (const auto& b : ref)
    for (const float v : b) ref_norm += static_cast<double>(v) * v;
  std::vector<double> s(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    if (!converter.device_runs_unit(i)) continue;
    std::vector<bool> only(n, false);
    only[i] = true;
    converter.install(only);
    const std::vector<std::vector<float>> y = outputs(model, loader, batches);
    double err = 0.0;
    for (size_t b = 0; b < y.size(); ++b)
      for (size_t k = 0; k < y[b].size(); ++k) {
        const double d = static_cast<double>(y[b][k]) - ref[b][k];
        err += d * d;
      }
    s[i] = err / std::max(ref_norm, 1e-30);
  }
  converter.install(std::vector<bool>(n, false));
  model.train(training);
  return s;
}

GateResult run_gate(Converter& converter, const std::vector<double>& sensitivity, double f32_accuracy, double absolute,
                    const std::function<double()>& evaluate, const std::function<void(const std::string&)>& log) {
  const size_t n = converter.units().size();
  std::vector<bool> want(n, true);
  converter.install(want);
  GateResult r;
  r.f32_accuracy = f32_accuracy;
  r.int8_accuracy = evaluate();
  log(fmt::format("accuracy f32 {:.2f}%, int8 {:.2f}% ({} of {} layers int8), drop {:.2f} points, allowed {:.2f}",
                  100.0 * f32_accuracy, 100.0 * r.int8_accuracy, converter.int8_count(), n,
                  100.0 * (f32_accuracy - r.int8_accuracy), 100.0 * absolute));
  while (f32_accuracy - r.int8_accuracy > absolute && converter.int8_count() > 0) {
    std::optional<size_t> worst;
    for (size_t i = 0; i < n; ++i)
      if (converter.is_int8(i) && (!worst || sensitivity[i] > sensitivity[*worst])) worst = i;
    want[*worst] = false;
    converter.install(want);
    r.int8_accuracy = evaluate();
    r.steps.push_back({*worst, sensitivity[*worst], r.int8_accuracy});
    log(
        fmt::format("drop above {:.2f} points: {} ({}, sensitivity {:.3g}) back to f32 -> accuracy {:.2f}%, "
                    "drop {:.2f} points",
                    100.0 * absolute, converter.units()[*worst].path, converter.units()[*worst].kind(),
                    sensitivity[*worst], 100.0 * r.int8_accuracy, 100.0 * (f32_accuracy - r.int8_accuracy)));
  }
  return r;
}

}  // namespace ingot::quant

// Example extension plugin: adds a loss (huber, torch.nn.HuberLoss; one_hot for class labels), a pipeline stage
// (param_report: parameters and bytes per layer) and a trainer callback (lr_trace: the learning
// rate of every optimizer step, written to a file). Copy it to start an extension of your own.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "ingot/extension/extension.h"
#include "ingot/ops/ops.h"
#include "ingot/train/stage.h"

namespace {

using ingot::Tensor;

/// 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere; d = output - target.
Tensor huber(const Tensor& output, const Tensor& target, double delta, ingot::nn::Reduction reduction) {
  const Tensor ad = ingot::abs(output - target);
  const Tensor quad = ingot::clamp(ad, std::nullopt, delta);
  const Tensor loss = quad * quad * 0.5 + (ad - quad) * delta;
  switch (reduction) {
    case ingot::nn::Reduction::None:
      return loss;
    case ingot::nn::Reduction::Sum:
      return ingot::sum(loss);
    default:
      return ingot::mean(loss);
  }
}

class ParamReport final : public ingot::train::PipelineStage {
 public:
  std::string name() const override { return "param_report"; }
  bool run(ingot::train::StageContext& context) override {
    int64_t total = 0;
    for (const auto& [name, t] : context.model().named_parameters()) {
      context.out() << fmt::format("param_report: {:<24} {:>10} parameters\n", name, t.numel());
      total += t.numel();
    }
    context.out() << fmt::format("param_report: total {} parameters\n", total);
    return true;
  }
};

class LrTrace final : public ingot::train::TrainCallback {
 public:
  explicit LrTrace(std::string path) : out_(path), path_(std::move(path)) {
    if (!out_) throw ingot::InputError(fmt::format("lr_trace: cannot write {}", path_));
  }
  const char* name() const override { return "lr_trace"; }
  void after_optimizer_step(ingot::train::TrainState& s) override {
    out_ << s.position.step << " " << s.lr << "\n";
    out_.flush();
  }

 private:
  std::ofstream out_;
  std::string path_;
};

}  // namespace

INGOT_EXTENSION("extension_template", "0.1.0", "example: huber loss, param_report stage, lr_trace callback")

extern "C" INGOT_EXTENSION_EXPORT void ingot_extension_register(ingot::Registry& registry) {
  ingot::config::Schema huber_keys;
  huber_keys.number("delta", 0.0).string("reduction", false, {"none", "mean", "sum"}).boolean("one_hot");
  registry.losses.add({"huber", huber_keys,
                       [](const YAML::Node& node, const std::string&) {
                         const double delta = node["delta"] ? node["delta"].as<double>() : 1.0;
                         const bool hot = node["one_hot"] && node["one_hot"].as<bool>();
                         ingot::nn::Loss loss{"huber"};
                         loss.reduction = node["reduction"]
                                              ? ingot::nn::parse_reduction(node["reduction"].as<std::string>())
                                              : ingot::nn::Reduction::Mean;
                         loss.resolved["type"] = "huber";
                         loss.resolved["delta"] = delta;
                         loss.resolved["reduction"] = ingot::nn::reduction_name(loss.reduction);
                         loss.resolved["one_hot"] = hot;
                         loss.fn = [delta, hot](const Tensor& o, const Tensor& t, ingot::nn::Reduction r) {
                           return huber(o, hot ? ingot::nn::one_hot(t, o.size(1), o.dtype()) : t, delta, r);
                         };
                         return loss;
                       },
                       "torch.nn.HuberLoss (delta)"});
  registry.stages.add({"param_report", ingot::config::Schema(),
                       [](const YAML::Node&, const std::string&) -> std::unique_ptr<ingot::train::PipelineStage> {
                         return std::make_unique<ParamReport>();
                       },
                       "parameters per layer"});
  ingot::config::Schema trace_keys;
  trace_keys.string("path", true);
  registry.callbacks.add(
      {"lr_trace", trace_keys,
       [](const YAML::Node& node, const std::string&) -> std::unique_ptr<ingot::train::TrainCallback> {
         return std::make_unique<LrTrace>(node["path"].as<std::string>());
       },
       "writes 'step lr' after every optimizer step"});
}

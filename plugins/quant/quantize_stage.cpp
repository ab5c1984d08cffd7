// The quantize stage: find and fold the units, calibrate (static), convert, run the accuracy gate
// when asked, report the layers; or load a saved int8 model.
#include "quantize_stage.h"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>

#include "accuracy_gate.h"
#include "calibrate.h"
#include "ingot/base/error.h"
#include "ingot/train/evaluate.h"
#include "layer_units.h"
#include "quant_load.h"

namespace ingot::quant {
namespace {

void refuse(const std::string& file, const YAML::Node& at, const std::string& what) {
  throw ConfigError(fmt::format("{}: quantize: {}", config::where(file, at), what));
}

}  // namespace

config::Schema quantize_schema() {
  config::Schema calibration;
  calibration.integer("batches", 1).string("observer", false, observer_kinds()).number("percentile", 50.0, 100.0);
  config::Schema tolerance;
  tolerance.number("absolute", 0.0, 1.0, true).integer("batches", 1);
  config::Schema s;
  s.string("mode", false, {"static", "dynamic"})
      .boolean("per_channel")
      .boolean("reduce_range")
      .section("calibration", calibration)
      .section("tolerance", tolerance)
      .string("load");
  return s;
}

QuantizeConfig parse_quantize_config(const YAML::Node& node, const std::string& file) {
  QuantizeConfig c;
  if (node["load"]) {
    for (const char* key : {"mode", "per_channel", "reduce_range", "calibration", "tolerance"})
      if (node[key])
        refuse(file, node[key],
               fmt::format("'{}' does not go with 'load' (a saved int8 model is loaded as it is)", key));
    c.load = node["load"].as<std::string>();
    if (!std::filesystem::is_regular_file(c.load))
      refuse(file, node["load"], fmt::format("load: no file {} (a model saved after a quantize stage)", c.load));
    return c;
  }
  c.options.dynamic = node["mode"] && node["mode"].as<std::string>() == "dynamic";
  if (node["per_channel"]) c.options.per_channel = node["per_channel"].as<bool>();
  if (node["reduce_range"]) c.options.reduce_range = node["reduce_range"].as<bool>();
  if (const YAML::Node cal = node["calibration"]) {
    if (c.options.dynamic)
      refuse(file, cal, "'calibration' applies to mode static (dynamic quantization measures each batch)");
    if (cal["batches"]) c.calibration_batches = cal["batches"].as<int64_t>();
    if (cal["observer"]) c.observer.kind = cal["observer"].as<std::string>();
    if (cal["percentile"]) {
      if (c.observer.kind != "percentile")
        refuse(file, cal["percentile"],
               fmt::format("'percentile' applies to observer percentile, not {}", c.observer.kind));
      c.observer.percentile = cal["percentile"].as<double>();
      if (c.observer.percentile <= 50.0)
        refuse(file, cal["percentile"], "percentile must be above 50: the range keeps values up to it (e.g. 99.99)");
    }
  }
  if (const YAML::Node tol = node["tolerance"]) {
    c.tolerance = tol["absolute"].as<double>();
    if (tol["batches"]) c.sensitivity_batches = tol["batches"].as<int64_t>();
  }
  return c;
}

bool QuantizeStage::load(train::StageContext& s) {
  const LoadSummary r = load_quantized(s.model(), std::filesystem::path(cfg_.load));
  s.model_changed();
  s.out() << fmt::format("quantize: loaded {}: {} of {} layers int8{}\n", cfg_.load, r.int8, r.layers,
                         r.dynamic > 0 ? fmt::format(" ({} dynamic)", r.dynamic) : "");
  s.set_note(fmt::format("int8 loaded, {} of {} layers", r.int8, r.layers));
  return true;
}

bool QuantizeStage::prepare_saved(nn::ModulePtr& model, const io::SafetensorsFile& weights) const {
  (void)load_quantized(*model, weights, "the saved model");
  return true;
}

bool QuantizeStage::run(train::StageContext& s) {
  if (!cfg_.load.empty()) return load(s);
  nn::Module& model = s.model();
  const bool dynamic = cfg_.options.dynamic;
  const std::string mode = dynamic ? "dynamic" : "static";
  model.eval();
  std::vector<Unit> units = find_units(model, dynamic);
  if (units.empty()) {
    s.out() << fmt::format("quantize: the model has no {} layer: nothing to quantize\n",
                           dynamic ? "Linear" : "Linear or Conv2d");
    s.set_note("int8 " + mode + ", no layers");
    return true;
  }
  fold_units(model, units);
  std::string how;
  if (!dynamic) {
    const int64_t ran =
        calibrate(model, units, s.train_loader(), cfg_.calibration_batches, cfg_.observer, cfg_.options.reduce_range);
    how = fmt::format(" ({}, {} batches)", cfg_.observer.kind, ran);
    s.out() << fmt::format("quantize: calibrated {} layers on {} batches of the train split ({} observer)\n",
                           units.size(), ran, cfg_.observer.kind);
  }
  Converter converter(model, units, cfg_.options);
  train::Record rec("quantize", s.position().epoch, s.position().step);
  if (cfg_.tolerance) {
    const auto evaluate = [&] {
      return train::evaluate(model, s.test_loader(), s.class_names(), &s.train_config().loss, &s.train_config().amp)
          .accuracy;
    };
    converter.install(std::vector<bool>(units.size(), false));
    const double f32 = evaluate();
    const std::vector<double> sens = sensitivities(model, converter, s.train_loader(), cfg_.sensitivity_batches);
    const GateResult g = run_gate(converter, sens, f32, *cfg_.tolerance, evaluate,
                                  [&s](const std::string& line) { s.out() << "quantize: " << line << "\n"; });
    rec.set("f32_accuracy", g.f32_accuracy).set("int8_accuracy", g.int8_accuracy).set("reverted", g.steps.size());
    if (!g.steps.empty()) how += fmt::format(", {} back to f32 by the gate", g.steps.size());
  } else {
    converter.install_all();
  }
  s.out() << fmt::format("quantize: int8 {}, {} weights, {} of {} layers int8:\n", mode,
                         cfg_.options.per_channel ? "per-channel" : "per-tensor", converter.int8_count(), units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    std::string why;
    if (!converter.is_int8(i) && !converter.device_runs_unit(i))
      why = fmt::format(" (the {} backends run no {} int8 op)", model.device().str(),
                        units[i].conv ? "qconv2d" : "qlinear");
    s.out() << "quantize:   " << converter.describe(i) << why << "\n";
  }
  s.set_note(fmt::format("int8 {}, {} of {} layers{}", mode, converter.int8_count(), units.size(), how));
  rec.set("mode", mode).set("int8_layers", converter.int8_count()).set("layers", units.size());
  s.metrics().log(rec);
  s.model_changed();
  return true;
}

}  // namespace ingot::quant

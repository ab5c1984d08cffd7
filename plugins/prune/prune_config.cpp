// Parsing and checking the prune keys; the Zhu & Gupta schedule's arithmetic.
#include "prune_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ingot/base/error.h"
#include "ingot/train/fine_tune.h"

namespace ingot::prune {

const char* method_name(Method m) {
  switch (m) {
    case Method::L1Unstructured: return "l1_unstructured";
    case Method::GlobalUnstructured: return "global_unstructured";
    case Method::RandomUnstructured: return "random_unstructured";
    case Method::LnStructured: return "ln_structured";
  }
  return "?";
}

std::string Amount::str() const {
  return is_count ? fmt::format("{}", count) : fmt::format("{:g}%", std::round(fraction * 1e6) / 1e4);
}

double ZhuGupta::sparsity_at(int64_t t, double final_sparsity) const {
  if (t < begin) return 0.0;
  if (t >= end()) return final_sparsity;
  const double left = 1.0 - static_cast<double>(t - begin) / static_cast<double>(steps);
  return final_sparsity + (initial - final_sparsity) * left * left * left;
}

bool ZhuGupta::is_update(int64_t t) const {
  return t >= begin && t <= end() && ((t - begin) % frequency == 0 || t == end());
}

int64_t ZhuGupta::last_update(int64_t t) const {
  if (t >= end()) return end();
  return begin + (t - begin) / frequency * frequency;
}

namespace {

config::Schema common_keys() {
  config::Schema schedule;
  schedule.string("type", true, {"zhu_gupta"})
      .integer("steps", 1, {}, true)
      .integer("frequency", 1)
      .number("initial", 0.0, 1.0)
      .integer("begin", 0);
  config::Schema s;
  s.string("method", true, {"l1_unstructured", "global_unstructured", "random_unstructured", "ln_structured"})
      .any("amount", true)
      .integer("n", 1)
      .add(config::Field{"layers", config::FieldType::List, false, {}, {}, {}, nullptr, ""})
      .section("schedule", schedule)
      .boolean("make_permanent");
  return s;
}

Method parse_method(const std::string& name) {
  if (name == "global_unstructured") return Method::GlobalUnstructured;
  if (name == "random_unstructured") return Method::RandomUnstructured;
  if (name == "ln_structured") return Method::LnStructured;
  return Method::L1Unstructured;
}

/// torch's rule: an int is a count (>= 0), a float a fraction in [0, 1].
Amount parse_amount(const YAML::Node& node, const std::string& at, const std::string& path) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  // An optional sign and digits only (no std::regex: GCC 12 warns inside it at the sanitizers' -O2).
  const size_t digits_from = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const bool integer = text.size() > digits_from &&
                       std::all_of(text.begin() + static_cast<std::ptrdiff_t>(digits_from), text.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  if (integer) {
    const long long n = node.as<long long>();
    if (n >= 0) return Amount::of_count(n);
  } else if (node.IsScalar()) {
    double f = -1.0;
    try {
      f = node.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (f >= 0.0 && f <= 1.0) return Amount::of_fraction(f);
  }
  throw ConfigError(fmt::format("{}: '{}.amount' must be a fraction in [0, 1] (0.8 = 80% of the weights) or a "
                                "non-negative integer count of weights, got '{}'",
                                at, path, text.empty() ? "a non-scalar" : text));
}

}  // namespace

config::Schema prune_stage_schema() {
  return common_keys().section("fine_tune", train::fine_tune_schema());
}

config::Schema gradual_prune_schema() {
  config::Schema s = common_keys();
  s.integer("seed", 0);
  return s;
}

PruneConfig parse_prune_config(const YAML::Node& node, const std::string& file, const std::string& path) {
  PruneConfig c;
  c.where = fmt::format("{}: {}", config::where(file, node), path);
  c.method = parse_method(node["method"].as<std::string>());
  c.amount = parse_amount(node["amount"], config::where(file, node["amount"]), path);
  if (node["n"]) {
    if (c.method != Method::LnStructured)
      throw ConfigError(fmt::format("{}: '{}.n' (the norm) applies to method ln_structured only, not {}",
                                    config::where(file, node["n"]), path, method_name(c.method)));
    c.n = node["n"].as<int64_t>();
  }
  if (const YAML::Node layers = node["layers"])
    for (const auto& l : layers) {
      if (!l.IsScalar())
        throw ConfigError(fmt::format("{}: '{}.layers' lists layer names (state_dict prefixes such as 0 or "
                                      "layer1.0.conv1)",
                                      config::where(file, l), path));
      c.layers.push_back(l.Scalar());
    }
  if (const YAML::Node s = node["schedule"]) {
    ZhuGupta z;
    z.steps = s["steps"].as<int64_t>();
    if (s["frequency"]) z.frequency = s["frequency"].as<int64_t>();
    if (s["initial"]) z.initial = s["initial"].as<double>();
    if (s["begin"]) z.begin = s["begin"].as<int64_t>();
    if (c.amount.is_count)
      throw ConfigError(fmt::format("{}: '{}.schedule' raises a sparsity: give 'amount' as a fraction (0.8), not a "
                                    "count",
                                    config::where(file, s), path));
    if (z.initial > c.amount.fraction)
      throw ConfigError(fmt::format("{}: '{}.schedule.initial' ({:g}) is above the final amount ({:g})",
                                    config::where(file, s), path, z.initial, c.amount.fraction));
    c.schedule = z;
  }
  if (node["make_permanent"]) c.make_permanent = node["make_permanent"].as<bool>();
  if (node["seed"]) c.seed = node["seed"].as<uint64_t>();
  if (node["fine_tune"]) c.fine_tune = node["fine_tune"];
  return c;
}

}  // namespace ingot::prune

// The `train.scheduler:` section: its schema and the factory that builds an LrSchedule from it,
// with "FILE:LINE: ..." errors naming the key (a key of another type, a bad milestone list...).
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "ingot/optim/lr_schedule.h"
#include "ingot/runtime/error.h"

namespace ingot::optim {
namespace {

using config::where;

/// The keys each type takes besides `type` and `warmup`.
const std::map<std::string, std::vector<std::string>>& type_keys() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"constant", {"factor", "total_iters"}},
      {"step", {"step_size", "gamma"}},
      {"multistep", {"milestones", "gamma"}},
      {"exponential", {"gamma"}},
      {"cosine", {"t_max", "eta_min"}},
      {"linear", {"start_factor", "end_factor", "total_iters"}},
      {"sequential", {"schedulers", "milestones"}},
      {"one_cycle",
       {"max_lr", "total_steps", "pct_start", "anneal_strategy", "div_factor", "final_div_factor", "three_phase"}},
  };
  return keys;
}

std::vector<std::string> type_names() {
  std::vector<std::string> names;
  for (const auto& [name, keys] : type_keys()) names.push_back(name);
  return names;
}

/// Reads a section's values; the schema has already checked their types and ranges.
class Reader {
 public:
  Reader(const YAML::Node& node, std::string file, std::string path)
      : node_(node), file_(std::move(file)), path_(std::move(path)) {}

  bool has(const char* key) const { return node_[key].IsDefined() && !node_[key].IsNull(); }
  double number(const char* key, double fallback) const { return has(key) ? node_[key].as<double>() : fallback; }
  int64_t integer(const char* key, int64_t fallback) const { return has(key) ? node_[key].as<int64_t>() : fallback; }
  void require(const char* key, const std::string& type) const {
    if (!has(key)) fail(node_, fmt::format("scheduler type '{}' needs '{}.{}'", type, path_, key));
  }
  /// A list of integers >= min (schema checked only that it is a list).
  std::vector<int64_t> int_list(const char* key, int64_t min) const {
    std::vector<int64_t> out;
    const YAML::Node list = node_[key];
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node v = list[i];
      int64_t value = 0;
      bool ok = v.IsScalar();
      if (ok) {
        try {
          value = v.as<int64_t>();
        } catch (const YAML::Exception&) {
          ok = false;
        }
      }
      if (!ok || value < min) {
        fail(v, fmt::format("'{}.{}[{}]' must be an integer >= {}, got {}", path_, key, i, min,
                            v.IsScalar() ? config::quote_value(v.Scalar()) : std::string("a collection")));
      }
      out.push_back(value);
    }
    return out;
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    throw ConfigError(fmt::format("{}: {}", where(file_, at.Mark().is_null() ? node_ : at), what));
  }
  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

std::unique_ptr<LrSchedule> build(const YAML::Node& node, const std::string& file, int64_t total_steps,
                                  const std::string& path);

/// The schedule of one type, without its warmup; `steps` is how many steps it runs (<= 0: unknown).
std::unique_ptr<LrSchedule> build_type(const Reader& r, const std::string& type, int64_t steps) {
  const auto default_length = [&](const char* key) {
    if (r.has(key)) return r.integer(key, 0);
    if (steps <= 0) {
      r.fail(r.node(), fmt::format("'{}.{}' is required here: the run's total steps are not known", r.path(), key));
    }
    return steps;
  };
  try {
    if (type == "constant")
      return std::make_unique<ConstantSchedule>(r.number("factor", 1.0), r.integer("total_iters", 5));
    if (type == "step") {
      r.require("step_size", type);
      return std::make_unique<StepSchedule>(r.integer("step_size", 1), r.number("gamma", 0.1));
    }
    if (type == "multistep") {
      r.require("milestones", type);
      return std::make_unique<MultiStepSchedule>(r.int_list("milestones", 0), r.number("gamma", 0.1));
    }
    if (type == "exponential") {
      r.require("gamma", type);
      return std::make_unique<ExponentialSchedule>(r.number("gamma", 1.0));
    }
    if (type == "cosine") return std::make_unique<CosineSchedule>(default_length("t_max"), r.number("eta_min", 0.0));
    if (type == "linear") {
      return std::make_unique<LinearSchedule>(r.number("start_factor", 1.0 / 3.0), r.number("end_factor", 1.0),
                                              r.integer("total_iters", 5));
    }
    if (type == "one_cycle") {
      OneCycleSchedule::Options o;
      o.max_lr = r.number("max_lr", 0.0);
      o.total_steps = default_length("total_steps");
      if (steps > 0 && o.total_steps < steps) {
        r.fail(r.node()["total_steps"], fmt::format("'{}.total_steps' ({}) is below the run's {} steps; one_cycle "
                                                    "cannot go past its end: raise it or omit it",
                                                    r.path(), o.total_steps, steps));
      }
      o.pct_start = r.number("pct_start", 0.3);
      o.anneal = r.has("anneal_strategy") && r.node()["anneal_strategy"].Scalar() == "linear"
                     ? OneCycleSchedule::Anneal::Linear
                     : OneCycleSchedule::Anneal::Cos;
      o.div_factor = r.number("div_factor", 25.0);
      o.final_div_factor = r.number("final_div_factor", 1e4);
      o.three_phase = r.has("three_phase") && r.node()["three_phase"].as<bool>();
      return std::make_unique<OneCycleSchedule>(o);
    }
    // sequential: each part's defaults come from its own segment's length.
    r.require("schedulers", type);
    r.require("milestones", type);
    const std::vector<int64_t> milestones = r.int_list("milestones", 1);
    const YAML::Node list = r.node()["schedulers"];
    if (list.size() != milestones.size() + 1) {
      r.fail(r.node()["milestones"],
             fmt::format("'{}': {} schedulers need {} milestones, got {}", r.path(), list.size(),
                         list.size() == 0 ? 0 : list.size() - 1, milestones.size()));
    }
    std::vector<std::unique_ptr<LrSchedule>> parts;
    for (size_t i = 0; i < list.size(); ++i) {
      const int64_t begin = i == 0 ? 0 : milestones[i - 1];
      const int64_t end = i < milestones.size() ? milestones[i] : steps;
      parts.push_back(
          build(list[i], r.file(), end > begin ? end - begin : 0, fmt::format("{}.schedulers[{}]", r.path(), i)));
    }
    return std::make_unique<SequentialSchedule>(std::move(parts), milestones);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    // A constructor's range check (e.g. increasing milestones): report it at the section.
    r.fail(r.node(), fmt::format("in '{}': {}", r.path(), e.what()));
  }
}

std::unique_ptr<LrSchedule> build(const YAML::Node& node, const std::string& file, int64_t total_steps,
                                  const std::string& path) {
  scheduler_schema().validate(node, file, path);
  const Reader r(node, file, path);
  const std::string type = node["type"].Scalar();
  const std::vector<std::string>& allowed = type_keys().at(type);
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key == "type" || key == "warmup" || std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    r.fail(it->first, fmt::format("'{}.{}' does not apply to scheduler type '{}'; its keys: {}", path, key, type,
                                  fmt::join(allowed, ", ")));
  }
  if (!r.has("warmup")) return build_type(r, type, total_steps);

  const Reader w(node["warmup"], file, path + ".warmup");
  if (type == "one_cycle")
    r.fail(node["warmup"], fmt::format("'{}.warmup': one_cycle warms up by itself (pct_start)", path));
  const int64_t warmup = w.integer("steps", 1);
  if (total_steps > 0 && warmup >= total_steps) {
    w.fail(node["warmup"]["steps"],
           fmt::format("'{}.warmup.steps' ({}) must be below the run's {} steps", path, warmup, total_steps));
  }
  std::vector<std::unique_ptr<LrSchedule>> parts;
  parts.push_back(
      std::make_unique<LinearSchedule>(w.number("start_factor", 1.0 / 3.0), w.number("end_factor", 1.0), warmup));
  parts.push_back(build_type(r, type, total_steps > 0 ? total_steps - warmup : 0));
  return std::make_unique<SequentialSchedule>(std::move(parts), std::vector<int64_t>{warmup});
}

}  // namespace

config::Schema scheduler_schema() {
  config::Schema warmup;
  warmup.integer("steps", 1, {}, /*required=*/true).number("start_factor", 0, 1).number("end_factor", 0, 1);
  config::Schema s;
  s.string("type", /*required=*/true, type_names())
      .number("factor", 0, 1)
      .integer("total_iters", 1)
      .integer("step_size", 1)
      .number("gamma", 0)
      .add(config::Field{"milestones", config::FieldType::List, false, {}, {}, {}, nullptr, "increasing steps"})
      .integer("t_max", 1)
      .number("eta_min", 0)
      .number("start_factor", 0, 1)
      .number("end_factor", 0, 1)
      .add(config::Field{"schedulers", config::FieldType::List, false, {}, {}, {}, nullptr, "scheduler maps"})
      .number("max_lr", 0)
      .integer("total_steps", 1)
      .number("pct_start", 0, 1)
      .string("anneal_strategy", false, {"cos", "linear"})
      .number("div_factor", 0)
      .number("final_div_factor", 0)
      .boolean("three_phase")
      .section("warmup", std::move(warmup));
  return s;
}

std::unique_ptr<LrSchedule> make_schedule(const YAML::Node& node, const std::string& file, int64_t total_steps,
                                          const std::string& path) {
  if (!node.IsDefined() || node.IsNull()) return std::make_unique<ConstantSchedule>(1.0);
  return build(node, file, total_steps, path);
}

}  // namespace ingot::optim

// The `train.scheduler:` section: its schema and the factory that builds an LrSchedule from it,
// with "FILE:LINE: ..." errors naming the key (a key of another type, a bad milestone list...).
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>

#include "ingot/base/error.h"
#include "ingot/optim/lr_schedule.h"

namespace ingot::optim {
namespace {

using config::where;

/// The keys `type` takes besides `type` and `warmup`, from its registry entry.
std::vector<std::string> keys_of(const std::string& type) {
  std::vector<std::string> keys;
  for (const config::Field& f : schedule_registry().entries().at(type).schema.fields()) keys.push_back(f.key);
  return keys;
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

/// `key` when given, else the length of the part of the run the schedule covers.
int64_t length_or_steps(const Reader& r, const char* key, int64_t steps) {
  if (r.has(key)) return r.integer(key, 0);
  if (steps <= 0) r.fail(r.node(), fmt::format("'{}.{}' is required here: the run's total steps are not known", r.path(), key));
  return steps;
}

std::unique_ptr<LrSchedule> make_one_cycle(const Reader& r, int64_t steps) {
  OneCycleSchedule::Options o;
  o.max_lr = r.number("max_lr", 0.0);
  o.total_steps = length_or_steps(r, "total_steps", steps);
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

/// Each part's defaults come from its own segment's length.
std::unique_ptr<LrSchedule> make_sequential(const Reader& r, int64_t steps) {
  r.require("schedulers", "sequential");
  r.require("milestones", "sequential");
  const std::vector<int64_t> milestones = r.int_list("milestones", 1);
  const YAML::Node list = r.node()["schedulers"];
  if (list.size() != milestones.size() + 1) {
    r.fail(r.node()["milestones"], fmt::format("'{}': {} schedulers need {} milestones, got {}", r.path(), list.size(),
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
}

/// A built-in type: its keys and how a Reader over its section builds it.
void add(ScheduleRegistry& reg, const std::string& type, config::Schema keys,
         std::function<std::unique_ptr<LrSchedule>(const Reader&, int64_t)> make, const std::string& help) {
  reg.add({type, std::move(keys),
           [make](const YAML::Node& node, const std::string& file, int64_t steps, const std::string& path) {
             return make(Reader(node, file, path), steps);
           },
           help});
}

config::Schema milestones_key(config::Schema s) {
  s.add(config::Field{"milestones", config::FieldType::List, false, {}, {}, {}, nullptr, "increasing steps"});
  return s;
}

void add_builtins(ScheduleRegistry& reg) {
  config::Schema constant;
  constant.number("factor", 0, 1).integer("total_iters", 1);
  add(reg, "constant", constant,
      [](const Reader& r, int64_t) {
        return std::make_unique<ConstantSchedule>(r.number("factor", 1.0), r.integer("total_iters", 5));
      },
      "torch ConstantLR");
  config::Schema step;
  step.integer("step_size", 1).number("gamma", 0);
  add(reg, "step", step,
      [](const Reader& r, int64_t) {
        r.require("step_size", "step");
        return std::make_unique<StepSchedule>(r.integer("step_size", 1), r.number("gamma", 0.1));
      },
      "torch StepLR");
  config::Schema multistep = milestones_key(config::Schema());
  multistep.number("gamma", 0);
  add(reg, "multistep", multistep,
      [](const Reader& r, int64_t) {
        r.require("milestones", "multistep");
        return std::make_unique<MultiStepSchedule>(r.int_list("milestones", 0), r.number("gamma", 0.1));
      },
      "torch MultiStepLR");
  config::Schema exponential;
  exponential.number("gamma", 0);
  add(reg, "exponential", exponential,
      [](const Reader& r, int64_t) {
        r.require("gamma", "exponential");
        return std::make_unique<ExponentialSchedule>(r.number("gamma", 1.0));
      },
      "torch ExponentialLR");
  config::Schema cosine;
  cosine.integer("t_max", 1).number("eta_min", 0);
  add(reg, "cosine", cosine,
      [](const Reader& r, int64_t steps) {
        return std::make_unique<CosineSchedule>(length_or_steps(r, "t_max", steps), r.number("eta_min", 0.0));
      },
      "torch CosineAnnealingLR (t_max defaults to the run's steps)");
  config::Schema linear;
  linear.number("start_factor", 0, 1).number("end_factor", 0, 1).integer("total_iters", 1);
  add(reg, "linear", linear,
      [](const Reader& r, int64_t) {
        return std::make_unique<LinearSchedule>(r.number("start_factor", 1.0 / 3.0), r.number("end_factor", 1.0),
                                                r.integer("total_iters", 5));
      },
      "torch LinearLR");
  config::Schema sequential = milestones_key(config::Schema());
  sequential.add(config::Field{"schedulers", config::FieldType::List, false, {}, {}, {}, nullptr, "scheduler maps"});
  add(reg, "sequential", sequential, make_sequential, "torch SequentialLR");
  config::Schema one_cycle;
  one_cycle.number("max_lr", 0)
      .integer("total_steps", 1)
      .number("pct_start", 0, 1)
      .string("anneal_strategy", false, {"cos", "linear"})
      .number("div_factor", 0)
      .number("final_div_factor", 0)
      .boolean("three_phase");
  add(reg, "one_cycle", one_cycle, make_one_cycle, "torch OneCycleLR (without momentum cycling)");
}

/// The schedule of one type, without its warmup; `steps` is how many steps it runs (<= 0: unknown).
std::unique_ptr<LrSchedule> build_type(const Reader& r, const std::string& type, int64_t steps) {
  try {
    return schedule_registry().entries().at(type).make(r.node(), r.file(), steps, r.path());
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
  const std::vector<std::string> allowed = keys_of(type);
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

ScheduleRegistry& schedule_registry() {
  static ScheduleRegistry* registry = [] {
    auto* r = new ScheduleRegistry("scheduler");
    add_builtins(*r);
    return r;
  }();
  return *registry;
}

config::Schema scheduler_schema() {
  config::Schema warmup;
  warmup.integer("steps", 1, {}, /*required=*/true).number("start_factor", 0, 1).number("end_factor", 0, 1);
  config::Schema s;
  s.string("type", /*required=*/true, schedule_registry().types());
  // Every type's keys once (a key two types share has the same meaning and range in both).
  for (const auto& [type, entry] : schedule_registry().entries())
    for (const config::Field& f : entry.schema.fields())
      if (s.find(f.key) == nullptr) s.add(f);
  s.section("warmup", std::move(warmup));
  return s;
}

std::unique_ptr<LrSchedule> make_schedule(const YAML::Node& node, const std::string& file, int64_t total_steps,
                                          const std::string& path) {
  if (!node.IsDefined() || node.IsNull()) return std::make_unique<ConstantSchedule>(1.0);
  return build(node, file, total_steps, path);
}

}  // namespace ingot::optim

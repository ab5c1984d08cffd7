// Schema and parsing of `train:`.
#include "ingot/train/train_config.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer_config.h"

namespace ingot::train {

config::Schema train_schema() {
  config::Schema s;
  s.integer("epochs", 1, 100000)
      .integer("steps", 1, 1e12)
      .integer("accumulate", 1, 4096)
      .number("clip_grad_norm", 0.0)
      .number("clip_grad_value", 0.0)
      .any("loss")
      .string("on_nonfinite", false, {"stop", "skip_step"})
      .integer("max_skipped", 1, 1e9)
      .boolean("detect_anomaly")
      .boolean("memory_check")
      .integer("log_every", 1, 1e9)
      .integer("checkpoint_every", 1, 100000)
      .section("checkpoint",
               [] {
                 config::Schema c;
                 c.integer("every_epochs", 1, 100000).integer("every_steps", 1, 1e12).number("every_minutes", 0.0);
                 c.integer("keep_last", 0, 1e9).integer("keep_epochs", 0, 1e9);
                 return c;
               }())
      .section("amp",
               [] {
                 config::Schema a;
                 a.boolean("enabled").string("dtype", true, {"bf16", "fp16"});
                 a.section("loss_scale", [] {
                   config::Schema l;
                   l.boolean("enabled").number("init_scale", 1e-30).number("growth_factor", 1.0);
                   l.number("backoff_factor", 1e-30, 1.0).integer("growth_interval", 1, 1e12);
                   l.integer("hysteresis", 1, 1e9).number("min_scale", 0.0);
                   return l;
                 }());
                 return a;
               }())
      .section("checkpointing",
               [] {
                 config::Schema c;
                 c.integer("segments", 1, 100000);
                 c.boolean("blocks");
                 return c;
               }())
      .any("compile")
      .boolean("eval_every_epoch")
      .section("early_stopping", early_stopping_schema())
      .any("optimizer")
      .any("callbacks")
      .section("scheduler", optim::scheduler_schema());
  return s;
}

namespace {

/// `compile: true | false` or `compile: {enabled, dead_code, fold_constants, fuse, pool_grads, recompute, winograd,
/// plan_memory, in_place, max_graphs, dump_graph}`.
CompileConfig parse_compile(const YAML::Node& node, const std::string& file) {
  CompileConfig c;
  const auto where = [&](const YAML::Node& n) { return fmt::format("{}:{}: train.compile", file, n.Mark().line + 1); };
  const auto flag = [&](const YAML::Node& n, const std::string& key) {
    bool v = false;
    if (!YAML::convert<bool>::decode(n, v))
      throw ConfigError(fmt::format("{}{}: expected true or false, got '{}'", where(n), key.empty() ? "" : "." + key,
                                    n.IsScalar() ? n.Scalar() : "a section"));
    return v;
  };
  if (node.IsScalar()) {
    c.enabled = flag(node, "");
    return c;
  }
  if (!node.IsMap())
    throw ConfigError(fmt::format("{}: expected true, false or a section of enabled, dead_code, fold_constants, "
                                  "fuse, pool_grads, recompute, winograd, plan_memory, in_place, max_graphs",
                                  where(node)));
  c.enabled = true;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "enabled") {
      c.enabled = flag(v, key);
    } else if (key == "dead_code") {
      c.options.dead_code = flag(v, key);
    } else if (key == "fold_constants") {
      c.options.fold = flag(v, key);
    } else if (key == "fuse") {
      c.options.fuse = flag(v, key);
    } else if (key == "pool_grads") {
      c.options.pool_grads = flag(v, key);
    } else if (key == "winograd") {
      c.options.winograd = flag(v, key);
    } else if (key == "recompute") {
      c.options.recompute = flag(v, key);
    } else if (key == "plan_memory") {
      c.options.plan_memory = flag(v, key);
    } else if (key == "in_place") {
      c.options.in_place = flag(v, key);
    } else if (key == "dump_graph") {
      if (!v.IsScalar() || v.Scalar().empty())
        throw ConfigError(fmt::format("{}.dump_graph: expected a folder", where(v)));
      c.options.dump_dir = v.Scalar();
    } else if (key == "max_graphs") {
      int64_t n = 0;
      if (!YAML::convert<int64_t>::decode(v, n) || n < 1 || n > 1000)
        throw ConfigError(fmt::format("{}.max_graphs: expected an integer in [1, 1000], got '{}'", where(v),
                                      v.IsScalar() ? v.Scalar() : "a section"));
      c.options.max_graphs = static_cast<int>(n);
    } else {
      throw ConfigError(fmt::format("{}: unknown key '{}' (expected enabled, dead_code, fold_constants, fuse, "
                                    "pool_grads, recompute, winograd, plan_memory, in_place, max_graphs, dump_graph)",
                                    where(kv.first), key));
    }
  }
  return c;
}

}  // namespace

TrainConfig parse_train_config(const YAML::Node& node, const std::string& file) {
  TrainConfig c;
  if (node && node.IsMap()) {
    if (node["epochs"]) c.epochs = node["epochs"].as<int64_t>();
    if (node["steps"]) c.steps = node["steps"].as<int64_t>();
    if (node["accumulate"]) c.accumulate = node["accumulate"].as<int64_t>();
    if (node["clip_grad_norm"]) c.clip_grad_norm = node["clip_grad_norm"].as<double>();
    if (node["clip_grad_value"]) c.clip_grad_value = node["clip_grad_value"].as<double>();
    if (node["on_nonfinite"]) c.on_nonfinite = node["on_nonfinite"].as<std::string>();
    if (node["max_skipped"]) c.max_skipped = node["max_skipped"].as<int64_t>();
    if (node["detect_anomaly"]) c.detect_anomaly = node["detect_anomaly"].as<bool>();
    if (node["memory_check"]) c.memory_check = node["memory_check"].as<bool>();
    if (node["log_every"]) c.log_every = node["log_every"].as<int64_t>();
    if (node["checkpoint_every"]) c.checkpoint_every = node["checkpoint_every"].as<int64_t>();
    if (const YAML::Node ck = node["checkpoint"]) {
      if (ck["every_epochs"]) c.checkpoint_every = ck["every_epochs"].as<int64_t>();
      if (ck["every_steps"]) c.checkpoint_every_steps = ck["every_steps"].as<int64_t>();
      if (ck["every_minutes"]) c.checkpoint_every_minutes = ck["every_minutes"].as<double>();
      if (ck["keep_last"]) c.checkpoint_keep_last = ck["keep_last"].as<int64_t>();
      if (ck["keep_epochs"]) c.checkpoint_keep_epochs = ck["keep_epochs"].as<int64_t>();
    }
    if (const YAML::Node a = node["amp"]) {
      c.amp.enabled = !a["enabled"] || a["enabled"].as<bool>();
      c.amp.dtype = a["dtype"].as<std::string>() == "fp16" ? DType::F16 : DType::BF16;
      amp::GradScalerOptions& s = c.amp.scaler;
      s.enabled = c.amp.dtype == DType::F16;
      if (const YAML::Node l = a["loss_scale"]) {
        s.enabled = !l["enabled"] || l["enabled"].as<bool>();
        if (l["init_scale"]) s.init_scale = l["init_scale"].as<double>();
        if (l["growth_factor"]) s.growth_factor = l["growth_factor"].as<double>();
        if (l["backoff_factor"]) s.backoff_factor = l["backoff_factor"].as<double>();
        if (l["growth_interval"]) s.growth_interval = l["growth_interval"].as<int64_t>();
        if (l["hysteresis"]) s.hysteresis = l["hysteresis"].as<int64_t>();
        if (l["min_scale"]) s.min_scale = l["min_scale"].as<double>();
      }
      s.enabled = s.enabled && c.amp.enabled;
    }
    if (const YAML::Node ck = node["checkpointing"]) {
      if (ck["segments"]) c.checkpointing_segments = ck["segments"].as<int64_t>();
      if (ck["blocks"]) c.checkpointing_blocks = ck["blocks"].as<bool>();
      if (c.checkpointing_segments > 0 && c.checkpointing_blocks)
        throw ConfigError(fmt::format("{}:{}: train.checkpointing takes segments: N or blocks: true, not both", file,
                                      ck.Mark().line + 1));
    }
    if (const YAML::Node cc = node["compile"]) c.compile = parse_compile(cc, file);
    if (node["eval_every_epoch"]) c.eval_every_epoch = node["eval_every_epoch"].as<bool>();
    c.early_stopping = parse_early_stopping(node["early_stopping"]);
    // Only present keys: indexing a missing key gives an invalid node that throws when assigned.
    if (const YAML::Node o = node["optimizer"]) c.optimizer = o;
    if (const YAML::Node s = node["scheduler"]) c.scheduler = s;
    if (const YAML::Node cb = node["callbacks"]) c.callbacks = cb;
  }
  c.loss = nn::make_loss(node && node.IsMap() ? node["loss"] : YAML::Node(), file);
  if (!c.optimizer || c.optimizer.IsNull()) {
    c.optimizer = YAML::Node(YAML::NodeType::Map);
    c.optimizer["type"] = "adamw";
  }
  return c;
}

YAML::Node train_config_yaml(const TrainConfig& c) {
  YAML::Node n;
  if (c.steps > 0) {
    n["steps"] = c.steps;
  } else {
    n["epochs"] = c.epochs;
  }
  n["accumulate"] = c.accumulate;
  if (c.clip_grad_norm) n["clip_grad_norm"] = *c.clip_grad_norm;
  if (c.clip_grad_value) n["clip_grad_value"] = *c.clip_grad_value;
  n["loss"] = c.loss.resolved;
  n["on_nonfinite"] = c.on_nonfinite;
  n["max_skipped"] = c.max_skipped;
  n["detect_anomaly"] = c.detect_anomaly;
  n["memory_check"] = c.memory_check;
  if (c.compile.enabled) {
    YAML::Node cc;
    cc["enabled"] = true;
    cc["dead_code"] = c.compile.options.dead_code;
    cc["fold_constants"] = c.compile.options.fold;
    cc["fuse"] = c.compile.options.fuse;
    cc["pool_grads"] = c.compile.options.pool_grads;
    cc["recompute"] = c.compile.options.recompute;
    cc["winograd"] = c.compile.options.winograd;
    cc["plan_memory"] = c.compile.options.plan_memory;
    cc["in_place"] = c.compile.options.in_place;
    cc["max_graphs"] = c.compile.options.max_graphs;
    if (!c.compile.options.dump_dir.empty()) cc["dump_graph"] = c.compile.options.dump_dir.string();
    n["compile"] = cc;
  } else {
    n["compile"] = false;
  }
  n["log_every"] = c.log_every;
  YAML::Node ck;
  ck["every_epochs"] = c.checkpoint_every;
  if (c.checkpoint_every_steps > 0) ck["every_steps"] = c.checkpoint_every_steps;
  if (c.checkpoint_every_minutes > 0.0) ck["every_minutes"] = c.checkpoint_every_minutes;
  ck["keep_last"] = c.checkpoint_keep_last;
  ck["keep_epochs"] = c.checkpoint_keep_epochs;
  n["checkpoint"] = ck;
  if (c.amp.enabled) {
    YAML::Node a;
    a["dtype"] = c.amp.dtype == DType::F16 ? "fp16" : "bf16";
    const amp::GradScalerOptions& g = c.amp.scaler;
    YAML::Node l;
    l["enabled"] = g.enabled;
    l["init_scale"] = g.init_scale;
    l["growth_factor"] = g.growth_factor;
    l["backoff_factor"] = g.backoff_factor;
    l["growth_interval"] = g.growth_interval;
    l["hysteresis"] = g.hysteresis;
    l["min_scale"] = g.min_scale;
    a["loss_scale"] = l;
    n["amp"] = a;
  }
  if (c.checkpointing_segments > 0) n["checkpointing"]["segments"] = c.checkpointing_segments;
  if (c.checkpointing_blocks) n["checkpointing"]["blocks"] = true;
  n["eval_every_epoch"] = c.eval_every_epoch;
  if (const EarlyStoppingConfig& e = c.early_stopping; e.enabled) {
    YAML::Node s;
    s["metric"] = e.metric;
    s["patience"] = e.patience;
    s["mode"] = e.mode.empty() ? (e.metric == "val_accuracy" ? "max" : "min") : e.mode;
    s["min_delta"] = e.min_delta;
    s["restore_best"] = e.restore_best;
    n["early_stopping"] = s;
  }
  n["optimizer"] = YAML::Clone(c.optimizer);
  if (c.scheduler && !c.scheduler.IsNull()) n["scheduler"] = YAML::Clone(c.scheduler);
  if (c.callbacks && !c.callbacks.IsNull()) n["callbacks"] = YAML::Clone(c.callbacks);
  return n;
}

}  // namespace ingot::train

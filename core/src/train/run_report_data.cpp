// RunReportData: metrics.jsonl line by line (a torn or foreign line is counted and skipped),
// summary.json's scalars, and config.resolved.yaml flattened to dotted keys for comparisons.
#include "run_report_data.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/config/yaml_text.h"
#include "ingot/train/svg_plot.h"

namespace ingot::train {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::optional<double> number(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

/// A JSON value as table text: strings as they are, integers exactly, other numbers shortened,
/// objects as "key: value, ...".
std::string text_of(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return short_number(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "-";
  if (v.is_object()) {
    std::string s;
    for (const auto& [k, x] : v.items()) s += fmt::format("{}{}: {}", s.empty() ? "" : ", ", k, text_of(x));
    return s;
  }
  return v.dump();
}

void flatten(const YAML::Node& node, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node)
      flatten(kv.second, prefix.empty() ? kv.first.as<std::string>() : prefix + "." + kv.first.as<std::string>(), out);
  } else if (node.IsSequence()) {
    bool scalars = true;
    for (const auto& item : node) scalars = scalars && item.IsScalar();
    if (scalars) {
      std::string s;
      for (const auto& item : node) s += (s.empty() ? "" : ", ") + config::shortest_number_text(item.as<std::string>());
      out.emplace_back(prefix, "[" + s + "]");
    } else {
      for (size_t i = 0; i < node.size(); ++i) flatten(node[i], fmt::format("{}[{}]", prefix, i), out);
    }
  } else {
    // (numbers as config.resolved.yaml writes them now: an older run's 0.90000000000000002 is 0.9)
    out.emplace_back(prefix, node.IsNull() ? "null" : config::shortest_number_text(node.as<std::string>()));
  }
}

// (a FIFO or device in a run folder is refused, not read)
std::string slurp(const fs::path& p) { return InputFile(p).read_all(UINT64_MAX, "a run record"); }

void add_record(RunReportData& d, const Json& r, double& t0) {
  const std::string event = r.value("event", "");
  const std::optional<double> step = number(r, "step"), time = number(r, "time");
  if (time && !std::isfinite(t0)) t0 = *time;
  const double since = time ? *time - t0 : std::nan("");
  if (event == "train_step" || event == "epoch") {
    for (const char* field : {"mem_allocated_mb", "mem_reserved_mb", "mem_peak_mb"}) {
      const std::optional<double> mb = number(r, field);
      if (!mb || !time) continue;
      auto it = std::find_if(d.memory.begin(), d.memory.end(), [&](const auto& m) { return m.field == field; });
      if (it == d.memory.end()) it = d.memory.insert(d.memory.end(), ReportMemorySeries{field, {}});
      it->points.emplace_back(since, *mb);
    }
  }
  if (event == "train_step" && step) {
    if (const auto loss = number(r, "loss")) d.train_loss.emplace_back(*step, *loss), d.last_train_loss = loss;
    if (const auto lr = number(r, "lr")) d.lr.emplace_back(*step, *lr);
    if (const auto ips = number(r, "images_per_s"); ips && time) d.throughput.emplace_back(since, *ips);
  } else if (event == "eval" && step) {
    const auto loss = number(r, "loss"), acc = number(r, "accuracy");
    const auto split = r.find("split");
    if (split != r.end() && split->is_string() && split->get<std::string>() == "validation") {
      if (const auto epoch = number(r, "epoch")) d.validation_epochs.emplace_back(static_cast<int64_t>(*epoch), *step);
      if (loss) d.val_loss.emplace_back(*step, *loss);
      if (acc) d.val_accuracy.emplace_back(*step, 100.0 * *acc);
    } else {
      if (loss) d.eval_loss.emplace_back(*step, *loss), d.last_eval_loss = loss;
      if (acc) d.eval_accuracy.emplace_back(*step, 100.0 * *acc), d.last_eval_accuracy = acc;
      if (const auto ppl = number(r, "perplexity")) d.last_eval_perplexity = ppl;
    }
    const auto c = r.find("confusion");
    if (c != r.end() && c->is_object() && c->contains("matrix") && (*c)["matrix"].is_array()) {
      ReportConfusion conf;
      if (c->contains("classes") && (*c)["classes"].is_array())
        for (const Json& n : (*c)["classes"]) conf.classes.push_back(n.is_string() ? n.get<std::string>() : n.dump());
      for (const Json& row : (*c)["matrix"]) {
        std::vector<double> cells;
        if (row.is_array())
          for (const Json& v : row) cells.push_back(v.is_number() ? v.get<double>() : 0.0);
        conf.matrix.push_back(std::move(cells));
      }
      d.confusion = std::move(conf);
    }
  } else if (event == "epoch") {
    const auto epoch = number(r, "epoch"), share = number(r, "data_share");
    if (epoch && share) d.data_share.emplace_back(*epoch, *share);
  } else if (event == "early_stop" && step) {
    if (const auto epoch = number(r, "epoch")) d.early_stop_step = {static_cast<int64_t>(*epoch), *step};
  } else if (event == "stage_report") {
    std::vector<std::pair<std::string, std::string>> row;
    for (const auto& [k, v] : r.items())
      if (k != "event" && k != "epoch" && k != "step" && k != "time") row.emplace_back(k, text_of(v));
    d.stages.push_back(std::move(row));
  }
}

void read_metrics(RunReportData& d) {
  const fs::path file = d.dir / "metrics.jsonl";
  if (!fs::exists(file)) {
    d.notes.push_back("metrics.jsonl is missing: no curves (the run stopped before its first step was logged?)");
    return;
  }
  std::istringstream in(slurp(file));
  std::string line;
  size_t bad = 0;
  double t0 = std::nan("");
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const Json r = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (r.is_discarded() || !r.is_object()) {
      ++bad;
      continue;
    }
    ++d.records;
    add_record(d, r, t0);
  }
  if (bad > 0)
    d.notes.push_back(
        fmt::format("{} line(s) of metrics.jsonl are not valid JSON (a line torn by a kill?) and were "
                    "skipped",
                    bad));
  if (d.records == 0) d.notes.push_back("metrics.jsonl has no records yet");
  if (d.train_loss.empty() && d.records > 0) d.notes.push_back("no train_step records: no training curves");
  if (d.eval_loss.empty() && d.eval_accuracy.empty())
    d.notes.push_back("no evaluation in metrics.jsonl: no eval points, accuracy curve or confusion matrix");
}

void read_summary(RunReportData& d) {
  const fs::path file = d.dir / "summary.json";
  if (!fs::exists(file)) {
    d.notes.push_back(
        "summary.json is missing: the run is still running or was stopped before it finished; the "
        "final metrics below come from its last records");
    return;
  }
  const Json j = Json::parse(slurp(file), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    d.notes.push_back("summary.json is not valid JSON: no summary");
    return;
  }
  d.has_summary = true;
  for (const auto& [k, v] : j.items())
    if (k != "event") d.summary.emplace_back(k, text_of(v));
  if (const auto best = j.find("best_epoch"); best != j.end() && best->is_number_integer())
    for (const auto& [epoch, step] : d.validation_epochs)
      if (epoch == best->get<int64_t>()) d.best_epoch_step = {epoch, step};
  if (const std::string status = d.summary_value("status"); !status.empty() && status != "completed")
    d.notes.push_back(fmt::format("the run ended with status '{}'{}", status,
                                  d.summary_value("error").empty() ? "" : ": " + d.summary_value("error")));
}

void read_config(RunReportData& d) {
  const fs::path file = d.dir / "config.resolved.yaml";
  if (!fs::exists(file)) {
    d.notes.push_back("config.resolved.yaml is missing: no config to show or compare");
    return;
  }
  d.config_text = slurp(file);
  try {
    flatten(YAML::Load(d.config_text), "", d.config);
  } catch (const YAML::Exception& e) {
    d.notes.push_back(fmt::format("config.resolved.yaml does not parse ({}): shown as text only", e.what()));
  }
}

}  // namespace

std::string RunReportData::summary_value(const std::string& key) const {
  for (const auto& [k, v] : summary)
    if (k == key) return v;
  return {};
}

std::optional<std::string> RunReportData::config_value(const std::string& key) const {
  for (const auto& [k, v] : config)
    if (k == key) return v;
  return std::nullopt;
}

RunReportData read_run_report_data(const fs::path& dir) {
  INGOT_CHECK_AS(fs::exists(dir), InputError,
                 "run folder {} does not exist; give a folder written by 'ingot run' (runs/<name>)", dir.string());
  INGOT_CHECK_AS(fs::is_directory(dir), InputError,
                 "{} is not a folder; give a run folder written by 'ingot run' (runs/<name>)", dir.string());
  RunReportData d;
  d.dir = dir;
  read_metrics(d);
  read_summary(d);
  read_config(d);
  d.name = d.summary_value("name");
  fs::path folder = fs::absolute(dir).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();  // "runs/x/"
  if (d.name.empty()) d.name = d.config_value("name").value_or(folder.filename().string());
  return d;
}

}  // namespace ingot::train

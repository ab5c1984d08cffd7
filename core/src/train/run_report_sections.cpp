// The run report's tables: header, notes, per-stage table, confusion heat map, and the
// comparison of several runs (final metrics, config keys that differ). Every string is escaped.
#include "run_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "ingot/train/svg_plot.h"

namespace ingot::train {
namespace {

using Esc = std::string (*)(std::string_view);
constexpr Esc esc = html_escape;

std::optional<double> parse_number(const std::string& s) {
  if (s.empty() || s == "-") return std::nullopt;
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string percent(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.2f}%", 100.0 * *fraction) : std::string("-");
}

std::string value_or_dash(std::optional<double> v) { return v ? short_number(*v) : std::string("-"); }

/// Test accuracy and loss of the summary, else of the last eval record (marked as such).
struct Final {
  std::optional<double> accuracy, loss, train_loss;
  std::string source;
};

Final final_metrics(const RunReportData& r) {
  Final f;
  f.accuracy = parse_number(r.summary_value("test_accuracy"));
  f.loss = parse_number(r.summary_value("test_loss"));
  f.train_loss = parse_number(r.summary_value("train_loss"));
  if (!f.accuracy && !f.loss && (r.last_eval_accuracy || r.last_eval_loss)) {
    f.accuracy = r.last_eval_accuracy;
    f.loss = r.last_eval_loss;
    f.source = " (last eval record)";
  }
  if (!f.train_loss) f.train_loss = r.last_train_loss;
  return f;
}

std::string last_step(const RunReportData& r) {
  if (const std::string s = r.summary_value("step"); !s.empty()) return s;
  return r.train_loss.empty() ? "-" : short_number(r.train_loss.back().first);
}

std::string seconds(const RunReportData& r) {
  const auto t = parse_number(r.summary_value("time_s"));
  return t ? fmt::format("{:.1f} s", *t) : std::string("-");
}

std::string row(const std::string& key, const std::string& value) {
  return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(key), esc(value));
}

}  // namespace

std::string run_header_html(const RunReportData& r, const std::string& colour) {
  const Final f = final_metrics(r);
  const auto or_dash = [&](const std::string& key) {
    const std::string v = r.summary_value(key);
    return v.empty() ? std::string("-") : v;
  };
  std::string s = fmt::format("<h2 class=\"run-name\"><span class=\"swatch\" style=\"background:{}\"></span>{}</h2>\n",
                              esc(colour), esc(r.name));
  s += "<table class=\"header\">\n" + row("folder", r.dir.string());
  s += row("config", r.config_text.empty() ? "-" : "config.resolved.yaml (below)");
  s += row("status", r.has_summary ? or_dash("status") : "no summary.json (running or stopped)");
  s += row("device", or_dash("device")) + row("backends", or_dash("backends"));
  s += row("ops by backend", or_dash("ops_by_backend"));
  s += row("threads", or_dash("threads")) + row("world size", or_dash("world_size"));
  s += row("total time", seconds(r)) + row("steps", last_step(r)) + row("parameters", or_dash("parameters"));
  for (const char* key : {"peak_host_bytes", "peak_device_bytes"})
    if (const auto bytes = parse_number(r.summary_value(key)))
      s += row(key == std::string("peak_host_bytes") ? "peak host memory" : "peak device memory",
               fmt::format("{:.1f} MiB", *bytes / (1024.0 * 1024.0)));
  s += row("final test accuracy", percent(f.accuracy) + f.source);
  s += row("final test loss", value_or_dash(f.loss) + f.source);
  if (r.last_eval_perplexity)  // a language model: next-token accuracy above, perplexity = exp(loss)
    s += row("final test perplexity", value_or_dash(r.last_eval_perplexity) + " (last eval record)");
  s += row("final train loss", value_or_dash(f.train_loss));
  if (!r.data_share.empty()) {  // whether the loader kept up: near 0 = compute-bound
    double sum = 0.0;
    for (const auto& [epoch, share] : r.data_share) sum += share;
    s += row("waiting for data", fmt::format("{:.1f}% of the training time (mean of {} epochs; last epoch {:.1f}%)",
                                             100.0 * sum / static_cast<double>(r.data_share.size()),
                                             r.data_share.size(), 100.0 * r.data_share.back().second));
  }
  if (const std::string epoch = r.summary_value("best_epoch"); !epoch.empty()) {  // (a validation split)
    std::string best = "epoch " + epoch;
    for (const char* key : {"best_val_loss", "best_val_accuracy"})
      if (const auto v = parse_number(r.summary_value(key))) best += fmt::format(", {} {:.4g}", key + 5, *v);
    if (const std::string stop = r.summary_value("stopped_early_at_epoch"); !stop.empty())
      best += ", early stopping after epoch " + stop;
    s += row("best on validation", best);
  }
  if (const std::string fb = r.summary_value("fallback"); !fb.empty()) s += row("backend note", fb);
  return s + "</table>\n";
}

std::string run_notes_html(const RunReportData& r) {
  if (r.notes.empty()) return {};
  std::string s = "<ul class=\"missing\">\n";
  for (const std::string& n : r.notes) s += fmt::format("<li>missing: {}</li>\n", esc(n));
  return s + "</ul>\n";
}

std::string stage_table_html(const RunReportData& r) {
  if (r.stages.empty()) {
    // Only a run that asked for the table (report: {stages: true}) misses it; a plain run has none.
    if (r.config_value("report.stages") != "true") return {};
    return "<p class=\"missing\">No per-stage table: the run asked for one (<code>report: {stages: true}</code>) "
           "but logged no stage_report records (it stopped before a stage that changes the model ended?).</p>\n";
  }
  std::vector<std::string> columns;
  for (const auto& rec : r.stages)
    for (const auto& [k, v] : rec)
      if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
  std::string s = "<table class=\"stages\">\n<tr><th>#</th>";
  for (const std::string& c : columns) s += fmt::format("<th>{}</th>", esc(c));
  s += "</tr>\n";
  for (size_t i = 0; i < r.stages.size(); ++i) {
    s += fmt::format("<tr><td>{}</td>", i);
    for (const std::string& c : columns) {
      std::string v = "-";
      for (const auto& [k, x] : r.stages[i])
        if (k == c) v = x;
      if (c == "accuracy" && parse_number(v)) v = percent(parse_number(v));
      s += fmt::format("<td>{}</td>", esc(v));
    }
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string confusion_html(const RunReportData& r) {
  if (!r.confusion || r.confusion->matrix.empty())
    return "<p class=\"missing\">No confusion matrix: the run has no evaluation record with one.</p>\n";
  const ReportConfusion& c = *r.confusion;
  const size_t n = c.matrix.size();
  const auto name = [&](size_t k) {
    return k < c.classes.size() ? fmt::format("{} {}", k, c.classes[k]) : std::to_string(k);
  };
  std::string s = "<table class=\"confusion\">\n<tr><th>true \\ predicted</th>";
  for (size_t p = 0; p < n; ++p) s += fmt::format("<th class=\"class-name\">{}</th>", esc(name(p)));
  s += "<th>accuracy</th></tr>\n";
  for (size_t t = 0; t < n; ++t) {
    const std::vector<double>& cells = c.matrix[t];
    double total = 0.0;
    for (double v : cells) total += v;
    s += fmt::format("<tr><th class=\"class-name\">{}</th>", esc(name(t)));
    for (size_t p = 0; p < n; ++p) {
      const double v = p < cells.size() ? cells[p] : 0.0;
      const double share = total > 0.0 ? v / total : 0.0;
      s += fmt::format(
          "<td class=\"cell{}\" style=\"background:rgba(49,54,149,{:.3f});color:{}\" title=\"true {}, predicted {}: "
          "{:.1f}%\">{}</td>",
          p == t ? " diag" : "", share, share > 0.55 ? "#fff" : "#222", esc(name(t)), esc(name(p)), 100.0 * share,
          short_number(v));
    }
    s += fmt::format("<td>{}</td></tr>\n", total > 0.0 && t < cells.size() ? percent(cells[t] / total) : "-");
  }
  return s + "</table>\n";
}

std::string config_block_html(const RunReportData& r) {
  if (r.config_text.empty()) return {};
  return fmt::format("<details class=\"config\"><summary>config.resolved.yaml</summary><pre>{}</pre></details>\n",
                     esc(r.config_text));
}

std::string comparison_html(const std::vector<RunReportData>& runs, const std::vector<std::string>& colours) {
  std::string s =
      "<table class=\"compare\">\n<tr><th>run</th><th>status</th><th>steps</th><th>time</th><th>train "
      "loss</th><th>test accuracy</th><th>test loss</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunReportData& r = runs[i];
    const Final f = final_metrics(r);
    const std::string status = r.has_summary ? r.summary_value("status") : "no summary";
    s += fmt::format(
        "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        esc(colours[i % colours.size()]), esc(r.name), esc(status.empty() ? "-" : status), esc(last_step(r)),
        seconds(r), value_or_dash(f.train_loss), percent(f.accuracy) + esc(f.source), value_or_dash(f.loss));
  }
  return s + "</table>\n";
}

std::string config_diff_html(const std::vector<RunReportData>& runs) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const RunReportData& r : runs)
    for (const auto& [k, v] : r.config)
      if (seen.insert(k).second) keys.push_back(k);
  std::string body;
  for (const std::string& k : keys) {
    std::vector<std::string> values;
    for (const RunReportData& r : runs) values.push_back(r.config_value(k).value_or("(absent)"));
    if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values.front(); })) continue;
    body += fmt::format("<tr class=\"config-diff\"><th>{}</th>", esc(k));
    for (const std::string& v : values) body += fmt::format("<td>{}</td>", esc(v));
    body += "</tr>\n";
  }
  if (body.empty()) return "<p>The runs' configs have the same values for every key.</p>\n";
  std::string s = "<table class=\"config-diff\">\n<tr><th>config key</th>";
  for (const RunReportData& r : runs) s += fmt::format("<th>{}</th>", esc(r.name));
  return s + "</tr>\n" + body + "</table>\n";
}

}  // namespace ingot::train

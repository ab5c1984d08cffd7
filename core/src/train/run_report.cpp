// The run report page: reads every run folder, draws the charts (one colour per run, overlaid),
// and assembles the self-contained HTML (inline CSS and SVG only) around the section tables.
#include "ingot/train/run_report.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/io/atomic_write.h"
#include "ingot/train/svg_plot.h"
#include "run_report_data.h"
#include "run_report_sections.h"

namespace ingot::train {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                           "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr const char* kEvalColour = "#d62728";  // eval points of a single run, beside its blue curve
constexpr const char* kValidationColour = "#2ca02c";  // validation points of a single run

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:1320px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
table.header th{background:#f4f4f4;font-weight:normal;color:#555}
table.confusion td{text-align:right;min-width:34px}table.confusion td.diag{outline:2px solid #333}
.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{border:1px solid #ddd;padding:4px;background:#fff}
svg.plot{font-size:11px;background:#fff}svg.plot .frame{fill:none;stroke:#888}
svg.plot .grid{stroke:#eee}svg.plot .tick{stroke:#888}svg.plot .tick-label{fill:#444}
svg.plot .title{font-size:13px;font-weight:bold}svg.plot .axis-label{font-size:12px;fill:#333}
.missing{color:#8a5a00}p.missing{background:#fff8e6;padding:6px 10px;border-left:3px solid #e0a800}
ul.missing{background:#fff8e6;padding:6px 10px 6px 28px;border-left:3px solid #e0a800}
.swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}
pre{background:#f7f7f7;padding:8px;font-size:12px;overflow:auto;max-height:480px})";

std::string colour_of(size_t i) { return kColours[i % kColours.size()]; }

/// A chart, or a note in its place when no run has a point for it.
std::string chart(const SvgPlot& plot, const std::string& empty_note) {
  if (!has_points(plot))
    return fmt::format("<div class=\"chart\"><h3>{}</h3><p class=\"missing\">{}</p></div>\n", html_escape(plot.title),
                       html_escape(empty_note));
  return "<div class=\"chart\">" + render_svg(plot) + "</div>\n";
}

std::string charts_html(const std::vector<RunReportData>& runs) {
  const bool many = runs.size() > 1;
  SvgPlot loss{"plot-train-loss", "loss vs step", "step", "loss", {}};
  SvgPlot acc{"plot-eval-accuracy", "accuracy vs step", "step (evaluations at epoch ends)", "accuracy (%)", {}};
  SvgPlot lr{"plot-lr", "learning rate vs step", "step", "learning rate", {}};
  SvgPlot speed{"plot-throughput", "throughput vs time", "time since the first record (s)", "images/s", {}};
  SvgPlot memory{"plot-memory", "memory vs time", "time since the first record (s)", "MiB", {}};
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunReportData& r = runs[i];
    const std::string c = colour_of(i), prefix = many ? r.name + " " : "";
    loss.series.push_back({prefix + "train loss", c, r.train_loss, true, false, ""});
    loss.series.push_back({prefix + "test loss", many ? c : kEvalColour, r.eval_loss, false, true, ""});
    acc.series.push_back({prefix + "test accuracy", many ? c : kEvalColour, r.eval_accuracy, true, true, ""});
    if (!r.val_loss.empty()) {  // (a validation split: per-epoch numbers; the test split once at the end)
      loss.series.push_back({prefix + "validation loss", many ? c : kValidationColour, r.val_loss, true, true, "4 3"});
      acc.series.push_back(
          {prefix + "validation accuracy", many ? c : kValidationColour, r.val_accuracy, true, true, "4 3"});
    }
    lr.series.push_back({many ? r.name : "learning rate", c, r.lr, true, false, ""});
    // The best validation epoch (what best.safetensors holds) and where early stopping ended it.
    std::vector<PlotMark> marks;
    const std::string mark_colour = many ? c : "#555";
    if (r.best_epoch_step)
      marks.push_back({r.best_epoch_step->second, fmt::format("{}best: epoch {}", prefix, r.best_epoch_step->first),
                       mark_colour, "2 2"});
    if (r.early_stop_step)
      marks.push_back({r.early_stop_step->second,
                       fmt::format("{}early stop: epoch {}", prefix, r.early_stop_step->first), mark_colour, "6 3"});
    for (SvgPlot* p : {&loss, &acc, &lr}) p->marks.insert(p->marks.end(), marks.begin(), marks.end());
    speed.series.push_back({many ? r.name : "images/s", c, r.throughput, true, false, ""});
    for (const ReportMemorySeries& m : r.memory) {
      const std::string what = m.field == "mem_allocated_mb"  ? "allocated"
                               : m.field == "mem_reserved_mb" ? "reserved"
                                                              : "peak allocated";
      const std::string dash = m.field == "mem_allocated_mb" ? "" : m.field == "mem_reserved_mb" ? "7 4" : "2 3";
      memory.series.push_back({prefix + what, c, m.points, true, false, dash});
    }
  }
  std::string s = "<div class=\"charts\">\n";
  s += chart(loss, "No train_step or eval records: no loss curve.");
  s += chart(acc, "No eval records: no accuracy curve.");
  s += chart(lr, "No train_step records with a learning rate.");
  s += chart(speed, "No train_step records with images/s and a time.");
  s += chart(memory, "No memory records: the runs' train_step / epoch records carry no mem_* fields.");
  return s + "</div>\n";
}

std::string run_section(const RunReportData& r, size_t i, bool many) {
  std::string s = "<section class=\"run\">\n" + run_header_html(r, colour_of(i)) + run_notes_html(r);
  if (const std::string stages = stage_table_html(r); many && !stages.empty())
    s += "<h3>Per-stage table</h3>\n" + stages;
  s += many ? "<h3>Confusion matrix (last evaluation)</h3>\n" + confusion_html(r) : std::string();
  s += config_block_html(r);
  return s + "</section>\n";
}

}  // namespace

std::string run_report_html(const std::vector<fs::path>& dirs) {
  INGOT_CHECK_AS(!dirs.empty(), InputError,
                 "run report: no run folder given; name at least one folder written by 'ingot run'");
  std::vector<RunReportData> runs;
  for (const fs::path& d : dirs) runs.push_back(read_run_report_data(d));
  const bool many = runs.size() > 1;
  const std::string title = many ? fmt::format("Ingot: {} runs compared", runs.size()) : "Ingot run " + runs[0].name;
  std::string s = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n<style>\n{1}\n"
      "</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
      html_escape(title), kStyle);
  if (many) {
    s += "<h2>Final metrics</h2>\n" + comparison_html(runs, kColours);
    s += "<h2>Config keys that differ</h2>\n" + config_diff_html(runs);
    s += "<h2>Curves</h2>\n" + charts_html(runs);
    for (size_t i = 0; i < runs.size(); ++i) s += run_section(runs[i], i, true);
  } else {
    s += run_section(runs[0], 0, false);
    s += "<h2>Curves</h2>\n" + charts_html(runs);
    if (const std::string stages = stage_table_html(runs[0]); !stages.empty())
      s += "<h2>Per-stage table</h2>\n" + stages;
    s += "<h2>Confusion matrix (last evaluation)</h2>\n" + confusion_html(runs[0]);
  }
  return s + "</body>\n</html>\n";
}

void write_run_report(const std::vector<fs::path>& runs, const fs::path& out) {
  const std::string html = run_report_html(runs);
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  INGOT_CHECK_AS(fs::is_directory(parent), InputError,
                 "run report: cannot write {}: folder {} does not exist; create it or choose another output",
                 out.string(), parent.string());
  io::atomic_write(out, html);
}

}  // namespace ingot::train

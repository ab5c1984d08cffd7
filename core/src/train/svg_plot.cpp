// SvgPlot: the data range rounded out to tick values, the mapping to pixels, then the frame, grid,
// tick labels, axis labels, marks (vertical event lines), curves and a legend band under the x axis.
#include "ingot/train/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ingot::train {
namespace {

constexpr int kLeft = 70, kRight = 18, kTop = 30, kBottom = 48;
constexpr int kLegendRow = 18;

struct Range {
  double lo = 0.0, hi = 1.0;
};

/// The range of the finite x (or y) values of every series, widened when it is a single value,
/// then rounded out to the ticks.
Range range_of(const SvgPlot& plot, bool x, std::vector<double>& ticks) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const PlotSeries& s : plot.series)
    for (const auto& [px, py] : s.points) {
      if (!std::isfinite(px) || !std::isfinite(py)) continue;
      lo = std::min(lo, x ? px : py);
      hi = std::max(hi, x ? px : py);
    }
  if (!std::isfinite(lo)) {
    lo = 0.0, hi = 1.0;
  } else if (x) {  // (marks only widen a range that has points)
    for (const PlotMark& m : plot.marks)
      if (std::isfinite(m.x)) lo = std::min(lo, m.x), hi = std::max(hi, m.x);
  }
  if (hi - lo <= std::abs(hi) * 1e-12) {
    const double pad = lo == 0.0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  ticks = nice_ticks(lo, hi, x ? 6 : 5);
  return {std::min(lo, ticks.front()), std::max(hi, ticks.back())};
}

/// Legend entries laid out left to right, wrapped to the chart's width: (x, row) of each.
std::vector<std::pair<int, int>> legend_layout(const SvgPlot& plot, int& rows) {
  std::vector<std::pair<int, int>> at;
  int x = kLeft, row = 0;
  rows = 0;
  for (const PlotSeries& s : plot.series) {
    if (s.label.empty()) {
      at.emplace_back(-1, -1);
      continue;
    }
    const int w = 34 + 7 * static_cast<int>(s.label.size());
    if (x + w > plot.width - kRight && x > kLeft) x = kLeft, ++row;
    at.emplace_back(x, row);
    x += w + 12;
    rows = row + 1;
  }
  return at;
}

}  // namespace

bool has_points(const SvgPlot& plot) {
  for (const PlotSeries& s : plot.series)
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y)) return true;
  return false;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (double t = first; t < hi + step * 0.999; t += step) ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string short_number(double v) {
  if (!std::isfinite(v)) return "-";
  if (v != 0.0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) return fmt::format("{:.3g}", v);
  return fmt::format("{:.4g}", v);
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_svg(const SvgPlot& plot) {
  std::vector<double> xt, yt;
  const Range xr = range_of(plot, true, xt), yr = range_of(plot, false, yt);
  int legend_rows = 0;
  const std::vector<std::pair<int, int>> legend = legend_layout(plot, legend_rows);
  const int plot_w = plot.width - kLeft - kRight, plot_h = plot.height - kTop - kBottom;
  const int total_h = plot.height + legend_rows * kLegendRow + (legend_rows > 0 ? 4 : 0);
  const auto px = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };
  const auto py = [&](double y) { return kTop + plot_h - (y - yr.lo) / (yr.hi - yr.lo) * plot_h; };

  std::string s = fmt::format(
      "<svg id=\"{}\" class=\"plot\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\">\n",
      html_escape(plot.id), plot.width, total_h, plot.width, total_h, html_escape(plot.title));
  s += fmt::format("<text class=\"title\" x=\"{}\" y=\"18\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2,
                   html_escape(plot.title));
  s += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", kLeft, kTop, plot_w,
                   plot_h);
  for (double t : xt) {
    const double x = px(t);
    s += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>", x, kTop,
                     kTop + plot_h);
    s += fmt::format("<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>", x, kTop + plot_h,
                     kTop + plot_h + 5);
    s += fmt::format("<text class=\"tick-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
                     kTop + plot_h + 18, short_number(t));
  }
  for (double t : yt) {
    const double y = py(t);
    s += fmt::format("<line class=\"grid\" x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>", y, kLeft,
                     kLeft + plot_w);
    s += fmt::format("<line class=\"tick\" x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>", y, kLeft - 5, kLeft);
    s += fmt::format("<text class=\"tick-label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 8,
                     y + 4, short_number(t));
  }
  s += fmt::format("<text class=\"axis-label x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   kLeft + plot_w / 2, kTop + plot_h + 38, html_escape(plot.x_label));
  s += fmt::format(
      "<text class=\"axis-label y-label\" x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      "{0})\">{1}</text>\n",
      kTop + plot_h / 2, html_escape(plot.y_label));

  for (size_t i = 0; i < plot.marks.size(); ++i) {
    const PlotMark& m = plot.marks[i];
    if (!std::isfinite(m.x) || !has_points(plot)) continue;
    const double x = px(m.x);
    const std::string dash = m.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", m.dash);
    // Labels on alternate rows, so that two marks close together stay readable; left of a line in
    // the right half, so that they stay inside the frame.
    const bool left = x > kLeft + plot_w / 2.0;
    s += fmt::format(
        "<g class=\"mark\"><title>{0}</title><line x1=\"{1:.1f}\" y1=\"{2}\" x2=\"{1:.1f}\" y2=\"{3}\" "
        "stroke=\"{4}\" stroke-width=\"1.5\"{5}/><text x=\"{6:.1f}\" y=\"{7}\" fill=\"{4}\" "
        "text-anchor=\"{8}\">{0}</text></g>\n",
        html_escape(m.label), x, kTop, kTop + plot_h, html_escape(m.colour), dash, left ? x - 3 : x + 3,
        kTop + 12 + 12 * (i % 2), left ? "end" : "start");
  }
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& ser = plot.series[i];
    const std::string label = html_escape(ser.label);
    const std::string dash = ser.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", ser.dash);
    std::string pts;
    std::string marks;
    const auto drawn = std::count_if(ser.points.begin(), ser.points.end(),
                                     [](const auto& p) { return std::isfinite(p.first) && std::isfinite(p.second); });
    // A line of one point is no line: it gets a marker, and its legend entry is a dot.
    const bool as_line = ser.line && drawn >= 2, with_markers = ser.markers || (ser.line && drawn == 1);
    for (const auto& [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", px(x), py(y));
      if (with_markers)
        marks += fmt::format(
            "<circle class=\"marker\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: "
            "{}, {}</title></circle>",
            px(x), py(y), html_escape(ser.colour), label, short_number(x), short_number(y));
    }
    if (ser.line && !pts.empty())
      s += fmt::format(
          "<polyline class=\"series\" data-series=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} "
          "points=\"{}\"><title>{}</title></polyline>\n",
          label, html_escape(ser.colour), dash, pts, label);
    if (!marks.empty()) s += "<g class=\"markers\">" + marks + "</g>\n";
    if (legend[i].first < 0) continue;
    const int lx = legend[i].first, ly = plot.height + 12 + legend[i].second * kLegendRow;
    const std::string dot = as_line && !ser.markers ? std::string()
                                                    : fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"/>",
                                                                  lx + 13, ly - 4, html_escape(ser.colour));
    const std::string swatch =
        (as_line ? fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"{}/>", lx,
                               ly - 4, lx + 26, ly - 4, html_escape(ser.colour), dash)
                 : std::string()) +
        dot;
    s += fmt::format("<g class=\"legend\">{}<text x=\"{}\" y=\"{}\">{}</text></g>\n", swatch, lx + 32, ly, label);
  }
  return s + "</svg>\n";
}

}  // namespace ingot::train

// SvgPlot: a line chart as inline SVG text (axes, ticks, labels, legend), for self-contained
// HTML pages such as a run's report.html. No script, no external reference: the chart shows as is.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ingot::train {

/// One curve of a chart: a polyline through its points (in order), markers at each point, or both.
struct PlotSeries {
  std::string label;                              ///< legend text; empty: not in the legend
  std::string colour;                             ///< a CSS colour, e.g. "#1f77b4"
  std::vector<std::pair<double, double>> points;  ///< (x, y); non-finite points are left out
  bool line = true;                               ///< draw a <polyline>
  bool markers = false;                           ///< draw a <circle> (with a <title>) per point
  std::string dash;                               ///< stroke-dasharray, e.g. "6 3"; empty: solid
};

/// A vertical line across the chart at one x (an event such as the best epoch or an early stop),
/// labelled at the top.
struct PlotMark {
  double x = 0.0;
  std::string label;   ///< short text beside the line's top, also its tooltip
  std::string colour;  ///< a CSS colour
  std::string dash;    ///< stroke-dasharray; empty: solid
};

/// A chart: its element id, title, axis labels, curves and marks. Axes span the points of every
/// series (and the marks' x, when there are points).
struct SvgPlot {
  std::string id;  ///< the <svg> element's id (unique in the page)
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<PlotSeries> series;
  std::vector<PlotMark> marks;
  int width = 540;
  int height = 320;
};

/// True when some series has a finite point to draw.
bool has_points(const SvgPlot& plot);

/// The chart as one <svg> element (no xmlns: it is meant for inline use in HTML5). Text is
/// escaped. A chart without points still gets its axes, with the range [0, 1]. A series' legend
/// entry shows how it is drawn: a line when it has a line of two points or more (with a dot when
/// it also has markers), else a dot.
std::string render_svg(const SvgPlot& plot);

/// About `target` round tick values (steps of 1, 2 or 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target);

/// A short label for a tick or a table cell: up to 4 significant digits, no trailing zeros.
std::string short_number(double v);

/// `text` with & < > " ' replaced by character references, safe in element text and attributes.
std::string html_escape(std::string_view text);

}  // namespace ingot::train

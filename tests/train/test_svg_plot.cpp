// SvgPlot: tick values, number labels, escaping, and the chart's elements (a polyline per line
// series with a point per finite value, markers with titles, a legend entry per labelled series).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ingot/train/svg_plot.h"

using ingot::train::PlotSeries;
using ingot::train::SvgPlot;

TEST_CASE("svg plot: ticks are round values covering the range", "[svg_plot]") {
  CHECK(ingot::train::nice_ticks(0.0, 1.0, 5) == std::vector<double>{0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0});
  const std::vector<double> t = ingot::train::nice_ticks(3.0, 97.0, 5);
  CHECK(t.front() <= 3.0);
  CHECK(t.back() >= 97.0);
  CHECK(t[1] - t[0] == 20.0);
  CHECK(ingot::train::short_number(0.123456) == "0.1235");
  CHECK(ingot::train::short_number(25000000.0) == "2.5e+07");
  CHECK(ingot::train::short_number(40.0) == "40");
}

TEST_CASE("svg plot: html_escape replaces the five special characters", "[svg_plot]") {
  CHECK(ingot::train::html_escape(R"(<b>&"x'</b>)") == "&lt;b&gt;&amp;&quot;x&#39;&lt;/b&gt;");
  CHECK(ingot::train::html_escape("plain") == "plain");
}

TEST_CASE("svg plot: polylines, markers, legend and escaped text", "[svg_plot]") {
  SvgPlot p{"plot-x", "a <title>", "step", "loss", {}};
  p.series.push_back({"train", "#1f77b4", {{1, 3}, {2, 2}, {3, NAN}, {4, 1}}, true, false, ""});
  p.series.push_back({"eval", "#d62728", {{2, 2.5}, {4, 1.5}}, false, true, ""});
  p.series.push_back({"", "#2ca02c", {{1, 1}, {4, 4}}, true, false, "4 2"});
  CHECK(ingot::train::has_points(p));
  const std::string svg = ingot::train::render_svg(p);
  CHECK(svg.rfind("<svg id=\"plot-x\"", 0) == 0);
  CHECK(svg.find("xmlns") == std::string::npos);
  CHECK(svg.find("a &lt;title&gt;") != std::string::npos);
  CHECK(svg.find("<title>") == svg.find("<title>train</title>"));  // the only raw <title> are elements
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  CHECK(polylines == 2);
  CHECK(svg.find("stroke-dasharray=\"4 2\"") != std::string::npos);
  size_t markers = 0;
  for (size_t at = svg.find("class=\"marker\""); at != std::string::npos; at = svg.find("class=\"marker\"", at + 1))
    ++markers;
  CHECK(markers == 2);
  size_t legend = 0;
  for (size_t at = svg.find("class=\"legend\""); at != std::string::npos; at = svg.find("class=\"legend\"", at + 1))
    ++legend;
  CHECK(legend == 2);  // the unlabelled series has none
  // three finite points of "train": two spaces in its points list
  const size_t pts = svg.find("points=\"") + 8;
  const std::string list = svg.substr(pts, svg.find('"', pts) - pts);
  CHECK(std::count(list.begin(), list.end(), ' ') == 2);
}

TEST_CASE("svg plot: the legend shows a series as it is drawn", "[svg_plot]") {
  SvgPlot p{"plot-l", "legend", "step", "y", {}};
  p.series.push_back({"curve", "#111", {{1, 1}, {2, 2}}, true, false, ""});
  p.series.push_back({"points", "#222", {{1, 1}, {2, 2}}, false, true, ""});
  p.series.push_back({"curve with points", "#333", {{1, 1}, {2, 2}}, true, true, ""});
  p.series.push_back({"one point", "#444", {{2, 1.5}}, true, true, ""});  // (a test after training)
  p.series.push_back({"lone", "#555", {{1, 2}}, true, false, ""});
  const std::string svg = ingot::train::render_svg(p);
  const auto entry = [&](const std::string& label) {
    const size_t end = svg.find(">" + label + "</text>");
    const size_t begin = svg.rfind("<g class=\"legend\">", end);
    return svg.substr(begin, end - begin);
  };
  const auto has = [](const std::string& s, const char* what) { return s.find(what) != std::string::npos; };
  CHECK((has(entry("curve"), "<line") && !has(entry("curve"), "<circle")));
  CHECK((!has(entry("points"), "<line") && has(entry("points"), "<circle")));
  CHECK((has(entry("curve with points"), "<line") && has(entry("curve with points"), "<circle")));
  CHECK((!has(entry("one point"), "<line") && has(entry("one point"), "<circle")));
  CHECK((!has(entry("lone"), "<line") && has(entry("lone"), "<circle")));
  // A line of one point has nothing to draw but its point: it gets a marker.
  CHECK(svg.find("fill=\"#555\"><title>lone: 1, 2</title>") != std::string::npos);
}

TEST_CASE("svg plot: marks are vertical lines with a label, inside the x range", "[svg_plot]") {
  SvgPlot p{"plot-m", "marks", "step", "loss", {}};
  p.series.push_back({"loss", "#1f77b4", {{0, 1}, {10, 0.5}}, true, false, ""});
  p.marks.push_back({8, "best: epoch 2", "#555", "2 2"});
  p.marks.push_back({14, "early stop: epoch 4", "#555", "6 3"});  // beyond the points: widens the axis
  const std::string svg = ingot::train::render_svg(p);
  size_t marks = 0;
  for (size_t at = svg.find("<g class=\"mark\">"); at != std::string::npos; at = svg.find("<g class=\"mark\">", at + 1))
    ++marks;
  CHECK(marks == 2);
  CHECK(svg.find(">best: epoch 2</text>") != std::string::npos);
  CHECK(svg.find("stroke-dasharray=\"6 3\"") != std::string::npos);
  CHECK(svg.find(">15</text>") != std::string::npos);  // the x axis reaches past 14 (ticks of 5)
  // Without points there is nothing to mark.
  SvgPlot empty{"plot-e", "none", "x", "y", {}};
  empty.marks.push_back({1, "m", "#000", ""});
  CHECK(ingot::train::render_svg(empty).find("class=\"mark\"") == std::string::npos);
}

TEST_CASE("svg plot: a chart without points still draws its axes", "[svg_plot]") {
  SvgPlot p{"plot-empty", "nothing", "x", "y", {{"none", "#000", {}, true, false, ""}}};
  CHECK_FALSE(ingot::train::has_points(p));
  const std::string svg = ingot::train::render_svg(p);
  CHECK(svg.find("<polyline") == std::string::npos);
  CHECK(svg.find("class=\"frame\"") != std::string::npos);
}

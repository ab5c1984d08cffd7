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

TEST_CASE("svg plot: a chart without points still draws its axes", "[svg_plot]") {
  SvgPlot p{"plot-empty", "nothing", "x", "y", {{"none", "#000", {}, true, false, ""}}};
  CHECK_FALSE(ingot::train::has_points(p));
  const std::string svg = ingot::train::render_svg(p);
  CHECK(svg.find("<polyline") == std::string::npos);
  CHECK(svg.find("class=\"frame\"") != std::string::npos);
}

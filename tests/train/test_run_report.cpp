// The run report page from small run folders written here (metrics through MetricsLog, a summary,
// a resolved config): one chart per plot with a point per record, axis labels, the confusion
// cells, escaping, nothing external, two runs compared, a partial run's notes, a missing folder.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/run_report.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using ingot::test::read_text;
using ingot::test::TempDir;
using ingot::test::write_text;
using ingot::train::Record;
using ingot::train::run_report_html;

namespace {

constexpr int kSteps = 12;  // train_step records of a full fake run
constexpr int kEpochs = 2;  // epoch + eval records

const char* kConfusion =
    R"({"num_classes":3,"classes":["cat","<b>&\"","dog"],"matrix":[[7,1,0],[2,5,1],[0,0,9]],"total":25})";

/// A finished run: kSteps train steps, an epoch and an eval record after each half, a stage
/// record, summary.json and config.resolved.yaml (with `lr`).
fs::path fake_run(const fs::path& root, const std::string& name, double lr) {
  const fs::path dir = root / name;
  fs::create_directories(dir);
  {
    ingot::train::MetricsLog log(dir / "metrics.jsonl", false);
    for (int s = 1; s <= kSteps; ++s) {
      Record r = ingot::train::train_step_record(1 + (s - 1) / 6, s, 2.0 / s, lr * s / kSteps, 100.0 + s, 0.1);
      r.set("mem_allocated_mb", 10.0 + s).set("mem_reserved_mb", 20.0 + s).set("mem_peak_mb", 15.0 + s);
      log.log(r.set("time", 1000.0 + s));
      if (s % 6 == 0) {
        Record e("epoch", s / 6, s);
        e.set("loss", 1.0 / s).set("mem_allocated_mb", 11.0).set("mem_reserved_mb", 21.0).set("mem_peak_mb", 16.0);
        log.log(e.set("time", 1000.5 + s));
        Record v("eval", s / 6, s);
        v.set("loss", 0.5 / s).set("accuracy", 0.4 + 0.02 * s).set("samples", 25);
        log.log(v.set("confusion", ingot::train::RawJson{kConfusion}).set("time", 1000.7 + s));
      }
    }
    Record st("stage_report", kEpochs, kSteps);
    st.set("stage", "train").set("accuracy", 0.84).set("weights", 1234).set("bytes_on_disk", 5678);
    log.log(st.set("time", 1020.0));
  }
  write_text(dir / "summary.json",
             fmt::format(R"({{"event":"summary","epoch":2,"step":{},"name":"{}","status":"completed","time_s":21.5,)"
                         R"("threads":2,"world_size":1,"device":"cpu","backends":"reference","test_accuracy":0.84,)"
                         R"("test_loss":0.0417,"train_loss":0.1667}})",
                         kSteps, name));
  write_text(
      dir / "config.resolved.yaml",
      fmt::format("name: {}\nseed: 3\ntrain:\n  epochs: 2\n  optimizer:\n    type: adamw\n    lr: {}\n", name, lr));
  return dir;
}

/// The text of the <svg> element with `id`; empty when the page has none.
std::string svg_of(const std::string& html, const std::string& id) {
  const size_t at = html.find(fmt::format("<svg id=\"{}\"", id));
  if (at == std::string::npos) return {};
  return html.substr(at, html.find("</svg>", at) - at);
}

/// The number of points of each <polyline> of `svg`, in order.
std::vector<int> polyline_points(const std::string& svg) {
  std::vector<int> counts;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) {
    const size_t begin = svg.find("points=\"", at) + 8, end = svg.find('"', begin);
    int n = 1;
    for (size_t i = begin; i < end; ++i) n += svg[i] == ' ';
    counts.push_back(n);
  }
  return counts;
}

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("run report: one svg per chart, with a polyline point per record", "[run_report]") {
  TempDir tmp;
  const std::string html = run_report_html({fake_run(tmp.path(), "a", 0.01)});
  CHECK(occurrences(html, "<svg ") == 5);
  CHECK(polyline_points(svg_of(html, "plot-train-loss")) == std::vector<int>{kSteps});
  CHECK(occurrences(svg_of(html, "plot-train-loss"), "<circle class=\"marker\"") == kEpochs);  // eval loss
  CHECK(polyline_points(svg_of(html, "plot-eval-accuracy")) == std::vector<int>{kEpochs});
  CHECK(polyline_points(svg_of(html, "plot-lr")) == std::vector<int>{kSteps});
  CHECK(polyline_points(svg_of(html, "plot-throughput")) == std::vector<int>{kSteps});
  // allocated, reserved and peak, from the train_step and the epoch records
  CHECK(polyline_points(svg_of(html, "plot-memory")) == std::vector<int>(3, kSteps + kEpochs));
}

TEST_CASE("run report: charts have axis labels and tick labels", "[run_report]") {
  TempDir tmp;
  const std::string html = run_report_html({fake_run(tmp.path(), "a", 0.01)});
  const std::string loss = svg_of(html, "plot-train-loss");
  CHECK(loss.find("class=\"axis-label x-label\"") != std::string::npos);
  CHECK(loss.find(">step</text>") != std::string::npos);
  CHECK(loss.find(">loss</text>") != std::string::npos);
  CHECK(occurrences(loss, "class=\"tick-label\"") >= 6);
  CHECK(svg_of(html, "plot-eval-accuracy").find(">accuracy (%)</text>") != std::string::npos);
  CHECK(svg_of(html, "plot-memory").find(">MiB</text>") != std::string::npos);
}

TEST_CASE("run report: header and per-stage table come from summary.json and the stage records", "[run_report]") {
  TempDir tmp;
  const std::string html = run_report_html({fake_run(tmp.path(), "a", 0.01)});
  CHECK(html.find("<th>final test accuracy</th><td>84.00%</td>") != std::string::npos);
  CHECK(html.find("<th>total time</th><td>21.5 s</td>") != std::string::npos);
  CHECK(html.find("<th>backends</th><td>reference</td>") != std::string::npos);
  CHECK(html.find("<table class=\"stages\">") != std::string::npos);
  CHECK(html.find("<td>5678</td>") != std::string::npos);
  CHECK(html.find("class=\"missing\"") == std::string::npos);  // nothing is missing
}

TEST_CASE("run report: the last confusion matrix, class names escaped", "[run_report]") {
  TempDir tmp;
  const std::string html = run_report_html({fake_run(tmp.path(), "a", 0.01)});
  CHECK(occurrences(html, "<td class=\"cell") == 9);
  CHECK(occurrences(html, "<td class=\"cell diag\"") == 3);
  CHECK(html.find("\">9</td>") != std::string::npos);  // dog, dog
  CHECK(html.find("1 &lt;b&gt;&amp;&quot;") != std::string::npos);
  CHECK(html.find("<b>&\"") == std::string::npos);
  CHECK(html.find("<th class=\"class-name\">0 cat</th>") != std::string::npos);
}

TEST_CASE("run report: the page is self-contained", "[run_report]") {
  TempDir tmp;
  const std::string html = run_report_html({fake_run(tmp.path(), "a", 0.01), fake_run(tmp.path(), "b", 0.02)});
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<style>") != std::string::npos);
}

TEST_CASE("run report: two runs overlaid, with a legend, final metrics and the config keys that differ",
          "[run_report]") {
  TempDir tmp;
  const std::string html = run_report_html({fake_run(tmp.path(), "a", 0.01), fake_run(tmp.path(), "b", 0.02)});
  const std::string loss = svg_of(html, "plot-train-loss");
  CHECK(polyline_points(loss) == std::vector<int>{kSteps, kSteps});
  CHECK(loss.find("stroke=\"#1f77b4\"") != std::string::npos);
  CHECK(loss.find("stroke=\"#d62728\"") != std::string::npos);
  CHECK(occurrences(loss, "<g class=\"legend\">") == 4);  // train and eval loss of each run
  CHECK(svg_of(html, "plot-lr").find(">b</text></g>") != std::string::npos);
  CHECK(html.find("<table class=\"compare\">") != std::string::npos);
  CHECK(html.find("<tr class=\"config-diff\"><th>train.optimizer.lr</th><td>0.01</td><td>0.02</td></tr>") !=
        std::string::npos);
  CHECK(html.find("<th>train.epochs</th>") == std::string::npos);  // the same in both
}

TEST_CASE("run report: a number written in yaml-cpp's 17 digits equals its shortest form", "[run_report]") {
  TempDir tmp;
  const fs::path a = fake_run(tmp.path(), "a", 0.1), b = fake_run(tmp.path(), "b", 0.1);
  write_text(a / "config.resolved.yaml",  // as runs before shortest round-trip numbers wrote it
             "name: a\nseed: 3\ntrain:\n  epochs: 2\n  optimizer:\n    type: adamw\n    lr: 0.10000000000000001\n");
  const std::string html = run_report_html({a, b});
  CHECK(html.find("<th>train.optimizer.lr</th>") == std::string::npos);  // not a difference
}

TEST_CASE("run report: the missing per-stage table is named only when the run asked for one", "[run_report]") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "plain";
  fs::create_directories(dir);
  {
    ingot::train::MetricsLog log(dir / "metrics.jsonl", false);
    log.log(ingot::train::train_step_record(1, 1, 1.0, 0.1, 50.0, 0.1));
  }
  write_text(dir / "config.resolved.yaml", "name: plain\n");
  CHECK(run_report_html({dir}).find("Per-stage table") == std::string::npos);
  write_text(dir / "config.resolved.yaml", "name: plain\nreport: {stages: true}\n");
  const std::string asked = run_report_html({dir});
  CHECK(asked.find("<h2>Per-stage table</h2>") != std::string::npos);
  CHECK(asked.find("No per-stage table: the run asked for one") != std::string::npos);
}

TEST_CASE("run report: the best epoch and the early stop are marked on the step curves", "[run_report]") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "stopped";
  fs::create_directories(dir);
  {
    ingot::train::MetricsLog log(dir / "metrics.jsonl", false);
    for (int s = 1; s <= 40; ++s)
      log.log(ingot::train::train_step_record(1 + (s - 1) / 10, s, 1.0 / s, 0.1, 50.0, 0.1));
    for (int e = 1; e <= 4; ++e) {
      Record v("eval", e, 10 * e);
      log.log(v.set("split", "validation").set("loss", e == 2 ? 0.1 : 0.5).set("accuracy", 0.9));
    }
    Record stop("early_stop", 4, 40);
    log.log(stop.set("metric", "val_loss").set("best_epoch", 2));
    Record test("eval", 4, 40);
    log.log(test.set("split", "test").set("loss", 0.2).set("accuracy", 0.8));
  }
  write_text(dir / "summary.json",
             R"({"event":"summary","step":40,"status":"completed","best_epoch":2,"stopped_early_at_epoch":4})");
  const std::string html = run_report_html({dir});
  for (const char* id : {"plot-train-loss", "plot-eval-accuracy", "plot-lr"}) {
    const std::string svg = svg_of(html, id);
    CHECK(svg.find("<title>best: epoch 2</title>") != std::string::npos);
    CHECK(svg.find("<title>early stop: epoch 4</title>") != std::string::npos);
  }
  CHECK(svg_of(html, "plot-throughput").find("class=\"mark\"") == std::string::npos);  // (a time axis)
  // The test point, once after training, is a dot in the legend, not a line.
  const std::string acc = svg_of(html, "plot-eval-accuracy");
  const size_t entry = acc.find(">test accuracy</text>");
  REQUIRE(entry != std::string::npos);
  const std::string legend =
      acc.substr(acc.rfind("<g class=\"legend\">", entry), entry - acc.rfind("<g class=\"legend\">", entry));
  CHECK(legend.find("<circle") != std::string::npos);
  CHECK(legend.find("<line") == std::string::npos);
}

TEST_CASE("run report: a partial run says what is missing", "[run_report]") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "partial";
  fs::create_directories(dir);
  {
    ingot::train::MetricsLog log(dir / "metrics.jsonl", false);
    for (int s = 1; s <= 5; ++s) log.log(ingot::train::train_step_record(1, s, 1.0 / s, 0.1, 50.0, 0.1));
  }
  std::ofstream(dir / "metrics.jsonl", std::ios::app) << R"({"event":"train_step","ep)";  // torn by a kill
  const std::string html = run_report_html({dir});
  CHECK(html.find("summary.json is missing") != std::string::npos);
  CHECK(html.find("config.resolved.yaml is missing") != std::string::npos);
  CHECK(html.find("no evaluation in metrics.jsonl") != std::string::npos);
  CHECK(html.find("1 line(s) of metrics.jsonl are not valid JSON") != std::string::npos);
  CHECK(html.find("No confusion matrix") != std::string::npos);
  CHECK(html.find("No memory records") != std::string::npos);
  CHECK(html.find("Per-stage table") == std::string::npos);  // a plain run has none, and is not told so
  CHECK(polyline_points(svg_of(html, "plot-train-loss")) == std::vector<int>{5});
  CHECK(svg_of(html, "plot-eval-accuracy").empty());

  write_text(dir / "summary.json", R"({"event":"summary","step":5,"status":"interrupted","time_s":1.5})");
  const std::string stopped = run_report_html({dir});
  CHECK(stopped.find("the run ended with status &#39;interrupted&#39;") != std::string::npos);
  CHECK(stopped.find("summary.json is missing") == std::string::npos);
  CHECK(stopped.find("<th>status</th><td>interrupted</td>") != std::string::npos);

  const fs::path empty = tmp.path() / "empty";
  fs::create_directories(empty);
  const std::string none = run_report_html({empty});
  CHECK(none.find("metrics.jsonl is missing") != std::string::npos);
  CHECK(none.find("<svg ") == std::string::npos);
}

TEST_CASE("run report: a missing run folder is one InputError", "[run_report]") {
  TempDir tmp;
  const fs::path missing = tmp.path() / "no_such_run";
  try {
    (void)run_report_html({fake_run(tmp.path(), "a", 0.01), missing});
    FAIL("no exception");
  } catch (const ingot::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find(missing.string()) != std::string::npos);
    CHECK(what.find("does not exist") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK_THROWS_AS(run_report_html({}), ingot::InputError);
}

TEST_CASE("run report: write_run_report writes the page, and refuses a missing output folder", "[run_report]") {
  TempDir tmp;
  const fs::path run = fake_run(tmp.path(), "a", 0.01);
  ingot::train::write_run_report({run}, run / "report.html");
  CHECK(read_text(run / "report.html") == run_report_html({run}));
  CHECK_THROWS_AS(ingot::train::write_run_report({run}, tmp.path() / "nowhere" / "r.html"), ingot::InputError);
}

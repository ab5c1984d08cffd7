// MetricsLog: every line parses as JSON with the expected keys, appends survive reopening, and
// truncate_after drops what a resumed run redoes (and a line torn by a kill).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/train/metrics_log.h"
#include "temp_dir.h"

using ingot::train::MetricsLog;
using ingot::train::RawJson;
using ingot::train::Record;
using ingot::train::train_step_record;
using Json = nlohmann::json;

namespace {

std::vector<Json> read_lines(const std::filesystem::path& p) {
  std::vector<Json> out;
  std::istringstream in(ingot::test::read_text(p));
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("Record: ordered keys, typed values, NaN as null, embedded JSON", "[train][metrics]") {
  Record r("eval", 2, 938);
  r.set("accuracy", 0.9125).set("samples", 10000).set("split", "test").set("ok", true);
  r.set("loss", std::numeric_limits<double>::quiet_NaN());
  r.set("confusion", RawJson{"{\"matrix\":[[1,0],[0,1]]}"});
  r.set("samples", int64_t{9999});  // replaces, keeps its place
  CHECK(r.to_json() ==
        "{\"event\":\"eval\",\"epoch\":2,\"step\":938,\"accuracy\":0.9125,\"samples\":9999,\"split\":\"test\","
        "\"ok\":true,\"loss\":null,\"confusion\":{\"matrix\":[[1,0],[0,1]]}}");
  Record bad("eval", 0, 0);
  bad.set("x", RawJson{"{not json"});
  CHECK_THROWS_AS(bad.to_json(), ingot::Error);
}

TEST_CASE("MetricsLog: one parseable JSON object per line, appended", "[train][metrics]") {
  ingot::test::TempDir dir;
  const auto path = dir.path() / "metrics.jsonl";
  {
    MetricsLog log(path, /*append=*/false);
    for (int64_t step = 1; step <= 4; ++step) log.log(train_step_record(1, step, 1.0 / step, 1e-3, 5000.0, 0.5 * step));
    log.log(Record("epoch", 1, 4).set("loss", 0.52));
  }
  auto lines = read_lines(path);
  REQUIRE(lines.size() == 5);
  const Json& first = lines[0];
  CHECK(first["event"] == "train_step");
  CHECK(first["epoch"] == 1);
  CHECK(first["step"] == 1);
  CHECK(first["loss"].get<double>() == 1.0);
  CHECK(first["lr"].get<double>() == 1e-3);
  CHECK(first["images_per_s"].get<double>() == 5000.0);
  CHECK(first["time_s"].get<double>() == 0.5);
  CHECK(lines[4]["event"] == "epoch");

  {  // reopening to append keeps what is there; append=false starts empty
    MetricsLog log(path, true);
    log.log(train_step_record(2, 5, 0.1, 1e-3, 5000.0, 3.0));
  }
  CHECK(read_lines(path).size() == 6);
  { MetricsLog log(path, false); }
  CHECK(ingot::test::read_text(path).empty());
}

TEST_CASE("MetricsLog::truncate_after drops later steps and a torn last line", "[train][metrics]") {
  ingot::test::TempDir dir;
  const auto path = dir.path() / "metrics.jsonl";
  {
    MetricsLog log(path, false);
    for (int64_t step = 1; step <= 6; ++step) log.log(train_step_record(step <= 3 ? 1 : 2, step, 0.1, 1e-3, 1.0, 1.0));
    log.log(Record("epoch", 1, 3));
    log.log(Record("eval", 1, 3).set("accuracy", 0.5));
  }
  // A kill in the middle of a write leaves a partial line without its newline.
  ingot::test::write_text(path, ingot::test::read_text(path) + "{\"event\":\"train_step\",\"epo");

  MetricsLog log(path, /*append=*/true);
  CHECK(log.truncate_after(3) == 4);  // steps 4, 5, 6 and the torn line
  auto lines = read_lines(path);
  REQUIRE(lines.size() == 5);
  CHECK(lines[2]["step"] == 3);
  CHECK(lines[3]["event"] == "epoch");
  CHECK(lines[4]["event"] == "eval");

  // Logging continues after the kept lines, as a resumed run does.
  log.log(train_step_record(2, 4, 0.2, 1e-3, 1.0, 1.0));
  lines = read_lines(path);
  REQUIRE(lines.size() == 6);
  CHECK(lines.back()["step"] == 4);
  CHECK(log.truncate_after(100) == 0);
  CHECK(log.truncate_after(0) == 6);
  CHECK(ingot::test::read_text(path).empty());
  std::vector<std::string> leftovers;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    leftovers.push_back(e.path().filename().string());
  CHECK(leftovers == std::vector<std::string>{"metrics.jsonl"});  // no temporary file left behind
}

TEST_CASE("MetricsLog: a path that cannot be opened is an InputError naming it", "[train][metrics]") {
  ingot::test::TempDir dir;
  const auto path = dir.path() / "missing-folder" / "metrics.jsonl";
  try {
    MetricsLog log(path, false);
    FAIL("expected InputError");
  } catch (const ingot::InputError& e) {
    CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
  }
}

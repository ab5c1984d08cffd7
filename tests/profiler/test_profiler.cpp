// Profiler: off by default, nesting and self time, the table, the event cap, the Chrome trace
// (parsed back), and the hooks in dispatch and autograd that name ops and backward nodes.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/profiler.h"
#include "test_support.h"

using namespace ingot;

namespace {

void busy_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

const ProfileRow* find_row(const ProfileReport& r, const std::string& name, const std::string& category,
                           const std::string& detail = "") {
  for (const ProfileRow& row : r.rows)
    if (row.name == name && row.category == category && row.detail == detail) return &row;
  return nullptr;
}

ProfileReport profile(const std::function<void()>& work) {
  Profiler::instance().start();
  work();
  Profiler::instance().stop();
  return Profiler::instance().report();
}

}  // namespace

TEST_CASE("profiler: off by default and after stop, nothing is recorded") {
  REQUIRE_FALSE(Profiler::enabled());
  Profiler::instance().start();
  Profiler::instance().stop();
  { const ProfileScope s("ignored", "test"); }
  const ProfileReport r = Profiler::instance().report();
  REQUIRE(r.rows.empty());
  REQUIRE(r.events.empty());
}

TEST_CASE("profiler: nested scopes give inclusive and exclusive times") {
  const ProfileReport r = profile([] {
    for (int i = 0; i < 3; ++i) {
      const ProfileScope outer("outer", "test");
      busy_for(std::chrono::microseconds(300));
      const ProfileScope inner([] { return std::string("inner") + "-dynamic"; }, "test");
      busy_for(std::chrono::microseconds(600));
    }
  });
  const ProfileRow* outer = find_row(r, "outer", "test");
  const ProfileRow* inner = find_row(r, "inner-dynamic", "test");
  REQUIRE(outer != nullptr);
  REQUIRE(inner != nullptr);
  REQUIRE(outer->calls == 3);
  REQUIRE(inner->calls == 3);
  REQUIRE(inner->total_ns >= 3 * 600'000);
  REQUIRE(outer->total_ns >= inner->total_ns + 3 * 300'000);
  REQUIRE(outer->self_ns == outer->total_ns - inner->total_ns);
  REQUIRE(inner->self_ns == inner->total_ns);
  REQUIRE(r.rows.front().name == "outer");  // sorted by total time
  REQUIRE(r.events.size() == 6);
  int64_t self_sum = 0;
  for (const ProfileRow& row : r.rows) self_sum += row.self_ns;
  REQUIRE(self_sum == outer->total_ns);  // exclusive times add up to the outermost scopes
  REQUIRE(self_sum <= r.wall_ns);

  const std::string table = r.table();
  INFO(table);
  REQUIRE(table.find("inner-dynamic") != std::string::npos);
  REQUIRE(table.find("% wall") != std::string::npos);
  REQUIRE(table.find("event cap") == std::string::npos);
}

TEST_CASE("profiler: next() and end() split a scope into consecutive phases") {
  const ProfileReport r = profile([] {
    ProfileScope phase("forward", "step");
    busy_for(std::chrono::microseconds(100));
    phase.next("backward");
    busy_for(std::chrono::microseconds(100));
    phase.end();
    busy_for(std::chrono::microseconds(100));
  });
  const ProfileRow* f = find_row(r, "forward", "step");
  const ProfileRow* b = find_row(r, "backward", "step");
  REQUIRE(f != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(f->calls == 1);
  REQUIRE(b->calls == 1);
  REQUIRE(f->total_ns + b->total_ns < r.wall_ns);
}

TEST_CASE("profiler: set_current_detail names the innermost open scope") {
  const ProfileReport r = profile([] {
    const ProfileScope outer("outer", "test");
    {
      const ProfileScope inner("inner", "test");
      ProfileScope::set_current_detail("backend-x");
    }
    ProfileScope::set_current_detail("backend-y");
  });
  REQUIRE(find_row(r, "inner", "test", "backend-x") != nullptr);
  REQUIRE(find_row(r, "outer", "test", "backend-y") != nullptr);
  std::stringstream out;
  r.write_chrome_trace(out);
  REQUIRE(out.str().find("\"args\":{\"detail\":\"backend-x\"}") != std::string::npos);
  REQUIRE(r.table().find("backend-y") != std::string::npos);
}

TEST_CASE("profiler: the event cap keeps the table complete and says so") {
  Profiler::instance().set_event_cap(3);
  const ProfileReport r = profile([] {
    for (int i = 0; i < 5; ++i) const ProfileScope s("capped", "test");
  });
  Profiler::instance().set_event_cap(2'000'000);
  REQUIRE(r.events.size() == 3);
  REQUIRE(r.dropped_events == 2);
  REQUIRE(find_row(r, "capped", "test")->calls == 5);
  REQUIRE(r.table().find("event cap was reached") != std::string::npos);
}

TEST_CASE("profiler: the Chrome trace is valid JSON with escaped names, one tid per thread") {
  const ProfileReport r = profile([] {
    const ProfileScope s("quote\" back\\slash\ttab", "test");
    std::thread t([] { const ProfileScope w("worker", "test"); });
    t.join();
  });
  std::stringstream out;
  r.write_chrome_trace(out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const auto& events = j.at("traceEvents");
  int complete = 0;
  std::set<int> tids;
  bool escaped = false;
  for (const auto& e : events) {
    if (e.at("ph") != "X") continue;
    ++complete;
    REQUIRE(e.at("pid") == 1);
    REQUIRE(e.at("ts").get<double>() >= 0.0);
    REQUIRE(e.at("dur").get<double>() >= 0.0);
    tids.insert(e.at("tid").get<int>());
    escaped = escaped || e.at("name") == "quote\" back\\slash\ttab";
  }
  REQUIRE(complete == 2);
  REQUIRE(tids.size() == 2);
  REQUIRE(escaped);
}

TEST_CASE("profiler: ops from dispatch and backward nodes appear by name") {
  Tensor x = test::random_tensor(Shape{4, 5}, DType::F32, 1);
  x.set_requires_grad(true);
  const ProfileReport r = profile([&] {
    const Tensor y = sum(mul(neg(x), x));
    y.backward();
  });
  INFO(r.table());
  REQUIRE(find_row(r, "neg", "op", "reference") != nullptr);  // detail: the backend that ran it
  REQUIRE(find_row(r, "mul", "op", "reference") != nullptr);
  bool backward_row = false;
  for (const ProfileRow& row : r.rows) backward_row = backward_row || (row.category == "backward" && row.calls > 0);
  REQUIRE(backward_row);
}

TEST_CASE("profiler: save writes profile.txt and a trace that parses") {
  const ProfileReport r = profile([] { const ProfileScope s("saved", "test"); });
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ingot_test_profiler_save";
  std::filesystem::remove_all(dir);
  r.save(dir / "nested");
  std::ifstream txt(dir / "nested" / "profile.txt");
  std::stringstream text;
  text << txt.rdbuf();
  REQUIRE(text.str().find("saved") != std::string::npos);
  std::ifstream trace(dir / "nested" / "trace.json");
  REQUIRE(nlohmann::json::parse(trace).at("traceEvents").size() == 2);  // the event and a thread name
  std::filesystem::remove_all(dir);
}

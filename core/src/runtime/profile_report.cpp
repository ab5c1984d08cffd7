// Profile reports: the per-name time table and the Chrome trace JSON (written as a stream, since
// a long run holds millions of events), and both saved into a folder.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <ostream>

#include "ingot/base/error.h"
#include "ingot/runtime/profiler.h"

namespace ingot {
namespace {

/// `s` as the body of a JSON string.
void write_json_string(std::ostream& out, const char* s) {
  out << '"';
  for (const char* p = s; *p != '\0'; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      out << '\\' << *p;
    } else if (c < 0x20) {
      out << fmt::format("\\u{:04x}", c);
    } else {
      out << *p;
    }
  }
  out << '"';
}

/// Microseconds with nanosecond resolution, as Chrome's trace format expects.
std::string micros(int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, static_cast<int>(ns % 1000)); }

}  // namespace

std::string ProfileReport::table(size_t max_rows) const {
  const double wall = static_cast<double>(std::max<int64_t>(wall_ns, 1));
  size_t name_width = 4, detail_width = 6;
  const size_t shown = max_rows == 0 ? rows.size() : std::min(rows.size(), max_rows);
  for (size_t i = 0; i < shown; ++i) {
    name_width = std::max(name_width, rows[i].name.size());
    detail_width = std::max(detail_width, rows[i].detail.size());
  }
  std::string s = fmt::format(
      "profiled wall time {:.3f} ms; times are inclusive (total) and exclusive (self) of "
      "nested scopes; an op's detail is the backend that ran it\n",
      static_cast<double>(wall_ns) / 1e6);
  s += fmt::format("{:<{}}  {:<8}  {:<{}}  {:>9}  {:>11}  {:>11}  {:>7}  {:>10}\n", "name", name_width, "category",
                   "detail", detail_width, "calls", "total ms", "self ms", "% wall", "mean us");
  for (size_t i = 0; i < shown; ++i) {
    const ProfileRow& r = rows[i];
    s += fmt::format("{:<{}}  {:<8}  {:<{}}  {:>9}  {:>11.3f}  {:>11.3f}  {:>6.1f}%  {:>10.2f}\n", r.name, name_width,
                     r.category, r.detail, detail_width, r.calls, static_cast<double>(r.total_ns) / 1e6,
                     static_cast<double>(r.self_ns) / 1e6, 100.0 * static_cast<double>(r.total_ns) / wall,
                     static_cast<double>(r.total_ns) / 1e3 / static_cast<double>(std::max<int64_t>(r.calls, 1)));
  }
  if (shown < rows.size()) s += fmt::format("... {} more rows\n", rows.size() - shown);
  if (dropped_events > 0)
    s += fmt::format("note: the event cap was reached: {} events are counted above but missing from the trace\n",
                     dropped_events);
  return s;
}

void ProfileReport::write_chrome_trace(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  uint32_t threads = 0;
  bool first = true;
  for (const ProfileEvent& e : events) {
    threads = std::max(threads, e.thread + 1);
    out << (first ? "\n" : ",\n") << "{\"name\":";
    write_json_string(out, e.name);
    out << ",\"cat\":";
    write_json_string(out, e.category);
    out << ",\"ph\":\"X\",\"ts\":" << micros(e.start_ns) << ",\"dur\":" << micros(e.duration_ns)
        << ",\"pid\":1,\"tid\":" << e.thread;
    if (*e.detail != '\0') {
      out << ",\"args\":{\"detail\":";
      write_json_string(out, e.detail);
      out << "}";
    }
    out << "}";
    first = false;
  }
  for (uint32_t t = 0; t < threads; ++t) {
    out << (first ? "\n" : ",\n") << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << t
        << ",\"args\":{\"name\":\"" << (t == 0 ? "ingot main" : fmt::format("ingot thread {}", t)) << "\"}}";
    first = false;
  }
  out << "\n]}\n";
}

void ProfileReport::save(const std::filesystem::path& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the profile folder: {}", dir.string(), ec.message()));
  const auto write = [&](const std::filesystem::path& path, const auto& body) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("{}: cannot write the profile file", path.string()));
    body(out);
    out.flush();
    if (!out) throw Error(fmt::format("{}: writing the profile failed (disk full?)", path.string()));
  };
  write(dir / "profile.txt", [&](std::ostream& out) { out << table(); });
  write(dir / "trace.json", [&](std::ostream& out) { write_chrome_trace(out); });
}

ProfileReport save_profile(const std::filesystem::path& dir, std::ostream& out, size_t rows_shown) {
  Profiler::instance().stop();
  ProfileReport report = Profiler::instance().report();
  report.save(dir);
  out << "profile:\n" << report.table(rows_shown);
  out << fmt::format("profile: {} and {} (open in https://ui.perfetto.dev or chrome://tracing)\n",
                     (dir / "profile.txt").string(), (dir / "trace.json").string());
  return report;
}

}  // namespace ingot

// Profiler: a process-wide recorder of timed scopes (ops, backward nodes, training-step phases)
// into per-thread buffers, reported as a per-name time table and a Chrome trace JSON.
// Off by default; a disabled ProfileScope costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <vector>

namespace ingot {

namespace detail {
/// Read by every ProfileScope; written only by Profiler::start / stop.
inline std::atomic<bool> g_profiler_on{false};
}  // namespace detail

/// One finished scope. `name` and `category` point at static or interned strings.
struct ProfileEvent {
  const char* name = "";
  const char* category = "";
  const char* detail = "";  ///< set while open (ops: the backend that ran them), "" if none
  uint32_t thread = 0;      ///< 0 for the first thread that recorded, 1 for the next, ...
  int64_t start_ns = 0;     ///< since Profiler::start
  int64_t duration_ns = 0;
  int64_t self_ns = 0;  ///< duration minus that of the scopes nested directly inside
};

/// Totals of one (name, category) over the profiled period.
struct ProfileRow {
  std::string name;
  std::string category;
  std::string detail;
  int64_t calls = 0;
  int64_t total_ns = 0;  ///< inclusive of nested scopes
  int64_t self_ns = 0;   ///< exclusive
};

/// What a profiled period recorded.
struct ProfileReport {
  std::vector<ProfileRow> rows;      ///< sorted by total time, longest first
  std::vector<ProfileEvent> events;  ///< stored events (at most the cap), by thread then start
  int64_t wall_ns = 0;               ///< from start() to stop() (or to the report)
  int64_t dropped_events = 0;        ///< events past the cap: counted in `rows`, absent from `events`

  /// The table: name, category, detail, calls, total ms, self ms, % of wall time, mean us.
  std::string table(size_t max_rows = 0) const;
  /// {"traceEvents":[{"name":..,"cat":..,"ph":"X","ts":us,"dur":us,"pid":1,"tid":..},...]}
  void write_chrome_trace(std::ostream& out) const;
  /// Writes DIR/profile.txt and DIR/trace.json (creating DIR); throws ingot::Error naming a path
  /// that cannot be written.
  void save(const std::filesystem::path& dir) const;
};

/// The process's profiler. Report only while no scope is being recorded (after stop()).
class Profiler {
 public:
  static Profiler& instance();
  static bool enabled() noexcept { return detail::g_profiler_on.load(std::memory_order_relaxed); }

  /// Clears earlier events and starts recording.
  void start();
  /// Stops recording; the events stay until the next start().
  void stop();
  /// Stored events at most (default 2,000,000); later ones are only counted in the table.
  void set_event_cap(int64_t cap);
  ProfileReport report() const;

 private:
  Profiler() = default;
};

/// Stops the profiler, saves its report into `dir` (profile.txt, trace.json), prints the table's
/// first rows and the two paths to `out`, and returns the report.
ProfileReport save_profile(const std::filesystem::path& dir, std::ostream& out, size_t rows_shown = 15);

/// Times its own lifetime when the profiler is on. `name` must outlive the report (a string
/// literal or an op table name); a callable giving a std::string is called (and the result
/// interned) only when the profiler is on.
class ProfileScope {
 public:
  explicit ProfileScope(const char* name, const char* category = "") noexcept : category_(category) {
    if (Profiler::enabled()) begin(name, category);
  }
  template <class NameFn, class = std::enable_if_t<std::is_invocable_v<NameFn>>>
  ProfileScope(NameFn&& name_fn, const char* category) : category_(category) {
    if (Profiler::enabled()) {
      if constexpr (std::is_convertible_v<std::invoke_result_t<NameFn>, const char*>) {
        begin(name_fn(), category);
      } else {
        begin(intern(std::string(name_fn())), category);
      }
    }
  }
  ~ProfileScope() {
    if (active_) end();
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

  /// Sets the detail of the innermost open scope of this thread (dispatch: the backend's name);
  /// `detail` must outlive the report.
  static void set_current_detail(const char* detail) noexcept {
    if (Profiler::enabled()) set_detail_slow(detail);
  }

  /// Ends this scope now (the destructor then does nothing).
  void end() noexcept;
  /// Ends this scope and starts another of the same category (consecutive phases of a step).
  void next(const char* name) noexcept;

 private:
  void begin(const char* name, const char* category) noexcept;
  static const char* intern(const std::string& name);
  static void set_detail_slow(const char* detail) noexcept;
  const char* name_ = "";
  const char* category_ = "";
  const char* detail_ = "";
  int64_t start_ns_ = 0;
  bool active_ = false;
};

}  // namespace ingot

// MetricsLog: runs/<name>/metrics.jsonl, one JSON object per line, appended and flushed line by
// line so a killed run keeps what it logged; truncate_after(step) drops what a resume redoes.
// Attached sinks (metrics.csv, TensorBoard events) hear every record the file gets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace ingot::train {

class MemoryWatch;

/// A JSON text embedded as is (e.g. ConfusionMatrix::to_json()); it must be valid JSON.
struct RawJson {
  std::string text;
};

/// A flat JSON object with keys in insertion order: scalars, strings or embedded JSON.
/// Non-finite doubles are written as null (JSON has no NaN).
class Record {
 public:
  using Value = std::variant<bool, int64_t, double, std::string, RawJson>;

  Record() = default;
  /// The usual first fields of a metrics line: {"event": ..., "epoch": ..., "step": ...}.
  Record(std::string event, int64_t epoch, int64_t step);

  /// Sets (or replaces) `key`. Integers are stored as int64, floating values as double.
  template <class T>
  Record& set(const std::string& key, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      return put(key, Value(value));
    } else if constexpr (std::is_integral_v<T>) {
      return put(key, Value(static_cast<int64_t>(value)));
    } else if constexpr (std::is_floating_point_v<T>) {
      return put(key, Value(static_cast<double>(value)));
    } else if constexpr (std::is_same_v<std::decay_t<T>, RawJson>) {
      return put(key, Value(std::move(value)));
    } else {
      return put(key, Value(std::string(value)));
    }
  }

  const std::vector<std::pair<std::string, Value>>& fields() const { return fields_; }
  /// The value of `key`, or nullptr when the record has none.
  const Value* find(const std::string& key) const;
  /// The value of `key` as a number (an integer, a double or a bool); nullopt when absent or not
  /// a number.
  std::optional<double> number(const std::string& key) const;
  /// The "event" field; empty when absent.
  std::string event() const;
  /// One line of JSON, no trailing newline. Throws Error when a RawJson field does not parse.
  std::string to_json() const;

 private:
  Record& put(const std::string& key, Value value);
  std::vector<std::pair<std::string, Value>> fields_;
};

/// {"event":"train_step","epoch":e,"step":s,"loss":..,"lr":..,"images_per_s":..,"time_s":..}
Record train_step_record(int64_t epoch, int64_t step, double loss, double lr, double images_per_s, double time_s);

/// Something else that records the run's metrics (metrics.csv, a TensorBoard event file): a
/// MetricsLog forwards each record it writes, as written (with "time" and the memory fields).
class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  /// One record; a sink keeps the events it knows and ignores the others.
  virtual void write(const Record& record) = 0;
  /// Pushes what was written to the file (called after every record but train_step).
  virtual void flush() = 0;
};

/// Wall-clock seconds since the Unix epoch, rounded down to the millisecond.
double unix_time_now();

class MetricsLog {
 public:
  /// Opens `path` for appending, creating it (and nothing else) if needed. `append` = false
  /// empties an existing file first (a new run); true keeps it (a resume: call truncate_after next).
  MetricsLog(std::filesystem::path path, bool append);
  /// A log that keeps nothing (the ranks of a distributed run other than rank 0).
  MetricsLog() = default;
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  /// Appends one line with a single write(2), so a kill leaves at most one torn last line.
  /// A record without a "time" field gets one (unix_time_now(), after the record's own fields).
  /// Events other than "train_step" (epoch ends, evals, summaries: rare and worth keeping) are
  /// also fsync'ed; call sync() to force it for any line. When watching memory, "train_step" and
  /// "epoch" records get mem_allocated_mb, mem_reserved_mb and mem_peak_mb (MiB) of the model's
  /// device; an epoch's peak is its own (the progress bar restarts it when the epoch starts).
  void log(const Record& record);
  /// Forwards every later record to `sink` too. Ignored by a log that keeps nothing.
  void add_sink(std::unique_ptr<MetricsSink> sink);
  /// The memory the records report; nullptr (the default): none.
  void watch_memory(MemoryWatch* watch) { memory_ = watch; }
  /// fsync(2) the file.
  void sync();
  /// Keeps the lines whose "step" is <= `step` (and lines without a step), drops the later ones
  /// and any line that is not valid JSON (a line torn by a kill). The file is rewritten
  /// atomically (temporary file, fsync, rename). Returns the number of lines dropped.
  int64_t truncate_after(int64_t step);

  const std::filesystem::path& path() const { return path_; }

 private:
  void open(bool append);
  std::filesystem::path path_;
  int fd_ = -1;
  MemoryWatch* memory_ = nullptr;
  std::vector<std::unique_ptr<MetricsSink>> sinks_;
};

}  // namespace ingot::train

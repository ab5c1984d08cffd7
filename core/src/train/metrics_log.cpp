// MetricsLog: Record's JSON (nlohmann, ordered keys) and the append-only metrics file, written
// with POSIX calls so each line is one write(2) and epoch ends can be fsync'ed.
#include "ingot/train/metrics_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/io/atomic_write.h"
#include "ingot/train/memory_watch.h"

namespace ingot::train {
namespace {

using Json = nlohmann::ordered_json;

Json to_json_value(const Record::Value& v) {
  return std::visit(
      [](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, RawJson>) {
          Json parsed = Json::parse(x.text, nullptr, /*allow_exceptions=*/false);
          INGOT_CHECK(!parsed.is_discarded(), "metrics record: embedded JSON does not parse: {:.80}", x.text);
          return parsed;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::isfinite(x) ? Json(x) : Json(nullptr);
        } else {
          return Json(x);
        }
      },
      v);
}

}  // namespace

Record::Record(std::string event, int64_t epoch, int64_t step) {
  set("event", std::move(event));
  set("epoch", epoch);
  set("step", step);
}

Record& Record::put(const std::string& key, Value value) {
  for (auto& [k, v] : fields_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  fields_.emplace_back(key, std::move(value));
  return *this;
}

const Record::Value* Record::find(const std::string& key) const {
  for (const auto& [k, v] : fields_)
    if (k == key) return &v;
  return nullptr;
}

std::optional<double> Record::number(const std::string& key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* d = std::get_if<double>(v)) return *d;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  if (const auto* b = std::get_if<bool>(v)) return *b ? 1.0 : 0.0;
  return std::nullopt;
}

std::string Record::event() const {
  const Value* v = find("event");
  const auto* s = v != nullptr ? std::get_if<std::string>(v) : nullptr;
  return s != nullptr ? *s : std::string();
}

std::string Record::to_json() const {
  Json j = Json::object();
  for (const auto& [k, v] : fields_) j[k] = to_json_value(v);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Record train_step_record(int64_t epoch, int64_t step, double loss, double lr, double images_per_s, double time_s) {
  Record r("train_step", epoch, step);
  r.set("loss", loss).set("lr", lr).set("images_per_s", images_per_s).set("time_s", time_s);
  return r;
}

double unix_time_now() {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  return static_cast<double>(ms.count()) / 1000.0;
}

MetricsLog::MetricsLog(std::filesystem::path path, bool append) : path_(std::move(path)) { open(append); }

MetricsLog::~MetricsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsLog::open(bool append) {
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (append ? 0 : O_TRUNC);
  require_regular_file(path_);  // (open() would wait for a reader of a FIFO)
  fd_ = ::open(path_.c_str(), flags, 0644);
  INGOT_CHECK_AS(fd_ >= 0, InputError, "{}: cannot open the metrics log: {}", path_.string(), std::strerror(errno));
}

void MetricsLog::log(const Record& record) {
  if (fd_ < 0) return;  // a log that keeps nothing
  const std::string event = record.event();
  const bool is_step = event == "train_step";
  Record with = record;
  if (memory_ != nullptr && (is_step || event == "epoch")) {
    memory_->sample();
    const MemoryStats m = memory_->stats();
    with.set("mem_allocated_mb", to_mib(m.allocated))
        .set("mem_reserved_mb", to_mib(m.reserved))
        .set("mem_peak_mb", to_mib(m.peak_allocated));
  }
  if (with.find("time") == nullptr) with.set("time", unix_time_now());
  const std::string line = with.to_json() + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    INGOT_CHECK(n > 0, "{}: writing a metrics line failed: {}", path_.string(), std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  if (!is_step) sync();
  for (const auto& sink : sinks_) {
    sink->write(with);
    if (!is_step) sink->flush();
  }
}

void MetricsLog::add_sink(std::unique_ptr<MetricsSink> sink) {
  if (fd_ >= 0 && sink != nullptr) sinks_.push_back(std::move(sink));
}

void MetricsLog::sync() {
  if (fd_ < 0) return;
  INGOT_CHECK(::fsync(fd_) == 0, "{}: fsync failed: {}", path_.string(), std::strerror(errno));
}

int64_t MetricsLog::truncate_after(int64_t step) {
  std::istringstream in(InputFile(path_).read_all(UINT64_MAX, "a metrics log"));
  std::ostringstream kept;
  std::string line;
  int64_t dropped = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool valid = !j.is_discarded() && j.is_object();
    const bool later = valid && j.contains("step") && j["step"].is_number() && j["step"].get<double>() > step;
    if (!valid || later) {
      ++dropped;
      continue;
    }
    kept << line << "\n";
  }
  ::close(fd_);
  fd_ = -1;
  try {
    io::atomic_write(path_, kept.str());
  } catch (...) {
    open(/*append=*/true);  // keep logging to the old file rather than to nothing
    throw;
  }
  open(/*append=*/true);
  return dropped;
}

}  // namespace ingot::train

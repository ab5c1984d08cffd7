// The logger: level from INGOT_LOG (read once) unless set_log_level overrides it; writes whole
// lines under a mutex so messages from several threads do not interleave.
#include "ingot/runtime/logging.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace ingot {
namespace {

constexpr int kUnset = -1;
std::atomic<int> g_level{kUnset};

LogLevel level_from_env() {
  const char* env = std::getenv("INGOT_LOG");
  if (env == nullptr || *env == '\0') return LogLevel::Warn;
  if (auto parsed = parse_log_level(env)) return *parsed;
  std::fprintf(stderr, "ingot: warn: INGOT_LOG='%s' is not one of debug, info, warn, error, off; using warn\n", env);
  return LogLevel::Warn;
}

}  // namespace

LogLevel log_level() {
  int v = g_level.load(std::memory_order_relaxed);
  if (v == kUnset) {
    int expected = kUnset;
    g_level.compare_exchange_strong(expected, static_cast<int>(level_from_env()));
    v = g_level.load(std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(v);
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

std::optional<LogLevel> parse_log_level(std::string_view text) {
  std::string s;
  for (char c : text) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (s == "debug") return LogLevel::Debug;
  if (s == "info") return LogLevel::Info;
  if (s == "warn" || s == "warning") return LogLevel::Warn;
  if (s == "error") return LogLevel::Error;
  if (s == "off" || s == "none") return LogLevel::Off;
  return std::nullopt;
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
    case LogLevel::Off: return "off";
  }
  return "?";
}

void log_message(LogLevel level, std::string_view source, std::string_view message) {
  if (level < log_level() || level == LogLevel::Off) return;
  static std::mutex mu;
  std::string line = fmt::format("ingot: {}: ", log_level_name(level));
  if (!source.empty()) line += fmt::format("[{}] ", source);
  line.append(message);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(mu);
  std::fputs(line.c_str(), stderr);
}

}  // namespace ingot

// A tiny logger for the CLI, the plugin loader and plugins (through the host API): one line per
// message on stderr, "ingot: warn: ...", filtered by a level from INGOT_LOG or set_log_level.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace ingot {

enum class LogLevel : int { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

/// Current level: set_log_level() if called, else INGOT_LOG (debug|info|warn|error|off), else warn.
LogLevel log_level();
void set_log_level(LogLevel level);
/// Parses "debug", "info", "warn"/"warning", "error", "off" (case-insensitive).
std::optional<LogLevel> parse_log_level(std::string_view text);
std::string_view log_level_name(LogLevel level);

/// Writes "ingot: <level>: [<source>] <message>" when `level` passes the filter; `source` may be empty.
void log_message(LogLevel level, std::string_view source, std::string_view message);

template <class... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::Debug) log_message(LogLevel::Debug, {}, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::Info) log_message(LogLevel::Info, {}, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::Warn) log_message(LogLevel::Warn, {}, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::Error) log_message(LogLevel::Error, {}, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ingot

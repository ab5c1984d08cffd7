// Ingot's exceptions: each carries context and the process exit code it maps to.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ingot {

/// Exit codes of the CLI (docs/architecture.md: errors and exit codes).
enum class ExitCode : int { Ok = 0, Runtime = 1, Usage = 2, BackendMissing = 3, Interrupted = 130, Terminated = 143 };

/// Base of every Ingot error; `what()` is one line: what, where, what to do.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg, ExitCode code = ExitCode::Runtime)
      : std::runtime_error(msg), code_(code) {}
  ExitCode exit_code() const { return code_; }

 private:
  ExitCode code_;
};

/// Invalid YAML, unknown key, wrong type or range; bad user input in general (exit 2).
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& msg) : Error(msg, ExitCode::Usage) {}
};
/// Corrupt or missing input file (dataset, checkpoint) (exit 2).
class InputError : public Error {
 public:
  explicit InputError(const std::string& msg) : Error(msg, ExitCode::Usage) {}
};
/// Shapes that do not fit an op.
class ShapeError : public Error {
 public:
  explicit ShapeError(const std::string& msg) : Error(msg) {}
};
/// A dtype an op does not accept.
class DTypeError : public Error {
 public:
  explicit DTypeError(const std::string& msg) : Error(msg) {}
};
/// A plugin that cannot be loaded or that failed inside a call.
class PluginError : public Error {
 public:
  explicit PluginError(const std::string& msg) : Error(msg) {}
};
/// A required backend is missing or cannot run here (exit 3).
class BackendMissingError : public Error {
 public:
  explicit BackendMissingError(const std::string& msg) : Error(msg, ExitCode::BackendMissing) {}
};
/// An allocation failed.
class OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(const std::string& msg) : Error(msg) {}
};
/// Training reached a non-finite loss, gradient or weight (exit 1); nothing was saved from it.
class NonFiniteError : public Error {
 public:
  explicit NonFiniteError(const std::string& msg) : Error(msg) {}
};
/// A wait (key-value store, collective) ran out of time.
class TimeoutError : public Error {
 public:
  explicit TimeoutError(const std::string& msg) : Error(msg) {}
};

}  // namespace ingot

/// INGOT_CHECK(cond, ErrorType, "fmt", args...): throws ErrorType with the formatted message.
#define INGOT_CHECK_AS(cond, ErrorType, ...)                   \
  do {                                                         \
    if (!(cond)) throw ErrorType(fmt::format(__VA_ARGS__));    \
  } while (0)
#define INGOT_CHECK(cond, ...) INGOT_CHECK_AS(cond, ::ingot::Error, __VA_ARGS__)
#define INGOT_CHECK_SHAPE(cond, ...) INGOT_CHECK_AS(cond, ::ingot::ShapeError, __VA_ARGS__)

// Config loading: file -> YAML (syntax errors with line:column) -> root schema check, and typed
// lookups by dotted path.
#include "ingot/config/config.h"
#include "ingot/config/schema.h"

#include <filesystem>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace ingot::config {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(cur);
  return parts;
}

}  // namespace

YAML::Node load_yaml(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw ConfigError(fmt::format("{}: config file not found", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(fmt::format("{}: is a folder, expected a YAML config file", path));
  }
  return parse_yaml(read_file(path, kMaxConfigBytes, "a config file"), path);
}

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    std::string msg = e.msg;  // yaml-cpp may quote the offending byte itself
    std::erase_if(msg, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    throw ConfigError(fmt::format("{}:{}:{}: YAML syntax error: {}", file, e.mark.line + 1, e.mark.column + 1, msg));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: cannot parse YAML: {}", file, e.what()));
  }
}

Config Config::load(const std::string& path, const Schema& schema) { return from_yaml(load_yaml(path), path, schema); }

Config Config::parse(const std::string& text, const Schema& schema, const std::string& file) {
  return from_yaml(parse_yaml(text, file), file, schema);
}

Config Config::from_yaml(YAML::Node root, const std::string& file, const Schema& schema) {
  if (!root.IsDefined() || root.IsNull()) throw ConfigError(fmt::format("{}: the config is empty", file));
  schema.validate(root, file);
  return Config(root, file);
}

std::optional<int64_t> Config::seed() const {
  if (!has("seed")) return std::nullopt;
  return get_int("seed", 0);
}

std::optional<int> Config::threads() const {
  if (!has("threads")) return std::nullopt;
  return static_cast<int>(get_int("threads", 1));
}

YAML::Node Config::node(const std::string& path) const {
  // yaml-cpp's operator[] on a non-const node inserts; walk const copies so lookups never modify root_.
  std::vector<YAML::Node> chain{root_};
  for (const std::string& part : split_path(path)) {
    const YAML::Node& cur = chain.back();
    if (!cur.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node next = static_cast<const YAML::Node&>(cur)[part];
    if (!next.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    chain.push_back(next);
  }
  return chain.back();
}

bool Config::has(const std::string& path) const {
  const YAML::Node n = node(path);
  return n.IsDefined() && !n.IsNull();
}

int64_t Config::get_int(const std::string& path, int64_t fallback) const {
  if (!has(path)) return fallback;
  try {
    return node(path).as<int64_t>();
  } catch (const YAML::Exception&) {
    throw ConfigError(fmt::format("{}: '{}' must be an integer, got {}", where(path), path, quote_value(node(path).Scalar())));
  }
}

double Config::get_float(const std::string& path, double fallback) const {
  if (!has(path)) return fallback;
  try {
    return node(path).as<double>();
  } catch (const YAML::Exception&) {
    throw ConfigError(fmt::format("{}: '{}' must be a number, got {}", where(path), path, quote_value(node(path).Scalar())));
  }
}

std::string Config::get_string(const std::string& path, const std::string& fallback) const {
  if (!has(path)) return fallback;
  const YAML::Node n = node(path);
  if (!n.IsScalar()) throw ConfigError(fmt::format("{}: '{}' must be a string", where(path), path));
  return n.Scalar();
}

bool Config::get_bool(const std::string& path, bool fallback) const {
  if (!has(path)) return fallback;
  try {
    return node(path).as<bool>();
  } catch (const YAML::Exception&) {
    throw ConfigError(fmt::format("{}: '{}' must be true or false, got {}", where(path), path, quote_value(node(path).Scalar())));
  }
}

std::string Config::where(const std::string& path) const {
  const YAML::Node n = node(path);
  return n.IsDefined() ? config::where(file_, n) : file_;
}

}  // namespace ingot::config

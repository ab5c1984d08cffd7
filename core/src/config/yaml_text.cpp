// emit_yaml: a copy of the tree with yaml-cpp's 17-digit doubles shortened, emitted. Shortening at
// emission covers every value put into a tree as a double (optimizer, schedule and data defaults,
// extensions' own) without each writer formatting its numbers.
#include "ingot/config/yaml_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "ingot/base/error.h"

namespace ingot::config {
namespace {

void shorten(YAML::Node node) {
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    if (std::string s = shortest_number_text(text); s != text) node = s;
  } else if (node.IsSequence()) {
    for (YAML::Node child : node) shorten(child);
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) shorten(it->second);
  }
}

}  // namespace

std::string shortest_number_text(const std::string& text) {
  // Integers stay as they are (an int64 key must not turn into 1e+16).
  if (text.find_first_of(".eE") == std::string::npos) return text;
  double v = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return text;
  // Only yaml-cpp's own spelling (std::stream at max_digits10, i.e. %.17g): a number a person
  // wrote ("1e-3", "0.50") stays as written.
  if (fmt::format("{:.17g}", v) != text) return text;
  return fmt::format("{}", v);
}

std::string emit_yaml(const YAML::Node& node) {
  YAML::Node copy = YAML::Clone(node);
  shorten(copy);
  YAML::Emitter out;
  out << copy;
  INGOT_CHECK(out.good(), "cannot emit YAML: {}", out.GetLastError());
  return out.c_str();
}

}  // namespace ingot::config

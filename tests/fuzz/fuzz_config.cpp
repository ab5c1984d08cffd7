// Fuzz target: YAML config text -> Config::parse against the pipeline schema (YAML syntax, the
// schema's types, ranges, choices and required keys), then the typed accessors. Lines of the form
// "#--set KEY=VALUE" (YAML comments) are applied as command-line overrides and the result is
// validated again. Every refusal must be a ConfigError.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/config/config.h"
#include "ingot/config/overrides.h"
#include "ingot/train/pipeline_schema.h"

namespace {

using ingot::config::Config;

std::vector<std::string> override_lines(const std::string& text) {
  constexpr const char* kPrefix = "#--set ";
  const size_t prefix_len = std::strlen(kPrefix);
  std::vector<std::string> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    if (text.compare(from, prefix_len, kPrefix) == 0 && end - from > prefix_len) {
      out.push_back(text.substr(from + prefix_len, end - from - prefix_len));
    }
    from = end + 1;
  }
  return out;
}

void use(const Config& cfg) {
  (void)cfg.name();
  (void)cfg.backend();
  (void)cfg.seed();
  (void)cfg.threads();
  (void)cfg.where("name");
  (void)cfg.where("train.epochs");
  (void)cfg.get_int("smoke.matmul_size", 0);
  (void)cfg.get_string("data.dataset", "");
  (void)cfg.has("model.layers");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ingot::config::Schema schema = ingot::train::pipeline_schema();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Config cfg = Config::parse(text, schema, "fuzz.yaml");
    use(cfg);
    const std::vector<std::string> sets = override_lines(text);
    if (!sets.empty()) {
      YAML::Node root = YAML::Clone(cfg.root());
      ingot::config::apply_overrides(root, sets, schema);
      use(Config::from_yaml(root, "fuzz.yaml", schema));
    }
  } catch (const ingot::ConfigError&) {
    // The documented refusal of a bad config.
  }
  return 0;
}

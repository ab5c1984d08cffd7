// docs/config.md covers every key of the pipeline schema: each key path (data.validation.fraction)
// appears in backticks, as the whole path or as a dotted suffix of it (`validation.fraction` in the
// data table). A key added to the code without a line in the docs fails here, naming the key.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config_paths.h"
#include "ingot/train/pipeline_schema.h"

namespace {

void collect(const ingot::config::Schema& schema, const std::string& prefix, std::vector<std::string>& out) {
  for (const ingot::config::Field& f : schema.fields()) {
    const std::string path = prefix.empty() ? f.key : prefix + "." + f.key;
    if (f.section && !f.section->fields().empty())
      collect(*f.section, path, out);  // (a section is documented through its keys)
    else
      out.push_back(path);
  }
}

/// Whether `doc` names `path` in backticks: the whole path or a dotted suffix of it (the tables
/// of a section name its keys without the section: `validation.fraction` under data).
bool documented(const std::string& doc, std::string path) {
  while (true) {
    if (doc.find("`" + path + "`") != std::string::npos || doc.find("`" + path + ":") != std::string::npos)
      return true;
    const size_t dot = path.find('.');
    if (dot == std::string::npos) return false;
    path = path.substr(dot + 1);
  }
}

}  // namespace

TEST_CASE("docs/config.md names every key of the pipeline schema", "[configs][docs]") {
  std::ifstream in(ingot::test::source_dir() + "/docs/config.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::vector<std::string> paths;
  collect(ingot::train::pipeline_schema(), "", paths);
  REQUIRE(paths.size() > 50);
  std::string missing;
  for (const std::string& p : paths)
    if (!documented(doc, p)) missing += " " + p;
  INFO("keys without a line in docs/config.md:" << missing);
  CHECK(missing.empty());
}

// The dataset registry: built-ins listed; a new type is chosen by data.dataset, reads its own
// data.<name> section (checked against its keys) and feeds the loaders.
#include <catch2/catch.hpp>

#include "ingot/data/data_config.h"
#include "ingot/data/dataset_registry.h"

using namespace ingot;
using namespace ingot::data;

TEST_CASE("dataset registry: a new dataset type reads its section and feeds the loaders", "[data][registry]") {
  DatasetRegistry& r = dataset_registry();
  CHECK(r.has("fashion_mnist"));
  CHECK(r.has("synthetic"));
  if (!r.has("tiny_test")) {
    config::Schema keys;
    keys.integer("samples", 1);
    r.add({"tiny_test", keys,
           [](const YAML::Node& section, const std::string&, const DataConfig&, uint64_t seed) {
             SyntheticSpec spec;
             spec.size = section["samples"] ? section["samples"].as<int64_t>() : 8;
             spec.height = spec.width = 2;
             spec.classes = 2;
             return DatasetSplits{synthetic_dataset(spec, seed, 0), synthetic_dataset(spec, seed, 1), {"no", "yes"}};
           },
           "test"});
  }
  const YAML::Node node = YAML::Load("{dataset: tiny_test, batch_size: 4, workers: 0, tiny_test: {samples: 12}}");
  data_schema().validate(node, "data.yaml", "data");
  const DataConfig c = parse_data_config(node, "data.yaml");
  const DataLoaders l = make_data_loaders(c, 1);
  CHECK(l.train->dataset().size() == 12);
  CHECK(l.train->num_batches() == 3);
  CHECK(l.class_names == std::vector<std::string>{"no", "yes"});
  REQUIRE_THROWS_WITH(data_schema().validate(YAML::Load("{dataset: tiny_test, tiny_test: {sample: 3}}"), "d.yaml", "data"),
                      Catch::Contains("unknown key 'sample'") && Catch::Contains("did you mean 'samples'"));
  REQUIRE_THROWS_WITH(data_schema().validate(YAML::Load("{dataset: tiny_tset}"), "d.yaml", "data"),
                      Catch::Contains("tiny_test"));
}

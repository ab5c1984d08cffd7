// The data: section: schema checks, defaults, resolved YAML, and loaders built from it.
#include <catch2/catch.hpp>

#include "data_test_util.h"
#include "ingot/data/data_config.h"
#include "ingot/data/fashion_mnist.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;

namespace {

YAML::Node checked(const std::string& text) {
  const YAML::Node node = YAML::Load(text);
  data_schema().validate(node, "cfg.yaml", "data");
  return node;
}

std::string config_error_of(const std::string& text) {
  try {
    parse_data_config(checked(text), "cfg.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

}  // namespace

TEST_CASE("data config: defaults and a full section", "[data][config]") {
  const DataConfig d = parse_data_config(YAML::Node());
  CHECK(d.dataset == "fashion_mnist");
  CHECK(d.batch_size == 64);
  CHECK(d.shuffle);
  const DataConfig c = parse_data_config(checked(R"(
dataset: synthetic
batch_size: 32
eval_batch_size: 100
workers: 1
prefetch: 3
shuffle: false
drop_last: true
normalize: {mean: [0.1, 0.2, 0.3], std: 0.5}
augment: {random_crop: {padding: 4}, hflip: true}
synthetic: {size: 50, test_size: 20, channels: 3, height: 8, width: 9, classes: 5}
)"));
  CHECK(c.dataset == "synthetic");
  CHECK((c.batch_size == 32 && c.eval_batch_size == 100 && c.workers == 1 && c.prefetch == 3));
  CHECK((!c.shuffle && c.drop_last));
  CHECK(c.normalize.mean == std::vector<float>{0.1f, 0.2f, 0.3f});
  CHECK(c.normalize.std == std::vector<float>{0.5f});
  CHECK((c.augment.crop_padding == 4 && c.augment.hflip));
  CHECK((c.synthetic.size == 50 && c.synthetic_test_size == 20 && c.synthetic.channels == 3 &&
         c.synthetic.height == 8 && c.synthetic.width == 9 && c.synthetic.classes == 5));

  // The resolved section parses back to the same settings.
  const DataConfig again = parse_data_config(checked(YAML::Dump(data_config_yaml(c))));
  CHECK(YAML::Dump(data_config_yaml(again)) == YAML::Dump(data_config_yaml(c)));
  const YAML::Node fm = data_config_yaml(d);
  CHECK(fm["path"].as<std::string>() == kFashionMnistDir);
  CHECK(fm["normalize"]["mean"].as<float>() == kFashionMnistMean);
}

TEST_CASE("data config: bad keys and values name the key", "[data][config]") {
  CHECK_THAT(config_error_of("batch_sise: 3"), Contains("batch_sise") && Contains("batch_size"));
  CHECK_THAT(config_error_of("dataset: cifar"), Contains("csv, fashion_mnist, idx, image_folder, npy, synthetic"));
  CHECK_THAT(config_error_of("workers: -1"), Contains("data.workers") && Contains(">= 0"));
  CHECK_THAT(config_error_of("augment: {random_crop: {pading: 2}}"), Contains("padding"));
  CHECK_THAT(config_error_of("normalize: {mean: abc}"), Contains("cfg.yaml:1") && Contains("data.normalize.mean"));
  CHECK_THAT(config_error_of("normalize: {std: 0}"), Contains("'data.normalize.std' must be > 0"));
  CHECK_THAT(config_error_of("normalize: {std: .inf}"), Contains("'data.normalize.std' must be finite numbers"));
  CHECK_THAT(config_error_of("normalize: {mean: [0.5, .nan]}"), Contains("'data.normalize.mean' must be finite"));
}

TEST_CASE("data config: synthetic loaders build, train shuffled and test in order", "[data][config]") {
  const DataConfig c = parse_data_config(checked(
      "dataset: synthetic\nbatch_size: 16\neval_batch_size: 40\nworkers: 2\n"
      "augment: {hflip: true}\nsynthetic: {size: 100, test_size: 50, channels: 1, height: 4, width: 4, classes: 3}"));
  DataLoaders loaders = make_data_loaders(c, 7);
  CHECK(loaders.train->num_batches() == 7);
  CHECK(loaders.test->num_batches() == 2);
  CHECK(loaders.train->options().shuffle);
  CHECK(loaders.train->options().augment.hflip);
  CHECK_FALSE(loaders.test->options().shuffle);
  CHECK_FALSE(loaders.test->options().augment.enabled());
  loaders.test->begin_epoch(0);
  const auto batch = loaders.test->next();
  REQUIRE(batch.has_value());
  CHECK(batch->inputs.shape() == Shape{40, 1, 4, 4});
  CHECK(batch->targets.dtype() == DType::I64);
}

TEST_CASE("data config: a missing dataset folder names the path and the package", "[data][config]") {
  test::TempDir dir;
  DataConfig c;
  c.path = (dir.path() / "missing").string();
  CHECK_THAT(test::input_error_of([&] { make_data_loaders(c, 0); }),
             Contains(c.path) && Contains("apt-get install dataset-fashion-mnist"));
}

TEST_CASE("data config: the resolved section passes the schema again, for every built-in dataset type",
          "[data][config]") {
  // predict and export read config.resolved.yaml back through the schema: a key the resolved form
  // adds (an empty `fashion_mnist:` section once did) would make every such run unreadable.
  for (const char* text :
       {"dataset: fashion_mnist", "{dataset: fashion_mnist, validation: {fraction: 0.1}}",
        "{dataset: synthetic, synthetic: {size: 8}}", "{dataset: csv, csv: {train: a.csv, test: b.csv, label: y}}",
        "{dataset: npy, npy: {train: a.npz, test: b.npz}}",
        "{dataset: image_folder, image_folder: {train: a, test: b}}",
        "{dataset: idx, idx: {train_images: a, train_labels: b, test_images: c, test_labels: d}}"}) {
    INFO(text);
    const YAML::Node resolved = data_config_yaml(parse_data_config(checked(text), "cfg.yaml"));
    CHECK_NOTHROW(data_schema().validate(resolved, "config.resolved.yaml", "data"));
    const std::string dataset = resolved["dataset"].as<std::string>();
    if (dataset == "fashion_mnist") CHECK_FALSE(resolved["fashion_mnist"]);
    if (dataset == "image_folder") {  // the resizing defaults are recorded, for predict
      CHECK(resolved["image_folder"]["resize"].as<std::string>() == "crop");
      CHECK(resolved["image_folder"]["antialias"].as<bool>());
    }
  }
}

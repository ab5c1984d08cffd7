// The `data:` section: schema, parsing with defaults, resolved YAML, and the loader factory.
#include "ingot/data/data_config.h"

#include <cmath>

#include "ingot/data/csv_dataset.h"
#include "ingot/data/dataset_registry.h"
#include "ingot/data/fashion_mnist.h"
#include "ingot/data/idx_dataset.h"
#include "ingot/data/image_folder.h"
#include "ingot/data/npy_dataset.h"
#include "ingot/data/subset_dataset.h"
#include "ingot/data/text_classification.h"
#include "ingot/data/text_dataset.h"
#include "ingot/data/tokens_dataset.h"

namespace ingot::data {
namespace {

std::vector<float> parse_values(const YAML::Node& node, const std::string& file, const std::string& key) {
  const auto bad = [&] {
    return ConfigError(fmt::format("{}: '{}' must be a number or a list of numbers (one per channel), got {}",
                                   config::where(file, node), key,
                                   node.IsScalar() ? config::quote_value(node.Scalar()) : std::string("a map")));
  };
  std::vector<float> out;
  try {
    if (node.IsScalar()) {
      out.push_back(node.as<float>());
    } else if (node.IsSequence() && node.size() > 0) {
      for (const auto& v : node) out.push_back(v.as<float>());
    } else {
      throw bad();
    }
  } catch (const YAML::Exception&) {
    throw bad();
  }
  for (const float v : out)  // (as every float key of a schema must be)
    if (!std::isfinite(v))
      throw ConfigError(fmt::format("{}: '{}' must be finite numbers, got {}", config::where(file, node), key, v));
  return out;
}

template <class T>
void read_if(const YAML::Node& node, const char* key, T& value) {
  if (node && node.IsMap() && node[key]) value = node[key].as<T>();
}

}  // namespace

config::Schema data_schema() {
  config::Schema crop;
  crop.integer("padding", 0, 256);
  config::Schema augment;
  augment.section("random_crop", std::move(crop)).boolean("hflip");
  config::Schema normalize;
  normalize.any("mean").any("std");  // a number or a list: checked by parse_data_config
  config::Schema validation;
  validation.number("fraction", 0.0, 1.0);
  config::Schema mix;
  mix.number("mixup_alpha", 0.0, 100.0)
      .number("cutmix_alpha", 0.0, 100.0)
      .number("prob", 0.0, 1.0)
      .number("switch_prob", 0.0, 1.0);
  config::Schema data;
  data.string("dataset", false, dataset_registry().types())
      .string("path")
      .integer("batch_size", 1, 1 << 20)
      .integer("eval_batch_size", 1, 1 << 20)
      .integer("workers", 0, 64)
      .integer("prefetch", 1, 64)
      .boolean("shuffle")
      .boolean("drop_last")
      .integer("pad_to_multiple_of", 1, 1 << 20)
      .section("normalize", std::move(normalize))
      .section("augment", std::move(augment))
      .section("mix", std::move(mix))
      .section("validation", std::move(validation));
  // Each dataset type's own section, with its keys.
  for (const auto& [type, entry] : dataset_registry().entries())
    if (!entry.schema.fields().empty()) data.section(type, entry.schema);
  return data;
}

DataConfig parse_data_config(const YAML::Node& node, const std::string& file) {
  DataConfig c;
  if (!node || node.IsNull()) return c;
  read_if(node, "dataset", c.dataset);
  if (node.IsMap() && node[c.dataset]) c.section = node[c.dataset];
  read_if(node, "path", c.path);
  read_if(node, "batch_size", c.batch_size);
  read_if(node, "eval_batch_size", c.eval_batch_size);
  read_if(node, "workers", c.workers);
  read_if(node, "prefetch", c.prefetch);
  read_if(node, "shuffle", c.shuffle);
  read_if(node, "drop_last", c.drop_last);
  read_if(node, "pad_to_multiple_of", c.pad_to_multiple_of);
  if (const YAML::Node norm = node["normalize"]) {
    c.normalize.mean.clear();
    c.normalize.std.clear();
    if (norm["mean"]) c.normalize.mean = parse_values(norm["mean"], file, "data.normalize.mean");
    if (norm["std"]) c.normalize.std = parse_values(norm["std"], file, "data.normalize.std");
    for (float s : c.normalize.std) {
      if (!(s > 0.0f)) {
        throw ConfigError(
            fmt::format("{}: 'data.normalize.std' must be > 0, got {}", config::where(file, norm["std"]), s));
      }
    }
  }
  if (const YAML::Node aug = node["augment"]) {
    if (aug["random_crop"]) read_if(aug["random_crop"], "padding", c.augment.crop_padding);
    read_if(aug, "hflip", c.augment.hflip);
  }
  if (const YAML::Node mix = node["mix"]) {
    read_if(mix, "mixup_alpha", c.mix.mixup_alpha);
    read_if(mix, "cutmix_alpha", c.mix.cutmix_alpha);
    read_if(mix, "prob", c.mix.prob);
    read_if(mix, "switch_prob", c.mix.switch_prob);
    if (!(c.mix.mixup_alpha > 0.0 || c.mix.cutmix_alpha > 0.0))
      throw ConfigError(
          fmt::format("{}: 'data.mix' mixes nothing: set mixup_alpha (e.g. 0.2) and/or cutmix_alpha "
                      "(e.g. 1.0), or remove the section",
                      config::where(file, mix)));
  }
  if (const YAML::Node val = node["validation"]) {
    read_if(val, "fraction", c.validation_fraction);
    if (!(c.validation_fraction > 0.0 && c.validation_fraction < 1.0))
      throw ConfigError(
          fmt::format("{}: 'data.validation.fraction' must lie between 0 and 1 (exclusive), got {}: "
                      "0.1 holds out a tenth of the training set",
                      config::where(file, val), c.validation_fraction));
  }
  if (const YAML::Node syn = node["synthetic"]) {
    read_if(syn, "size", c.synthetic.size);
    read_if(syn, "test_size", c.synthetic_test_size);
    read_if(syn, "channels", c.synthetic.channels);
    read_if(syn, "height", c.synthetic.height);
    read_if(syn, "width", c.synthetic.width);
    read_if(syn, "classes", c.synthetic.classes);
  }
  return c;
}

namespace {

/// The normalisation the loaders use: the config's values, else the dataset's defaults.
Normalize resolved_normalize(const DataConfig& c) {
  Normalize n = c.dataset == "fashion_mnist" ? fashion_mnist_normalize() : Normalize{};
  if (!c.normalize.mean.empty()) n.mean = c.normalize.mean;
  if (!c.normalize.std.empty()) n.std = c.normalize.std;
  return n;
}

YAML::Node values_yaml(const std::vector<float>& v) {
  if (v.size() == 1) return YAML::Node(v[0]);
  YAML::Node list(YAML::NodeType::Sequence);
  for (float x : v) list.push_back(x);
  return list;
}

}  // namespace

YAML::Node data_config_yaml(const DataConfig& c) {
  YAML::Node n(YAML::NodeType::Map);
  n["dataset"] = c.dataset;
  if (c.dataset == "fashion_mnist") n["path"] = c.path.empty() ? std::string(kFashionMnistDir) : c.path;
  n["batch_size"] = c.batch_size;
  n["eval_batch_size"] = c.eval_batch_size;
  n["workers"] = c.workers;
  n["prefetch"] = c.prefetch;
  n["shuffle"] = c.shuffle;
  n["drop_last"] = c.drop_last;
  if (c.pad_to_multiple_of != 1) n["pad_to_multiple_of"] = c.pad_to_multiple_of;
  if (c.dataset == "fashion_mnist" || c.dataset == "csv" || c.dataset == "npy" || c.dataset == "image_folder" ||
      c.dataset == "idx") {
    const Normalize norm = resolved_normalize(c);
    n["normalize"]["mean"] = values_yaml(norm.mean);
    n["normalize"]["std"] = values_yaml(norm.std);
  }
  n["augment"]["random_crop"]["padding"] = c.augment.crop_padding;
  n["augment"]["hflip"] = c.augment.hflip;
  if (c.mix.enabled()) {
    n["mix"]["mixup_alpha"] = c.mix.mixup_alpha;
    n["mix"]["cutmix_alpha"] = c.mix.cutmix_alpha;
    n["mix"]["prob"] = c.mix.prob;
    n["mix"]["switch_prob"] = c.mix.switch_prob;
  }
  if (c.validation_fraction > 0.0) n["validation"]["fraction"] = c.validation_fraction;
  if (c.dataset == "synthetic") {
    n["synthetic"]["size"] = c.synthetic.size;
    n["synthetic"]["test_size"] = c.synthetic_test_size;
    n["synthetic"]["channels"] = c.synthetic.channels;
    n["synthetic"]["height"] = c.synthetic.height;
    n["synthetic"]["width"] = c.synthetic.width;
    n["synthetic"]["classes"] = c.synthetic.classes;
  } else if (c.section.IsDefined() && !c.section.IsNull()) {  // (a default Node is defined and null)
    n[c.dataset] = YAML::Clone(c.section);                    // the dataset type's own keys (files of csv, npy)
    if (c.dataset == "image_folder") {                        // how images were resized, so that predict does the same
      if (!n[c.dataset]["resize"]) n[c.dataset]["resize"] = "crop";
      if (!n[c.dataset]["antialias"]) n[c.dataset]["antialias"] = true;
    }
  }
  return n;
}

namespace {

void add_builtins(DatasetRegistry& r) {
  r.add({"fashion_mnist", config::Schema(),
         [](const YAML::Node&, const std::string&, const DataConfig& c, uint64_t) {
           const std::string dir = c.path.empty() ? std::string(kFashionMnistDir) : c.path;
           const Normalize norm = resolved_normalize(c);
           return DatasetSplits{fashion_mnist(dir, "train", norm),
                                fashion_mnist(dir, "test", norm),
                                {kFashionMnistClasses.begin(), kFashionMnistClasses.end()}};
         },
         "Fashion-MNIST from Debian's dataset-fashion-mnist (data.path: another folder of the IDX files)"});
  config::Schema synthetic;
  synthetic.integer("size", 1, 1 << 30)
      .integer("test_size", 1, 1 << 30)
      .integer("channels", 1, 64)
      .integer("height", 1, 4096)
      .integer("width", 1, 4096)
      .integer("classes", 1, 1 << 20);
  r.add({"synthetic", std::move(synthetic),
         [](const YAML::Node&, const std::string&, const DataConfig& c, uint64_t seed) {
           SyntheticSpec test_spec = c.synthetic;
           test_spec.size = c.synthetic_test_size;
           return DatasetSplits{synthetic_dataset(c.synthetic, seed, 0), synthetic_dataset(test_spec, seed, 1), {}};
         },
         "per-class patterns plus noise, made in memory (data.synthetic: size, test_size, shape, classes)"});
  register_csv_dataset(r);
  register_npy_dataset(r);
  register_image_folder_dataset(r);
  register_idx_dataset(r);
  register_text_dataset(r);
  register_text_classification_dataset(r);
  register_tokens_dataset(r);
}

}  // namespace

DatasetRegistry& dataset_registry() {
  static DatasetRegistry* registry = [] {
    auto* r = new DatasetRegistry("dataset");
    add_builtins(*r);
    return r;
  }();
  return *registry;
}

DataLoaders make_data_loaders(const DataConfig& c, uint64_t seed, int rank, int world_size) {
  const DatasetRegistry::Entry& type = dataset_registry().get(c.dataset, "data.dataset", c.section);
  const DatasetSplits splits = type.make(c.section, "data", c, seed);
  std::shared_ptr<const Dataset> train = splits.train, validation = splits.validation;
  const std::shared_ptr<const Dataset> test = splits.test;
  INGOT_CHECK_AS(train != nullptr && test != nullptr, InputError, "dataset '{}' gave no train or test split",
                 c.dataset);
  if (validation == nullptr && c.validation_fraction > 0.0) {
    TrainValidationSplit split = split_validation(train, c.validation_fraction, seed);
    train = std::move(split.train);
    validation = std::move(split.validation);
  }
  LoaderOptions train_options;
  train_options.batch_size = c.batch_size;
  train_options.shuffle = c.shuffle;
  train_options.drop_last = c.drop_last;
  train_options.num_workers = c.workers;
  train_options.prefetch_batches = c.prefetch;
  train_options.pad_to_multiple_of = c.pad_to_multiple_of;
  train_options.augment = c.augment;
  train_options.mix = c.mix;
  train_options.seed = seed;
  LoaderOptions test_options = train_options;
  train_options.rank = rank;
  train_options.world_size = world_size;
  test_options.batch_size = c.eval_batch_size;
  test_options.shuffle = false;
  test_options.drop_last = false;
  test_options.augment = Augment{};
  test_options.mix = BatchMix{};
  YAML::Node section = c.section;
  if (splits.resolved.IsMap()) {  // in a copy: the config's own tree stays as written
    YAML::Node merged = c.section.IsMap() ? YAML::Clone(c.section) : YAML::Node(YAML::NodeType::Map);
    for (const auto& kv : splits.resolved) merged[kv.first.Scalar()] = YAML::Clone(kv.second);
    section.reset(merged);  // (rebinds; `=` between nodes would write into the config's tree)
  }
  return DataLoaders{std::make_unique<DataLoader>(train, train_options),
                     std::make_unique<DataLoader>(test, test_options),
                     validation ? std::make_unique<DataLoader>(validation, test_options) : nullptr,
                     splits.class_names,
                     splits.run_files,
                     section};
}

}  // namespace ingot::data

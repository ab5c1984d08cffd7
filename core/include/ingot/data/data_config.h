// The `data:` section of a pipeline config: its schema, its parsed and resolved form, and the
// factory that builds the train and test loaders from it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "ingot/config/schema.h"
#include "ingot/data/augment.h"
#include "ingot/data/data_loader.h"
#include "ingot/data/dataset.h"
#include "ingot/data/dataset_registry.h"
#include "ingot/data/synthetic.h"

namespace ingot::data {

/// Everything `data:` can say, with its defaults (see data_schema() for the YAML keys).
struct DataConfig {
  std::string dataset = "fashion_mnist";  ///< a type of the dataset registry
  std::string path;                       ///< fashion_mnist folder; "" = kFashionMnistDir
  int64_t batch_size = 64;
  int64_t eval_batch_size = 256;
  int workers = 2;
  int prefetch = 2;             ///< batches per worker
  bool shuffle = true;          ///< the training loader's; evaluation never shuffles
  bool drop_last = false;       ///< the training loader's; evaluation keeps every sample
  int64_t pad_to_multiple_of = 1;  ///< token batches: LoaderOptions::pad_to_multiple_of (both loaders)
  Normalize normalize{{}, {}};  ///< empty mean/std = the dataset's defaults
  Augment augment;              ///< training only
  BatchMix mix;                 ///< training only: Mixup / CutMix of each batch
  SyntheticSpec synthetic;
  int64_t synthetic_test_size = 256;
  /// `data.validation.fraction`: the share of the training set held out for validation (0 = none;
  /// a dataset's own validation split, e.g. image_folder.validation, takes precedence).
  double validation_fraction = 0.0;
  YAML::Node section;  ///< `data.<dataset>:`, the dataset type's own keys (undefined when absent)
  /// The model's `input_shape` (one sample, no batch dim), when the config gives one: datasets
  /// that resize their samples (image_folder) default to it. Not a `data:` key.
  std::optional<Shape> input_shape;
  /// The run folder (runs/<name>), where a dataset looks for the tokenizer it trained before (a
  /// resume). It need not exist: the loaders are built before the run folder is opened, and what
  /// a dataset makes comes back in DataLoaders::run_files. Empty: look nowhere. Not a `data:` key.
  std::filesystem::path tokenizer_dir;
};

/// Keys of `data:`:
///   dataset: fashion_mnist | synthetic | an extension's     path: folder of the IDX files
///   batch_size, eval_batch_size, workers (0 = load on the training thread), prefetch,
///   shuffle, drop_last: bool
///   pad_to_multiple_of: token batches cut to their longest sequence rounded up to a multiple of it
///   normalize: {mean: number or list, std: number or list}
///   augment: {random_crop: {padding: int}, hflip: bool}
///   mix: {mixup_alpha, cutmix_alpha, prob, switch_prob}: Mixup / CutMix of the training batches
///   (class-probability targets for the loss)
///   validation: {fraction: 0.1}: hold out that share of the training set for per-epoch
///   validation (model selection, early stopping); the test split is then used once, at the end
///   synthetic: {size, test_size, channels, height, width, classes}; generally `<dataset>:` holds
///   the keys of that dataset type (dataset_registry)
config::Schema data_schema();

/// Reads a validated `data:` node (an undefined node gives the defaults). Throws ConfigError
/// for what the schema cannot express (normalize values that are not numbers, std <= 0).
/// `file` names the config in messages.
DataConfig parse_data_config(const YAML::Node& node, const std::string& file = "<config>");

/// The resolved section, every default filled in, for config.resolved.yaml.
YAML::Node data_config_yaml(const DataConfig& config);

/// The train loader (shuffled, augmented as configured) and the test loader (in order, no
/// augmentation), sharing nothing but the config. `seed` keys shuffles, augmentations and the
/// synthetic data.
struct DataLoaders {
  std::unique_ptr<DataLoader> train;
  std::unique_ptr<DataLoader> test;
  /// The validation split (data.validation or the dataset's own), read like the test split;
  /// null when there is none.
  std::unique_ptr<DataLoader> validation;
  std::vector<std::string> class_names;  ///< the dataset's, for the confusion matrix
  /// Files for the run folder (a trained tokenizer's model; DatasetSplits::run_files).
  std::vector<RunFile> run_files;
  /// `data.<dataset>:` as resolved: the section as written with the keys the dataset resolved (the
  /// tokenizer file it made), for config.resolved.yaml.
  YAML::Node section;
};
/// The train loader takes shard `rank` of `world_size` (distributed training: data.batch_size is
/// then each rank's); the test and validation loaders always read their whole split. A
/// validation fraction is held out of the training set before sharding, the same on every rank.
DataLoaders make_data_loaders(const DataConfig& config, uint64_t seed, int rank = 0, int world_size = 1);

}  // namespace ingot::data

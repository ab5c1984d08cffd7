// Datasets by name (`data.dataset`): fashion_mnist, synthetic, and any an extension plugin adds.
// A dataset type reads its own section `data.<name>:` (if any) and the common keys of `data:`
// (path, normalize) and returns the train and test splits.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "ingot/config/type_registry.h"
#include "ingot/data/dataset.h"

namespace ingot::data {

struct DataConfig;

/// A file for the run folder: its name there and its bytes.
struct RunFile {
  std::string name;
  std::string bytes;
};

/// What a dataset type builds.
struct DatasetSplits {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> test;
  std::vector<std::string> class_names;  ///< for the confusion matrix; empty = class numbers
  /// The dataset's own validation split (a separate folder or file), when it has one; otherwise
  /// `data.validation.fraction` carves one out of `train`.
  std::shared_ptr<const Dataset> validation;
  /// Files the dataset made for the run (a trained tokenizer's model), by name: the pipeline
  /// writes them into the run folder, which does not exist yet while the datasets are built.
  std::vector<RunFile> run_files;
  /// Keys of the dataset's section as it resolved them (the tokenizer file it made): they replace
  /// those of the section as written in config.resolved.yaml. Null when there are none.
  YAML::Node resolved;
};

/// Factories get `data.<name>` (undefined when absent), the config file, the parsed `data:` and
/// the run's seed.
using DatasetRegistry = config::TypeRegistry<DatasetSplits, const DataConfig&, uint64_t>;

/// The process's dataset registry, built-ins included.
DatasetRegistry& dataset_registry();

}  // namespace ingot::data

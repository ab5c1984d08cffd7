// The `csv` dataset: a train and a test table of numeric feature columns and one label column.
// Each row is one sample of shape [F, 1, 1] (F features as channels, so data.normalize can give
// one mean and std per feature); labels are class numbers 0..K-1 or class names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/data/dataset_registry.h"

namespace ingot::data {

/// How to read the tables (`data.csv:` keys other than the file names).
struct CsvOptions {
  std::string label;   ///< column name, or 0-based index (negative counts from the end); "" = last
  bool header = true;  ///< the first line names the columns
  char delimiter = ',';
};

/// Reads `train`, `test` and, when given, `validation` (the dataset's own validation split; paths
/// as given, relative to the working directory). Labels that are all integers (in every file) are
/// class numbers, K = the largest + 1, with no class names;
/// otherwise every label is a class name, classes numbered in sorted name order. Throws
/// InputError with one line naming the file, row (line of the file, 1-based) and column for a
/// value that is not a finite number, a row with the wrong number of columns, a negative class
/// number; ConfigError for a label column that is not there.
DatasetSplits csv_datasets(const std::string& train, const std::string& test, const CsvOptions& options,
                           const Normalize& normalize, const std::string& validation = "");

/// The options of a `data.csv:` section (label, header, delimiter; defaults where absent).
/// ConfigError for a label that is not a scalar or a delimiter that is not one character.
CsvOptions csv_options(const YAML::Node& section);

/// The feature columns of the table `path` as [rows, features] floats, read as csv_datasets
/// reads them: with `features` + 1 columns the label column (options.label) is left out, with
/// `features` columns every column is a feature. InputError naming the file otherwise, and for
/// the errors csv_datasets reports.
std::vector<float> csv_features(const std::string& path, const CsvOptions& options, int64_t features);

/// Registers type `csv` (keys train, test, validation, label, header, delimiter).
void register_csv_dataset(DatasetRegistry& registry);

}  // namespace ingot::data

// The `npy` dataset: arrays saved by numpy, x [N, ...] (float32, float64 or uint8 scaled by 1/255)
// and y [N] class numbers, from four .npy files or from two .npz files.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/data/dataset_registry.h"

namespace ingot::data {

/// Where one split's arrays are: `x` and `y` .npy paths, or one .npz path with member names.
struct NpySource {
  std::string x, y;  ///< .npy files, or the member names when `npz` is set
  std::string npz;   ///< "" = two .npy files
};

/// Builds the splits. x is [N, F] (samples [F, 1, 1]), [N, H, W] ([1, H, W]) or [N, C, H, W];
/// y integer [N]. The class count is `classes.size()` when given (those are the class names),
/// else the largest label of any split + 1. `validation`: the dataset's own validation split. Throws InputError with one line naming the file
/// for an unsupported dtype or shape, x and y of different N, splits whose samples have
/// different shapes, a label outside [0, K), and whatever read_npy / read_npz report.
DatasetSplits npy_datasets(const NpySource& train, const NpySource& test, const std::vector<std::string>& classes,
                           const Normalize& normalize, const std::optional<NpySource>& validation = std::nullopt);

/// Registers type `npy` (keys train_x, train_y, test_x, test_y | train, test, x, y; classes).
void register_npy_dataset(DatasetRegistry& registry);

}  // namespace ingot::data

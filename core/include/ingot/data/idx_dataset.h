// The `idx` dataset: images and labels in IDX files (the MNIST format, gzipped or not) of any
// shape: [N, F] features, [N, H, W] grey images or [N, C, H, W].
#pragma once

#include <string>

#include "ingot/data/dataset_registry.h"

namespace ingot::data {

/// The four files of `data.idx:`.
struct IdxFiles {
  std::string train_images, train_labels, test_images, test_labels;
};

/// Builds the splits. Images [N, F] give samples [F, 1, 1], [N, H, W] give [1, H, W], [N, C, H, W]
/// are taken as they are; unsigned bytes are scaled to [0, 1], other types (float32, ...) taken as
/// stored; then data.normalize. Labels are [N] integers (unsigned bytes, int32, ...); the class
/// count is the largest label + 1. Throws InputError naming the file for images of rank 1 or
/// over 4, labels that are not integers or not [N], train and test samples of different shapes,
/// a negative label, and whatever read_idx_any reports.
DatasetSplits idx_datasets(const IdxFiles& files, const Normalize& normalize);

/// Registers type `idx` (keys train_images, train_labels, test_images, test_labels).
void register_idx_dataset(DatasetRegistry& registry);

}  // namespace ingot::data

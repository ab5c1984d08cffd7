// Private: an InMemoryDataset from float samples already in [N, C, H, W] order (own data: csv,
// npy), normalised per channel as (x - mean) / std, labels checked against the class count.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/data/dataset.h"

namespace ingot::data {

/// `values` holds N samples of `sample` = [C, H, W] floats; `labels` N class numbers. Throws
/// ConfigError when `normalize` has neither one value nor one per channel, and InputError naming
/// `source` for a label outside [0, num_classes) (`label_hint` says where the class count came
/// from). An empty `normalize` mean or std means 0 or 1.
std::shared_ptr<InMemoryDataset> dataset_from_floats(std::vector<float> values, const Shape& sample,
                                                     const std::vector<int64_t>& labels, int64_t num_classes,
                                                     const Normalize& normalize, const std::string& source,
                                                     const std::string& label_hint);

}  // namespace ingot::data

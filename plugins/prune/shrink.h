// Physically smaller layers for channel pruning: each producer rebuilt with the output channels
// it keeps, the BatchNorm2d layers after it with those channels, and the next Conv2d or Linear
// with the matching inputs; each swapped in with Module::replace_child (same name, same place).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "channel_plan.h"
#include "ingot/nn/module.h"

namespace ingot::prune {

/// One rebuilt layer, for the report.
struct ShapeChange {
  std::string layer;
  std::string type;
  Shape before, after;  ///< of its weight
  int64_t params_before = 0, params_after = 0;
};

/// Rebuilds the layers of `links` so that producer i keeps the output channels where keep[i] is
/// non-zero (at least one), and returns the changes in named_modules order. The new layers are
/// on the old ones' device, dtype and mode; the old ones' hooks do not carry over.
std::vector<ShapeChange> shrink_channels(nn::Module& root, const std::vector<ChannelLink>& links,
                                         const std::vector<std::vector<uint8_t>>& keep);

}  // namespace ingot::prune

// Which output channels of which layers can be removed, found by walking the model's Sequential
// chains: a Conv2d's filters (or a Linear's neurons) go together with the channels of the
// BatchNorm2d after it and the matching inputs of the next Conv2d or Linear (H*W input features
// per channel after a Flatten). ReLU, GELU, Tanh, pooling and Dropout pass channels through (each
// keeps a zero channel zero). Inside a residual block only conv1 -> bn1 -> conv2's inputs may
// shrink: the outputs that reach the residual sum stay. Everything else is listed with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ingot/nn/module.h"

namespace ingot::prune {

/// One removable set of channels: the producer's outputs, the norms between, the consumer's inputs.
struct ChannelLink {
  std::string producer;            ///< Conv2d or Linear whose output channels / neurons go
  std::vector<std::string> norms;  ///< BatchNorm2d layers on those channels
  std::string consumer;            ///< Conv2d or Linear whose inputs go with them
  int64_t block = 1;               ///< consumer inputs per channel (H*W after a Flatten)
};

struct ChannelPlan {
  std::vector<ChannelLink> links;                            ///< in named_modules order
  std::vector<std::pair<std::string, std::string>> skipped;  ///< Conv2d / Linear that cannot shrink, and why

  /// The link whose producer is `layer`; null when none.
  const ChannelLink* find(const std::string& layer) const;
  /// Why `layer` cannot shrink ("" when it can or is no Conv2d / Linear).
  std::string reason(const std::string& layer) const;
};

/// The plan for `root` (its own Conv2d / Linear layers only: exact types, as fusion matches).
ChannelPlan plan_channels(nn::Module& root);

}  // namespace ingot::prune

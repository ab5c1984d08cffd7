// Model presets built from the nn layers: an MLP, a small CNN for 28x28 images and CIFAR-style
// ResNets (depth 6n + 2). Each is a Sequential whose state_dict names equal those of the torch
// nn.Sequential built the same way (see the README section "Weights and PyTorch").
#pragma once

#include <string>
#include <vector>

#include "ingot/nn/sequential.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

/// Flatten, then Linear(sizes[i], sizes[i + 1]) with `activation` (and Dropout(dropout) when
/// dropout > 0) between consecutive Linears; positions name the children ("1.weight" is the
/// first Linear's weight).
struct MlpOptions {
  std::vector<int64_t> sizes{784, 512, 256, 10};
  std::string activation = "relu";  ///< relu | gelu | sigmoid | tanh
  double dropout = 0.0;
};
std::shared_ptr<Sequential> make_mlp(const MlpOptions& options, Generator* gen = nullptr,
                                     Generator* dropout_gen = nullptr);

/// conv3x3(in -> width, pad 1, no bias) BN ReLU maxpool2, conv3x3(width -> 2 width) BN ReLU
/// maxpool2, Flatten, Linear(2 width * (H/4) * (W/4) -> hidden) ReLU Dropout Linear(hidden ->
/// classes): children 0..12.
struct SimpleCnnOptions {
  int64_t in_channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t channels = 32;  ///< of the first conv; the second has twice as many
  int64_t hidden = 128;
  int64_t classes = 10;
  double dropout = 0.25;
};
std::shared_ptr<Sequential> make_simple_cnn(const SimpleCnnOptions& options, Generator* gen = nullptr,
                                            Generator* dropout_gen = nullptr);

/// CIFAR ResNet (He et al. 2016, section 4.2): conv3x3(in -> w) BN ReLU, three stages of n
/// BasicBlocks (w, 2w, 4w channels; stride 2 entering stages 2 and 3), global average pool,
/// Linear(4w -> classes). depth = 6n + 2 (8, 14, 20, 32, ...). Children are named conv1, bn1,
/// relu, layer1, layer2, layer3, pool, flatten, fc (torchvision's names).
struct ResNetOptions {
  int64_t depth = 20;
  int64_t width = 16;
  int64_t in_channels = 3;
  int64_t classes = 10;
};
std::shared_ptr<Sequential> make_resnet(const ResNetOptions& options, Generator* gen = nullptr);

}  // namespace ingot::nn

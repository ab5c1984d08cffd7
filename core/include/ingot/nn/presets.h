// Model presets built from the nn layers: an MLP, a small CNN for 28x28 images, CIFAR-style
// ResNets (depth 6n + 2) and the ImageNet models of torchvision (ResNet 18 to 152, VGG,
// MobileNetV2) in torchvision's layout. Each is a Sequential whose state_dict names equal those of the torch
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
///
/// style "imagenet" is torchvision's ResNet (resnet18 ... resnet152): conv7x7/2(in -> w) BN ReLU
/// maxpool3x3/2, four stages (w, 2w, 4w, 8w; stride 2 entering stages 2 to 4) of BasicBlocks
/// (depth 18: 2-2-2-2, 34: 3-4-6-3) or Bottlenecks (50: 3-4-6-3, 101: 3-4-23-3, 152: 3-8-36-3,
/// 4x expansion), global average pool, Linear. Children conv1, bn1, relu, maxpool, layer1..4,
/// avgpool, flatten, fc; projections are named `downsample`. Initialised as torchvision does:
/// convs kaiming_normal (fan_out, relu), BNs 1 / 0, and with zero_init_residual the last BN of
/// each block 0.
struct ResNetOptions {
  int64_t depth = 20;
  int64_t width = 16;  ///< the first stage's channels (64 in torchvision's ResNets)
  int64_t in_channels = 3;
  int64_t classes = 10;
  std::string style = "cifar";  ///< cifar | imagenet
  bool zero_init_residual = false;
};
std::shared_ptr<Sequential> make_resnet(const ResNetOptions& options, Generator* gen = nullptr);

/// The depths of torchvision's ResNets: 18, 34, 50, 101, 152.
bool is_imagenet_resnet_depth(int64_t depth);

/// torchvision's VGG (vgg11 ... vgg19, _bn with batch_norm): `features` (conv3x3 pad 1 [BN] ReLU
/// with maxpool2 after each group; configurations A, B, D, E for depth 11, 13, 16, 19), avgpool
/// (adaptive, pool x pool), flatten, `classifier` (Linear(512 pool^2 -> hidden) ReLU Dropout
/// Linear(hidden -> hidden) ReLU Dropout Linear(hidden -> classes)). Initialised as torchvision
/// does: convs kaiming_normal (fan_out, relu) with zero bias, Linears N(0, 0.01) with zero bias.
struct VggOptions {
  int64_t depth = 16;
  bool batch_norm = false;
  int64_t in_channels = 3;
  int64_t classes = 1000;
  int64_t hidden = 4096;
  int64_t pool = 7;
  double dropout = 0.5;
};
std::shared_ptr<Sequential> make_vgg(const VggOptions& options, Generator* gen = nullptr,
                                     Generator* dropout_gen = nullptr);

/// torchvision's MobileNetV2: `features` (conv3x3/2-BN-ReLU6 to 32 w, 17 InvertedResiduals,
/// conv1x1-BN-ReLU6 to 1280 max(1, w)), avgpool (global), flatten, `classifier` (Dropout,
/// Linear). Channel counts are scaled by width_mult and rounded to multiples of 8 as torchvision
/// rounds them. Initialised as torchvision does: convs kaiming_normal (fan_out), Linear N(0, 0.01)
/// with zero bias.
struct MobileNetV2Options {
  double width_mult = 1.0;
  int64_t in_channels = 3;
  int64_t classes = 1000;
  double dropout = 0.2;
};
std::shared_ptr<Sequential> make_mobilenet_v2(const MobileNetV2Options& options, Generator* gen = nullptr,
                                              Generator* dropout_gen = nullptr);

}  // namespace ingot::nn

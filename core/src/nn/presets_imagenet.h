// Private: the ImageNet ResNet (presets_imagenet.cpp), which make_resnet calls for style
// "imagenet", and the zero-init of residual blocks both styles use.
#pragma once

#include "ingot/nn/presets.h"

namespace ingot::nn::detail {

std::shared_ptr<Sequential> make_imagenet_resnet(const ResNetOptions& options, Generator* gen);

/// Sets the weight of each residual block's last BatchNorm (BasicBlock bn2, Bottleneck bn3) to 0,
/// so that every block starts as the identity (torchvision's zero_init_residual).
void zero_init_residual(Module& model);

}  // namespace ingot::nn::detail

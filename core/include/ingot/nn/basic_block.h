// BasicBlock: the CIFAR ResNet residual block (He et al. 2016): conv3x3-BN-ReLU-conv3x3-BN plus
// a shortcut, then ReLU. The shortcut is the identity, or a 1x1 strided conv + BN when the
// stride or width changes (the paper's "option B", as in the widely used kuangliu/pytorch-cifar
// code), so the state_dict names are conv1.weight, bn1.*, conv2.weight, bn2.*, shortcut.0.weight,
// shortcut.1.* — equal to a torch module with the same attributes and an nn.Sequential shortcut.
// ImageNet ResNets (18, 34) name the projection `downsample`, as torchvision's BasicBlock does.
#pragma once

#include <memory>
#include <string>

#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/sequential.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

class BasicBlock : public Module {
 public:
  BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride = 1, Generator* gen = nullptr,
             std::string shortcut_name = "shortcut");
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  bool is_block() const override { return true; }

  /// True when the shortcut is a 1x1 conv + BN (stride != 1 or in != out).
  bool has_projection() const { return get_submodule(shortcut_name_) != nullptr; }
  /// The projection's child name: "shortcut" (CIFAR) or "downsample" (torchvision).
  const std::string& shortcut_name() const { return shortcut_name_; }

 private:
  int64_t in_, out_, stride_;
  std::string shortcut_name_;
};

}  // namespace ingot::nn

// Presets: the same layers the YAML `layers:` list builds, assembled in torch's registration
// order so that a seed gives the same draws in the same order as a layers list would.
#include "ingot/nn/presets.h"

#include "ingot/nn/activation.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/pooling.h"
#include "presets_imagenet.h"

namespace ingot::nn {

namespace {

std::shared_ptr<MaxPool2d> max_pool(int64_t k) {
  Pool2dParams p;
  p.kernel = {k, k};
  return std::make_shared<MaxPool2d>(p);
}

}  // namespace

std::shared_ptr<Sequential> make_mlp(const MlpOptions& o, Generator* gen, Generator* dropout_gen) {
  INGOT_CHECK_SHAPE(o.sizes.size() >= 2, "mlp: sizes needs at least an input and an output size, got {}",
                    o.sizes.size());
  auto net = std::make_shared<Sequential>();
  net->push_back(std::make_shared<Flatten>());
  for (size_t i = 0; i + 1 < o.sizes.size(); ++i) {
    net->push_back(std::make_shared<Linear>(o.sizes[i], o.sizes[i + 1], true, gen));
    if (i + 2 < o.sizes.size()) {
      net->push_back(make_activation(o.activation));
      if (o.dropout > 0.0) net->push_back(std::make_shared<Dropout>(o.dropout, dropout_gen));
    }
  }
  return net;
}

std::shared_ptr<Sequential> make_simple_cnn(const SimpleCnnOptions& o, Generator* gen, Generator* dropout_gen) {
  INGOT_CHECK_SHAPE(o.height >= 4 && o.width >= 4, "simple_cnn: input {}x{} must be at least 4x4", o.height, o.width);
  Conv2dOptions c;
  c.padding = {1, 1};
  c.bias = false;
  auto net = std::make_shared<Sequential>();
  net->push_back(std::make_shared<Conv2d>(o.in_channels, o.channels, 3, c, gen));
  net->push_back(std::make_shared<BatchNorm2d>(o.channels));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(max_pool(2));
  net->push_back(std::make_shared<Conv2d>(o.channels, 2 * o.channels, 3, c, gen));
  net->push_back(std::make_shared<BatchNorm2d>(2 * o.channels));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(max_pool(2));
  net->push_back(std::make_shared<Flatten>());
  const int64_t features = 2 * o.channels * (o.height / 4) * (o.width / 4);
  net->push_back(std::make_shared<Linear>(features, o.hidden, true, gen));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(std::make_shared<Dropout>(o.dropout, dropout_gen));
  net->push_back(std::make_shared<Linear>(o.hidden, o.classes, true, gen));
  return net;
}

std::shared_ptr<Sequential> make_resnet(const ResNetOptions& o, Generator* gen) {
  if (o.style == "imagenet") return detail::make_imagenet_resnet(o, gen);
  INGOT_CHECK(o.style == "cifar", "resnet: style '{}' is not cifar or imagenet", o.style);
  INGOT_CHECK(o.depth >= 8 && (o.depth - 2) % 6 == 0, "resnet: depth {} must be 6n + 2 (8, 14, 20, 32, 44, 56, ...)",
              o.depth);
  const int64_t n = (o.depth - 2) / 6;
  Conv2dOptions c;
  c.padding = {1, 1};
  c.bias = false;
  auto net = std::make_shared<Sequential>();
  net->push_back("conv1", std::make_shared<Conv2d>(o.in_channels, o.width, 3, c, gen));
  net->push_back("bn1", std::make_shared<BatchNorm2d>(o.width));
  net->push_back("relu", std::make_shared<ReLU>());
  int64_t in = o.width;
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t out = o.width << stage;
    auto layer = std::make_shared<Sequential>();
    for (int64_t b = 0; b < n; ++b) {
      layer->push_back(std::make_shared<BasicBlock>(in, out, b == 0 && stage > 0 ? 2 : 1, gen));
      in = out;
    }
    net->push_back("layer" + std::to_string(stage + 1), layer);
  }
  net->push_back("pool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  net->push_back("flatten", std::make_shared<Flatten>());
  net->push_back("fc", std::make_shared<Linear>(in, o.classes, true, gen));
  if (o.zero_init_residual) detail::zero_init_residual(*net);
  return net;
}

}  // namespace ingot::nn

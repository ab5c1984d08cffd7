// The ImageNet presets in torchvision's layout (torchvision.models.resnet / vgg / mobilenetv2):
// the same children, names, registration order and initial distributions, so that a state_dict
// moves between the two unchanged. Parameters are first drawn by the layers' constructors (in
// registration order), then redrawn with torchvision's distributions in module order.
#include <cmath>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/bottleneck.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/init.h"
#include "ingot/nn/inverted_residual.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/pooling.h"
#include "presets_imagenet.h"

namespace ingot::nn {

namespace {

// torch.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"): N(0, 2 / fan_out).
void kaiming_normal_fan_out(Tensor w, Generator& gen) {
  const int64_t fan_out = init::fans(w.shape()).second;
  w.detach().copy_(init::normal(w.shape(), 0.0, std::sqrt(2.0 / static_cast<double>(fan_out)), gen));
}

// torchvision's loop over self.modules(): convs kaiming_normal (fan_out) with zero bias, and
// with `linear_std` > 0 every Linear N(0, linear_std^2) with zero bias. BatchNorms are already 1 / 0.
void torchvision_init(Module& model, Generator* gen, double linear_std) {
  NoGradGuard no_grad;
  Generator& g = init::generator_or_default(gen);
  for (auto& [name, m] : model.named_modules()) {
    if (auto* conv = dynamic_cast<Conv2d*>(m)) {
      kaiming_normal_fan_out(conv->weight(), g);
      if (conv->bias().defined()) conv->bias().detach().fill_(0.0);
    } else if (auto* linear = dynamic_cast<Linear*>(m); linear != nullptr && linear_std > 0) {
      linear->weight().detach().copy_(init::normal(linear->weight().shape(), 0.0, linear_std, g));
      if (linear->bias().defined()) linear->bias().detach().fill_(0.0);
    }
  }
}

std::shared_ptr<MaxPool2d> max_pool(int64_t kernel, int64_t stride, int64_t padding) {
  Pool2dParams p;
  p.kernel = {kernel, kernel};
  p.stride = {stride, stride};
  p.padding = {padding, padding};
  return std::make_shared<MaxPool2d>(p);
}

// torchvision's _make_divisible: v rounded to the nearest multiple of `divisor` (at least
// divisor), one divisor more when rounding lost over 10%.
int64_t make_divisible(double v, int64_t divisor) {
  int64_t out = std::max<int64_t>(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(out) < 0.9 * v) out += divisor;
  return out;
}

}  // namespace

bool is_imagenet_resnet_depth(int64_t depth) {
  return depth == 18 || depth == 34 || depth == 50 || depth == 101 || depth == 152;
}

void detail::zero_init_residual(Module& model) {
  NoGradGuard no_grad;
  for (auto& [name, m] : model.named_modules()) {
    const char* last = dynamic_cast<Bottleneck*>(m) ? "bn3" : dynamic_cast<BasicBlock*>(m) ? "bn2" : nullptr;
    if (last == nullptr) continue;
    if (auto* bn = dynamic_cast<BatchNorm2d*>(m->get_submodule(last).get()); bn != nullptr && bn->weight().defined())
      bn->weight().detach().fill_(0.0);
  }
}

std::shared_ptr<Sequential> detail::make_imagenet_resnet(const ResNetOptions& o, Generator* gen) {
  INGOT_CHECK(is_imagenet_resnet_depth(o.depth), "resnet: depth {} of style imagenet must be 18, 34, 50, 101 or 152",
              o.depth);
  INGOT_CHECK(o.width >= 1, "resnet: width {} must be >= 1", o.width);
  const bool bottleneck = o.depth >= 50;
  const std::array<int64_t, 4> blocks = o.depth == 18    ? std::array<int64_t, 4>{2, 2, 2, 2}
                                        : o.depth == 101 ? std::array<int64_t, 4>{3, 4, 23, 3}
                                        : o.depth == 152 ? std::array<int64_t, 4>{3, 8, 36, 3}
                                                         : std::array<int64_t, 4>{3, 4, 6, 3};
  Conv2dOptions stem;
  stem.stride = {2, 2};
  stem.padding = {3, 3};
  stem.bias = false;
  auto net = std::make_shared<Sequential>();
  net->push_back("conv1", std::make_shared<Conv2d>(o.in_channels, o.width, 7, stem, gen));
  net->push_back("bn1", std::make_shared<BatchNorm2d>(o.width));
  net->push_back("relu", std::make_shared<ReLU>());
  net->push_back("maxpool", max_pool(3, 2, 1));
  int64_t in = o.width;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = o.width << stage;
    auto layer = std::make_shared<Sequential>();
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = b == 0 && stage > 0 ? 2 : 1;
      if (bottleneck) {
        layer->push_back(std::make_shared<Bottleneck>(in, width, stride, gen));
        in = width * Bottleneck::kExpansion;
      } else {
        layer->push_back(std::make_shared<BasicBlock>(in, width, stride, gen, "downsample"));
        in = width;
      }
    }
    net->push_back("layer" + std::to_string(stage + 1), layer);
  }
  net->push_back("avgpool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  net->push_back("flatten", std::make_shared<Flatten>());
  net->push_back("fc", std::make_shared<Linear>(in, o.classes, true, gen));
  torchvision_init(*net, gen, 0.0);
  if (o.zero_init_residual) zero_init_residual(*net);
  return net;
}

std::shared_ptr<Sequential> make_vgg(const VggOptions& o, Generator* gen, Generator* dropout_gen) {
  // Channels of each conv; 0 is a 2x2 max pool (torchvision's "M").
  std::vector<int64_t> cfg;
  switch (o.depth) {
    case 11:
      cfg = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
      break;
    case 13:
      cfg = {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
      break;
    case 16:
      cfg = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
      break;
    case 19:
      cfg = {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0};
      break;
    default:
      INGOT_CHECK(false, "vgg: depth {} must be 11, 13, 16 or 19", o.depth);
  }
  INGOT_CHECK(o.hidden >= 1 && o.pool >= 1 && o.classes >= 1, "vgg: hidden {}, pool {} and classes {} must be >= 1",
              o.hidden, o.pool, o.classes);
  auto features = std::make_shared<Sequential>();
  int64_t in = o.in_channels;
  Conv2dOptions c;
  c.padding = {1, 1};
  for (const int64_t v : cfg) {
    if (v == 0) {
      features->push_back(max_pool(2, 2, 0));
      continue;
    }
    features->push_back(std::make_shared<Conv2d>(in, v, 3, c, gen));
    if (o.batch_norm) features->push_back(std::make_shared<BatchNorm2d>(v));
    features->push_back(std::make_shared<ReLU>());
    in = v;
  }
  auto classifier = std::make_shared<Sequential>();
  classifier->push_back(std::make_shared<Linear>(512 * o.pool * o.pool, o.hidden, true, gen));
  classifier->push_back(std::make_shared<ReLU>());
  classifier->push_back(std::make_shared<Dropout>(o.dropout, dropout_gen));
  classifier->push_back(std::make_shared<Linear>(o.hidden, o.hidden, true, gen));
  classifier->push_back(std::make_shared<ReLU>());
  classifier->push_back(std::make_shared<Dropout>(o.dropout, dropout_gen));
  classifier->push_back(std::make_shared<Linear>(o.hidden, o.classes, true, gen));
  auto net = std::make_shared<Sequential>();
  net->push_back("features", features);
  net->push_back("avgpool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{o.pool, o.pool}));
  net->push_back("flatten", std::make_shared<Flatten>());
  net->push_back("classifier", classifier);
  torchvision_init(*net, gen, 0.01);
  return net;
}

std::shared_ptr<Sequential> make_mobilenet_v2(const MobileNetV2Options& o, Generator* gen, Generator* dropout_gen) {
  INGOT_CHECK(o.width_mult > 0 && o.classes >= 1, "mobilenet_v2: width_mult {} must be > 0 and classes {} >= 1",
              o.width_mult, o.classes);
  constexpr int64_t kRound = 8;
  // (expansion t, channels c, blocks n, first stride s), Table 2 of the paper.
  constexpr std::array<std::array<int64_t, 4>, 7> kSettings = {
      {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}}};
  int64_t in = make_divisible(32 * o.width_mult, kRound);
  const int64_t last = make_divisible(1280 * std::max(1.0, o.width_mult), kRound);
  auto features = std::make_shared<Sequential>();
  features->push_back(conv_bn_relu6(o.in_channels, in, 3, 2, 1, gen));
  for (const auto& [t, c, n, s] : kSettings) {
    const int64_t out = make_divisible(static_cast<double>(c) * o.width_mult, kRound);
    for (int64_t i = 0; i < n; ++i) {
      features->push_back(std::make_shared<InvertedResidual>(in, out, i == 0 ? s : 1, t, gen));
      in = out;
    }
  }
  features->push_back(conv_bn_relu6(in, last, 1, 1, 1, gen));
  auto classifier = std::make_shared<Sequential>();
  classifier->push_back(std::make_shared<Dropout>(o.dropout, dropout_gen));
  classifier->push_back(std::make_shared<Linear>(last, o.classes, true, gen));
  auto net = std::make_shared<Sequential>();
  net->push_back("features", features);
  net->push_back("avgpool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  net->push_back("flatten", std::make_shared<Flatten>());
  net->push_back("classifier", classifier);
  torchvision_init(*net, gen, 0.01);
  return net;
}

}  // namespace ingot::nn

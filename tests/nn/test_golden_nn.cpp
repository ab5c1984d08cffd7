// Parity with torch.nn (fixtures from tests/golden/make_nn.py): each module loads torch's
// state_dict by name (strict, so Ingot's names must equal torch's), then its output, the
// gradients of its input and of every parameter, and its buffers after the step must match.
// Tolerances (f32, |a - b| <= atol + rtol |b|): outputs 1e-5 + 1e-4 |b| for single layers,
// 1e-4 + 1e-3 |b| for blocks and presets (longer chains of f32 reductions); gradients twice that.
#include <catch2/catch.hpp>

#include <functional>

#include "ingot/io/safetensors.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

const io::SafetensorsFile& fixture(const std::string& file) {
  static std::map<std::string, io::SafetensorsFile> cache;
  auto it = cache.find(file);
  if (it == cache.end())
    it = cache.emplace(file, io::load_safetensors(std::string(INGOT_GOLDEN_DIR) + "/" + file)).first;
  return it->second;
}

std::map<std::string, Tensor> with_prefix(const io::SafetensorsFile& f, const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : f.tensors) {
    if (name.rfind(prefix, 0) == 0) out[name.substr(prefix.size())] = t;
  }
  return out;
}

struct GoldenCase {
  std::string name;
  std::function<ModulePtr()> make;
};

void run_case(const std::string& file, const GoldenCase& c, double atol, double rtol) {
  INFO("case " << c.name);
  const io::SafetensorsFile& f = fixture(file);
  const auto t = [&](const std::string& key) {
    const auto it = f.tensors.find(c.name + "." + key);
    INGOT_CHECK(it != f.tensors.end(), "fixture {} has no {}.{}", file, c.name, key);
    return it->second;
  };
  ModulePtr m = c.make();
  m->load_state_dict(with_prefix(f, c.name + ".state."), /*strict=*/true);
  m->train(f.metadata.at(c.name + ".mode") == "train");
  Tensor x = t("input").clone();
  const bool float_input = is_floating(x.dtype());
  if (float_input) x.set_requires_grad(true);
  const Tensor y = m->forward(x);
  INGOT_REQUIRE_CLOSE(y, t("output"), atol, rtol);

  y.backward(t("grad_output"));
  if (float_input) {
    REQUIRE(x.grad().defined());
    INGOT_REQUIRE_CLOSE(x.grad(), t("grad_input"), 2 * atol, 2 * rtol);
  }
  const auto grads = with_prefix(f, c.name + ".grad.");
  const auto params = m->named_parameters();
  REQUIRE(grads.size() == params.size());
  for (const auto& [name, p] : params) {
    INFO("grad of " << name);
    REQUIRE(grads.count(name) == 1);
    REQUIRE(p.grad().defined());
    INGOT_REQUIRE_CLOSE(p.grad(), grads.at(name), 2 * atol, 2 * rtol);
  }
  const auto after = with_prefix(f, c.name + ".after.");
  REQUIRE(after.size() == m->named_buffers().size());
  for (const auto& [name, b] : m->named_buffers()) {
    INFO("buffer " << name << " after the step");
    INGOT_REQUIRE_CLOSE(b, after.at(name), atol, rtol);
  }
}

Pool2dParams pool(int64_t k, int64_t s, int64_t p, bool ceil = false, bool include_pad = true) {
  Pool2dParams q;
  q.kernel = {k, k};
  q.stride = {s, s};
  q.padding = {p, p};
  q.ceil_mode = ceil;
  q.count_include_pad = include_pad;
  return q;
}

Conv2dOptions conv(int64_t stride, int64_t pad, int64_t dilation, int64_t groups, bool bias) {
  return Conv2dOptions{{stride, stride}, {pad, pad}, {dilation, dilation}, groups, bias};
}

template <class M, class... A>
std::function<ModulePtr()> make(A... args) {
  return [=] { return std::make_shared<M>(args...); };
}

std::function<ModulePtr()> from_yaml(const std::string& yaml) {
  return [=] {
    Generator g(0);
    return build_model(YAML::Load(yaml), "golden.yaml", g);
  };
}

}  // namespace

TEST_CASE("nn golden: single modules match torch.nn", "[nn][golden]") {
  BatchNormOptions m03;
  m03.momentum = 0.3;
  const std::vector<GoldenCase> cases = {
      {"linear", make<Linear>(5, 3, true, nullptr)},
      {"linear_3d_nobias", make<Linear>(5, 3, false, nullptr)},
      {"conv_p1", make<Conv2d>(3, 4, 3, conv(1, 1, 1, 1, true), nullptr)},
      {"conv_s2_g2", make<Conv2d>(4, 6, 3, conv(2, 1, 1, 2, true), nullptr)},
      {"conv_d2_nobias", make<Conv2d>(2, 2, 3, conv(1, 2, 2, 1, false), nullptr)},
      {"bn_train", make<BatchNorm2d>(3, BatchNormOptions{})},
      {"bn_train_m03", make<BatchNorm2d>(3, m03)},
      {"bn_eval", make<BatchNorm2d>(3, BatchNormOptions{})},
      {"layernorm", make<LayerNorm>(Shape{6}, 1e-5, true)},
      {"maxpool_k3s2p1", make<MaxPool2d>(pool(3, 2, 1))},
      {"maxpool_ceil", make<MaxPool2d>(pool(2, 2, 0, true))},
      {"avgpool_k3s2p1_nopad", make<AvgPool2d>(pool(3, 2, 1, false, false))},
      {"avgpool_k2", make<AvgPool2d>(pool(2, 2, 0))},
      {"adaptive_3", make<AdaptiveAvgPool2d>(std::array<int64_t, 2>{3, 3})},
      {"adaptive_1", make<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1})},
      {"embedding", make<Embedding>(10, 4, nullptr)},
      {"relu", make<ReLU>()},
      {"gelu", make<GELU>()},
      {"sigmoid", make<Sigmoid>()},
      {"tanh", make<Tanh>()},
      {"flatten", make<Flatten>(1, -1)},
      {"dropout_eval", make<Dropout>(0.5, nullptr)},
  };
  for (const GoldenCase& c : cases) run_case("nn_modules.safetensors", c, 1e-5, 1e-4);
}

TEST_CASE("nn golden: BasicBlock and presets match torch.nn", "[nn][golden]") {
  const std::vector<GoldenCase> cases = {
      {"block_identity", make<BasicBlock>(4, 4, 1, nullptr)},
      {"block_projection", make<BasicBlock>(4, 8, 2, nullptr)},
      {"block_projection_eval", make<BasicBlock>(4, 8, 2, nullptr)},
      {"mlp", from_yaml("{preset: mlp, sizes: [12, 10, 8, 4], activation: gelu}")},
      {"simple_cnn", from_yaml("{preset: simple_cnn, input_shape: [1, 8, 8], width: 4, hidden: 16, classes: 5, "
                               "dropout: 0.0}")},
      {"resnet8", from_yaml("{preset: resnet, depth: 8, width: 4, in_channels: 3, classes: 3}")},
      {"resnet8_eval", from_yaml("{preset: resnet, depth: 8, width: 4, in_channels: 3, classes: 3}")},
  };
  for (const GoldenCase& c : cases) run_case("nn_presets.safetensors", c, 1e-4, 1e-3);
}

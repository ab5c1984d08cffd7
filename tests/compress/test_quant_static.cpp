// Static quantization: Conv-BN folding, unit discovery, int8 CNNs against their f32 originals, the
// u8 chain between int8 layers of a Sequential, residual blocks, and the accuracy gate.
#include <catch2/catch.hpp>

#include <typeinfo>

#include "accuracy_gate.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/fusion.h"
#include "ingot/nn/sequential.h"
#include "ingot/ops/creation.h"
#include "ingot/train/evaluate.h"
#include "passthrough.h"
#include "quant_test_util.h"
#include "quantized_layers.h"
#include "test_support.h"

namespace ingot::quant {
namespace {

using test_util::argmax_agreement;
using test_util::outputs;

const QuantizedLayer* qlayer(nn::Module& m, const std::string& path) {
  return dynamic_cast<const QuantizedLayer*>(m.get_submodule(path).get());
}

}  // namespace

TEST_CASE("a folded Conv2d equals Conv2d -> BatchNorm2d in eval within 1e-5", "[quant]") {
  for (const bool bias : {false, true}) {
    Generator gen(3);
    nn::Conv2dOptions o;
    o.padding = {1, 1};
    o.stride = {2, 1};
    o.bias = bias;
    auto model = std::make_shared<nn::Sequential>(
        std::initializer_list<nn::ModulePtr>{std::make_shared<nn::Conv2d>(3, 6, 3, o, &gen),
                                             std::make_shared<nn::BatchNorm2d>(6), std::make_shared<nn::ReLU>()});
    test_util::randomize_batch_norms(*model, 11);
    model->eval();
    const Tensor x = test::random_tensor(Shape{2, 3, 9, 7}, DType::F32, 5);
    NoGradGuard no_grad;
    Tensor want;
    {
      nn::NoFusionGuard unfused;
      want = (*model)(x);
    }
    std::vector<Unit> units = find_units(*model, false);
    REQUIRE(units.size() == 1);
    CHECK(units[0].bn == "1");
    CHECK(units[0].relu == "2");
    fold_units(*model, units);
    CHECK(typeid(*(*model)[1]) == typeid(Identity));
    const auto* conv = dynamic_cast<const nn::Conv2d*>((*model)[0].get());
    REQUIRE(conv != nullptr);
    CHECK(conv->bias().defined());
    INFO("conv bias " << bias);
    INGOT_REQUIRE_CLOSE((*model)(x), want, 1e-5, 1e-5);
  }
}

TEST_CASE("units: Conv-BN-ReLU and Linear-ReLU runs of a Sequential, BasicBlock pairs", "[quant]") {
  auto cnn = test_util::small_cnn(1);
  const std::vector<Unit> u = find_units(*cnn, false);
  REQUIRE(u.size() == 4);
  CHECK(u[0].path == "0");
  CHECK(u[0].kind() == "Conv2d+BN+ReLU");
  CHECK(u[1].bn == "5");
  CHECK(u[1].relu == "6");
  CHECK(u[2].kind() == "Linear+ReLU");
  CHECK(u[3].kind() == "Linear");
  CHECK(u[3].chainable);
  CHECK(find_units(*cnn, true).size() == 2);

  Generator gen(2);
  nn::ResNetOptions r;
  r.depth = 8;
  r.width = 4;
  r.in_channels = 1;
  r.classes = 5;
  auto resnet = nn::make_resnet(r, &gen);
  resnet->eval();
  std::map<std::string, Unit> by_path;
  for (const Unit& x : find_units(*resnet, false)) by_path[x.path] = x;
  CHECK(by_path.size() == 10);  // conv1, 3 stages x (conv1, conv2), 2 shortcuts, fc
  CHECK(by_path.at("conv1").kind() == "Conv2d+BN+ReLU");
  CHECK(by_path.at("layer1.0.conv1").bn == "layer1.0.bn1");
  CHECK(by_path.at("layer1.0.conv1").relu.empty());  // the block's ReLU is functional
  CHECK_FALSE(by_path.at("layer1.0.conv2").chainable);
  CHECK(by_path.at("layer2.0.shortcut.0").bn == "layer2.0.shortcut.1");
  CHECK(by_path.at("fc").kind() == "Linear");
}

TEST_CASE("static int8 CNN agrees with the f32 CNN on >= 95% of inputs, u8 between layers", "[quant]") {
  auto model = test_util::small_cnn(4);
  auto calib = test_util::loader(256, 0);
  auto test_set = test_util::loader(512, 1);
  const std::vector<float> f32 = outputs(*model, *test_set);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib);
  REQUIRE(conv->int8_count() == 4);
  // the chain: conv -> pool -> conv -> pool, flatten -> linear -> dropout -> linear (f32 out)
  for (const char* p : {"0", "4", "9"}) CHECK(qlayer(*model, p)->requantizes());
  CHECK_FALSE(qlayer(*model, "12")->requantizes());
  CHECK(qlayer(*model, "4")->input_qparams().scale.item() == units[0].output_q.scale.item());
  CHECK(qlayer(*model, "12")->input_qparams().zero_point.item() == units[2].output_q.zero_point.item());
  CHECK(qlayer(*model, "0")->activation() == Activation::Relu);
  CHECK(typeid(*(*model)[2]) == typeid(Identity));
  DType pooled = DType::F32;
  const uint64_t hook = (*model)[3]->register_forward_hook([&](nn::Module&, const Tensor&, const Tensor& y) {
    pooled = y.dtype();
    return std::optional<Tensor>();
  });
  const std::vector<float> q = outputs(*model, *test_set);
  (*model)[3]->remove_hook(hook);
  CHECK(pooled == DType::U8);
  CHECK(argmax_agreement(q, f32, 5) >= 0.95);
  CHECK(q != f32);
}

TEST_CASE("a layer put back in f32 breaks the u8 chain around it", "[quant]") {
  auto model = test_util::small_cnn(4);
  auto calib = test_util::loader(128, 0);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib);
  conv->install({true, false, true, true});
  CHECK_FALSE(qlayer(*model, "0")->requantizes());  // its consumer is f32 now
  CHECK(qlayer(*model, "4") == nullptr);
  CHECK(typeid(*(*model)[6]) == typeid(nn::ReLU));  // the f32 layer's ReLU is back
  CHECK(qlayer(*model, "9")->input_qparams().scale.item() == units[2].input_q.scale.item());
  auto test_set = test_util::loader(64, 1);
  CHECK(outputs(*model, *test_set).size() == 64 * 5);
}

TEST_CASE("per-tensor weights and every observer kind give a close int8 model", "[quant]") {
  auto test_set = test_util::loader(256, 1);
  auto calib = test_util::loader(128, 0);
  for (const std::string& kind : observer_kinds()) {
    auto model = test_util::small_cnn(6);
    const std::vector<float> f32 = outputs(*model, *test_set);
    std::vector<Unit> units;
    QuantOptions o;
    o.per_channel = kind != "minmax";
    o.reduce_range = kind == "moving_average";
    auto conv = test_util::quantize_static(*model, units, *calib, o, {kind, 99.99});
    CHECK(qlayer(*model, "0")->weight_qparams().per_channel() == o.per_channel);
    INFO(kind);
    CHECK(argmax_agreement(outputs(*model, *test_set), f32, 5) >= 0.9);
  }
}

TEST_CASE("residual blocks quantize layer by layer with f32 outputs", "[quant]") {
  Generator gen(8);
  nn::ResNetOptions r;
  r.depth = 8;
  r.width = 4;
  r.in_channels = 1;
  r.classes = 5;
  auto model = nn::make_resnet(r, &gen);
  test_util::randomize_batch_norms(*model, 9);
  model->eval();
  auto calib = test_util::loader(128, 0);
  auto test_set = test_util::loader(256, 1);
  const std::vector<float> f32 = outputs(*model, *test_set);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib);
  CHECK(conv->int8_count() == units.size());
  for (const Unit& u : units) {
    INFO(u.path);
    CHECK_FALSE(qlayer(*model, u.path)->requantizes());
  }
  CHECK(argmax_agreement(outputs(*model, *test_set), f32, 5) >= 0.9);
}

TEST_CASE("the gate puts the most sensitive layers back in f32 until the drop is allowed", "[quant]") {
  auto model = test_util::small_cnn(4);
  auto calib = test_util::loader(128, 0);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib);
  // each int8 layer costs one point; 1.5 points allowed: three of the four go back, worst first
  const auto evaluate = [&] { return 0.9 - 0.01 * static_cast<double>(conv->int8_count()); };
  std::vector<std::string> log;
  const GateResult g = run_gate(*conv, {0.1, 0.5, 0.2, 0.05}, 0.9, 0.015, evaluate,
                                [&](const std::string& line) { log.push_back(line); });
  REQUIRE(g.steps.size() == 3);
  CHECK(g.steps[0].unit == 1);
  CHECK(g.steps[1].unit == 2);
  CHECK(g.steps[2].unit == 0);
  CHECK(g.int8_accuracy == Approx(0.89));
  CHECK(conv->is_int8(3));
  CHECK(log.size() == 4);
  CHECK(qlayer(*model, "12") != nullptr);
  CHECK(qlayer(*model, "0") == nullptr);
  // nothing to revert when the tolerance is loose
  CHECK(run_gate(*conv, {0.1, 0.5, 0.2, 0.05}, 0.9, 0.05, evaluate, [](const std::string&) {}).steps.empty());
}

TEST_CASE("the gate with real evaluations puts back the layer that breaks accuracy", "[quant]") {
  auto model = test_util::small_cnn(12);
  auto train_set = test_util::loader(512, 0);
  test_util::train_briefly(*model, *train_set);
  auto test_set = test_util::loader(512, 1, 128);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *train_set);
  const auto evaluate = [&] { return train::evaluate(*model, *test_set).accuracy; };
  conv->install(std::vector<bool>(units.size(), false));
  const double f32 = evaluate();
  REQUIRE(f32 > 0.6);  // it learned: breaking a layer shows
  // A broken int8 layer (its weights all zero): the most sensitive one, and the only one to revert.
  units[1].qweight = zeros_like(units[1].qweight);
  const std::vector<double> s = sensitivities(*model, *conv, *train_set, 2);
  CHECK(std::max_element(s.begin(), s.end()) - s.begin() == 1);
  std::vector<std::string> log;
  const GateResult g = run_gate(*conv, s, f32, 0.02, evaluate, [&](const std::string& l) { log.push_back(l); });
  REQUIRE(g.steps.size() == 1);
  CHECK(g.steps[0].unit == 1);
  CHECK(f32 - g.int8_accuracy <= 0.02);
  CHECK(conv->int8_count() == 3);
  CHECK_THAT(log.back(), Catch::Contains("4 (Conv2d+BN+ReLU, sensitivity"));
  CHECK(g.int8_accuracy == evaluate());  // what is installed is what was measured last
}

TEST_CASE("sensitivity: every int8 layer changes the output, the model is left f32", "[quant]") {
  auto model = test_util::small_cnn(4);
  auto calib = test_util::loader(128, 0);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib);
  const std::vector<double> s = sensitivities(*model, *conv, *calib, 2);
  REQUIRE(s.size() == 4);
  for (const double v : s) {
    CHECK(v > 0.0);
    CHECK(v < 0.1);
  }
  CHECK(conv->int8_count() == 0);
  CHECK(typeid(*(*model)[0]) == typeid(nn::Conv2d));
}

}  // namespace ingot::quant

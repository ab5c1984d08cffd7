// int8 models in ONNX's QDQ form (the quant plugin's exporters): a statically quantized CNN (u8
// between its layers), a ResNet (int8 layers with f32 outputs around the residual adds) and a
// dynamically quantized MLP, run by onnxruntime, against the Ingot int8 model's own logits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "calibrate.h"
#include "converter.h"
#include "ingot/base/grad_mode.h"
#include "ingot/data/data_loader.h"
#include "ingot/data/synthetic.h"
#include "ingot/nn/nn.h"
#include "layer_units.h"
#include "onnx_exporters.h"
#include "onnx_test_util.h"
#include "test_support.h"

using namespace ingot;

namespace {

// Tolerance. onnxruntime computes an int8 layer with integer kernels or in f32 on the dequantized
// values; Ingot accumulates in i32 and scales once. The two agree to f32 rounding (~1e-6 relative)
// except where a value that the next layer quantizes lies within that rounding of a rounding
// midpoint: that u8 then differs by one step (1/255 of its range), which moves the logits of that
// sample by a fraction of a percent. Such flips are rare (well under one per sample), so: most
// elements (at least half; 73-100% measured) within 1e-5 (abs + rel), and none further than 1% of
// the largest logit. An export that skipped a quantization would move nearly every element.
void check_int8(nn::Module& model, const Shape& sample, const Tensor& x) {
  const auto python = test::onnx_python_or_skip();
  if (!python) return;
  quant::register_onnx_exporters(io::onnx::exporter_registry());
  const Tensor expected = test::forward(model, x);
  const test::OnnxRun r = test::run_exported(*python, model, sample, x);
  REQUIRE(r.logits.shape() == expected.shape());
  const std::vector<float> a = r.logits.to_vector<float>(), b = expected.to_vector<float>();
  double span = 0, worst = 0;
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]);
    span = std::max(span, static_cast<double>(std::abs(b[i])));
    worst = std::max(worst, d);
    if (d <= 1e-5 + 1e-5 * std::abs(b[i])) ++same;
  }
  INFO("max |onnxruntime - ingot| " << worst << "; " << same << " of " << a.size()
                                    << " elements within 1e-5; max |logit| " << span);
  CHECK(2 * same >= a.size());
  CHECK(worst <= 0.01 * span);
  CHECK(span > 0);
}

std::unique_ptr<data::DataLoader> images(int64_t n, int64_t channels, int64_t size, int64_t classes, uint32_t split) {
  data::SyntheticSpec spec;
  spec.size = n;
  spec.channels = channels;
  spec.height = spec.width = size;
  spec.classes = classes;
  data::LoaderOptions o;
  o.batch_size = 32;
  return std::make_unique<data::DataLoader>(data::synthetic_dataset(spec, 7, split), o);
}

void randomize_batch_norms(nn::Module& model) {
  const NoGradGuard no_grad;
  uint64_t seed = 50;
  for (const auto& [name, m] : model.named_modules()) {
    auto* bn = dynamic_cast<nn::BatchNorm2d*>(m);
    if (bn == nullptr) continue;
    const Shape c{bn->num_features()};
    bn->weight().copy_(test::random_tensor(c, DType::F32, ++seed, 0.5, 1.5));
    bn->bias().copy_(test::random_tensor(c, DType::F32, ++seed, -0.3, 0.3));
    bn->running_mean().copy_(test::random_tensor(c, DType::F32, ++seed, -0.2, 0.2));
    bn->running_var().copy_(test::random_tensor(c, DType::F32, ++seed, 0.3, 2.0));
  }
}

// Static quantization as the quantize stage does it: fold, calibrate, convert every unit.
std::vector<quant::Unit> quantize_static(nn::Module& model, data::DataLoader& calib, bool per_channel) {
  model.eval();
  std::vector<quant::Unit> units = quant::find_units(model, false);
  quant::fold_units(model, units);
  quant::calibrate(model, units, calib, 4, {}, false);
  quant::QuantOptions o;
  o.per_channel = per_channel;
  quant::Converter(model, units, o).install_all();
  return units;
}

Tensor first_batch(data::DataLoader& l) {
  l.begin_epoch(0);
  return l.next()->inputs;
}

}  // namespace

TEST_CASE("onnx export int8: static CNN (u8 between layers, per-channel and per-tensor weights) in QDQ form",
          "[onnx][quant]") {
  for (bool per_channel : {true, false}) {
    INFO("per_channel " << per_channel);
    Generator gen(11);
    nn::SimpleCnnOptions o;
    o.height = o.width = 12;
    o.channels = 8;
    o.hidden = 32;
    o.classes = 5;
    auto cnn = nn::make_simple_cnn(o, &gen);
    randomize_batch_norms(*cnn);
    auto calib = images(128, 1, 12, 5, 0);
    auto test_set = images(64, 1, 12, 5, 1);
    quantize_static(*cnn, *calib, per_channel);
    REQUIRE(cnn->get_submodule("0")->type_name() == "QuantizedConv2d");
    REQUIRE(cnn->get_submodule("12")->type_name() == "QuantizedLinear");
    check_int8(*cnn, Shape{1, 12, 12}, first_batch(*test_set));
  }
}

TEST_CASE("onnx export int8: static ResNet (int8 convs, f32 residual adds) in QDQ form", "[onnx][quant]") {
  Generator gen(12);
  auto resnet = nn::make_resnet({8, 4, 3, 10}, &gen);
  randomize_batch_norms(*resnet);
  auto calib = images(64, 3, 8, 10, 0);
  auto test_set = images(32, 3, 8, 10, 1);
  quantize_static(*resnet, *calib, true);
  REQUIRE(resnet->get_submodule("layer2.0.conv1")->type_name() == "QuantizedConv2d");
  check_int8(*resnet, Shape{3, 8, 8}, first_batch(*test_set));
}

TEST_CASE("onnx export int8: dynamic MLP through DynamicQuantizeLinear, reduce_range refused", "[onnx][quant]") {
  for (bool reduce_range : {false, true}) {
    Generator gen(13);
    auto mlp = nn::make_mlp({{64, 32, 16, 4}, "relu", 0.0}, &gen);
    mlp->eval();
    std::vector<quant::Unit> units = quant::find_units(*mlp, true);
    quant::fold_units(*mlp, units);
    quant::QuantOptions o;
    o.dynamic = true;
    o.reduce_range = reduce_range;
    quant::Converter(*mlp, units, o).install_all();
    REQUIRE(mlp->get_submodule("1")->type_name() == "DynamicQuantizedLinear");
    const Tensor x = test::random_tensor(Shape{16, 1, 8, 8}, DType::F32, 5, 0.0, 1.0);
    if (!reduce_range) {
      check_int8(*mlp, Shape{1, 8, 8}, x);
    } else {
      quant::register_onnx_exporters(io::onnx::exporter_registry());
      io::onnx::ExportOptions e;
      e.input_shape = Shape{1, 8, 8};
      REQUIRE_THROWS_WITH(io::onnx::export_onnx(*mlp, e),
                          Catch::Contains("layer '1' (DynamicQuantizedLinear)") && Catch::Contains("reduce_range"));
    }
  }
}

// Static int8 against f32 inference through Ingot's dispatch (cpu_onednn) at the Fashion-MNIST
// CNN's shapes (configs/fashion_mnist_cnn.yaml: 1x28x28, conv 1->32 and 32->64 3x3 pad 1, each
// with batch norm folded, ReLU and a 2x2 max pool, then Linear 3136->128, ReLU, Linear 128->10):
// each layer alone (its input in the layout the previous layer leaves it in) and the whole
// forward pass. f32 runs what Ingot's fused inference runs (conv + bias + ReLU, matmul + bias +
// ReLU); int8 runs QCONV2D / QLINEAR with u8 activations (per-channel i8 weights, requantized
// u8 outputs with ReLU fused, f32 logits), u8 max pooling, and quantizes the input image; the
// mixed pass keeps the first convolution in f32 and quantizes its output.
//
//   OMP_NUM_THREADS=2 bench_int8 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <vector>

#include "ingot/ops/linalg.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "load_onednn.h"

namespace {

using namespace ingot;

using ingot::bench::load_onednn;

Tensor uniform_f32(const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator gen(seed);
  return uniform(s, lo, hi, DType::F32, &gen);
}
Tensor ints(const Shape& s, DType dt, uint64_t seed, double lo, double hi) {
  return uniform_f32(s, seed, lo, hi).to(dt);
}
Tensor f32s(const std::vector<float>& v) { return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}); }
Tensor i32s(const std::vector<int32_t>& v) { return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}); }

const ingot_attr_conv2d kConvAttr = conv2d_attr(Conv2dParams{.padding = {1, 1}}, true, Activation::Relu);
ingot_attr_pool2d pool_attr() {
  auto a = make_attr<ingot_attr_pool2d>();
  for (int i = 0; i < 2; ++i) a.kernel[i] = 2, a.stride[i] = 2;
  a.indices_unused = 1;
  return a;
}
ingot_attr_matmul linear_attr(bool relu) {
  auto a = make_attr<ingot_attr_matmul>();
  a.has_bias = 1;
  a.activation = relu ? INGOT_ACT_RELU : INGOT_ACT_NONE;
  return a;
}

/// One layer's weights in both precisions: f32 (w, bias) and int8 (w, per-channel scales, zero
/// points 0, the same bias), plus the output's quantization.
struct Layer {
  Shape w_shape;
  Tensor w, bias, qw, w_scale, w_zp, y_scale, y_zp;
  Layer(const Shape& shape, uint64_t seed) : w_shape(shape) {
    w = uniform_f32(shape, seed, -0.1, 0.1);
    bias = uniform_f32({shape[0]}, seed + 1, -0.1, 0.1);
    qw = ints(shape, DType::I8, seed + 2, -127, 127);
    w_scale = f32s(std::vector<float>(static_cast<size_t>(shape[0]), 0.001f));
    w_zp = i32s(std::vector<int32_t>(static_cast<size_t>(shape[0]), 0));
    y_scale = f32s({0.05f});
    y_zp = i32s({0});
  }
  /// QCONV2D / QLINEAR inputs for x quantized with (x_scale, x_zp); u8 output params unless f32.
  std::vector<Tensor> q_inputs(const Tensor& x, float x_scale, int32_t x_zp, bool requantized) const {
    std::vector<Tensor> in = {x, f32s({x_scale}), i32s({x_zp}), qw, w_scale, w_zp, bias};
    if (requantized) in.insert(in.end(), {y_scale, y_zp});
    return in;
  }
};

const Layer& conv1() {
  static const Layer l({32, 1, 3, 3}, 10);
  return l;
}
const Layer& conv2() {
  static const Layer l({64, 32, 3, 3}, 20);
  return l;
}
const Layer& fc1() {
  static const Layer l({128, 3136}, 30);
  return l;
}
const Layer& fc2() {
  static const Layer l({10, 128}, 40);
  return l;
}

// ---- the forward pass, layer by layer ----

Tensor f32_conv(const Tensor& x, const Layer& l, int64_t hw) {
  return run_op(INGOT_OP_CONV2D, {x, l.w, l.bias}, {{{x.shape()[0], l.w_shape[0], hw, hw}, DType::F32}}, &kConvAttr)[0];
}
Tensor int8_conv(const Tensor& x, const Layer& l, int64_t hw, float x_scale, int32_t x_zp) {
  return run_op(INGOT_OP_QCONV2D, l.q_inputs(x, x_scale, x_zp, true),
                {{{x.shape()[0], l.w_shape[0], hw, hw}, DType::U8}}, &kConvAttr)[0];
}
Tensor pool(const Tensor& x) {
  const auto a = pool_attr();
  const Shape s = x.shape();
  const Shape y{s[0], s[1], s[2] / 2, s[3] / 2};
  return run_op(INGOT_OP_MAX_POOL2D, {x}, {{y, x.dtype()}, {y, DType::I64}}, &a)[0];
}
Tensor f32_linear(const Tensor& x, const Layer& l, bool relu) {
  const auto a = linear_attr(relu);
  return run_op(INGOT_OP_MATMUL, {x, l.w.transpose(0, 1), l.bias}, {{{x.shape()[0], l.w_shape[0]}, DType::F32}}, &a)[0];
}
Tensor int8_linear(const Tensor& x, const Layer& l, bool relu, float x_scale) {
  const auto a = linear_attr(relu);
  return run_op(INGOT_OP_QLINEAR, l.q_inputs(x, x_scale, 0, relu),
                {{{x.shape()[0], l.w_shape[0]}, relu ? DType::U8 : DType::F32}}, &a)[0];
}
Tensor flatten(const Tensor& x) { return x.strided().reshape({x.shape()[0], -1}); }

Tensor image(int64_t batch) { return uniform_f32({batch, 1, 28, 28}, 1, -0.5, 2.8); }  // normalized pixels
Tensor quantize_image(const Tensor& x) {
  auto a = make_attr<ingot_attr_quantize>();
  a.quant_max = 255;
  return run_op(INGOT_OP_QUANTIZE, {x, f32s({0.0131f}), i32s({38})}, {{x.shape(), DType::U8}}, &a)[0];
}

Tensor forward_f32(const Tensor& x) {
  Tensor h = pool(f32_conv(x, conv1(), 28));
  h = flatten(pool(f32_conv(h, conv2(), 14)));
  return f32_linear(f32_linear(h, fc1(), true), fc2(), false);
}
Tensor forward_int8(const Tensor& x) {
  Tensor h = pool(int8_conv(quantize_image(x), conv1(), 28, 0.0131f, 38));
  h = flatten(pool(int8_conv(h, conv2(), 14, 0.05f, 0)));
  return int8_linear(int8_linear(h, fc1(), true, 0.05f), fc2(), false, 0.05f);
}

/// conv1 (one input channel, where int8 gains nothing) kept in f32, its output quantized in its
/// own layout, the rest int8.
Tensor forward_mixed(const Tensor& x) {
  auto a = make_attr<ingot_attr_quantize>();
  a.quant_max = 255;
  const Tensor h1 = f32_conv(x, conv1(), 28);
  Tensor h = pool(run_op(INGOT_OP_QUANTIZE, {h1, f32s({0.05f}), i32s({0})}, {{h1.shape(), DType::U8}}, &a)[0]);
  h = flatten(pool(int8_conv(h, conv2(), 14, 0.05f, 0)));
  return int8_linear(int8_linear(h, fc1(), true, 0.05f), fc2(), false, 0.05f);
}

// ---- benchmarks: state.range(0) is the batch ----

/// precision 0 f32, 1 int8, 2 int8 after an f32 first convolution
void network(benchmark::State& state, int precision) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const Tensor x = image(state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(precision == 0 ? forward_f32(x) : precision == 1 ? forward_int8(x) : forward_mixed(x));
}

/// layer 0..3 (conv1, conv2, fc1, fc2) with the input the forward pass gives it.
void layer(benchmark::State& state, int which, bool int8) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const Tensor x = image(state.range(0));
  Tensor in = int8 ? quantize_image(x) : x;
  if (which >= 1) in = pool(int8 ? int8_conv(in, conv1(), 28, 0.0131f, 38) : f32_conv(in, conv1(), 28));
  if (which >= 2) in = flatten(pool(int8 ? int8_conv(in, conv2(), 14, 0.05f, 0) : f32_conv(in, conv2(), 14)));
  if (which >= 3) in = int8 ? int8_linear(in, fc1(), true, 0.05f) : f32_linear(in, fc1(), true);
  auto run = [&] {
    switch (which) {
      case 0:
        return int8 ? int8_conv(in, conv1(), 28, 0.0131f, 38) : f32_conv(in, conv1(), 28);
      case 1:
        return int8 ? int8_conv(in, conv2(), 14, 0.05f, 0) : f32_conv(in, conv2(), 14);
      case 2:
        return int8 ? int8_linear(in, fc1(), true, 0.05f) : f32_linear(in, fc1(), true);
      default:
        return int8 ? int8_linear(in, fc2(), false, 0.05f) : f32_linear(in, fc2(), false);
    }
  };
  state.SetLabel(run().is_opaque() ? "output blocked" : "output strided");
  for (auto _ : state) benchmark::DoNotOptimize(run());
}

}  // namespace

// Each benchmark twice, named label_f32 and label_int8, at batch 256 and 1.
#define INGOT_INT8_PAIR(fn, label, ...)                  \
  BENCHMARK_CAPTURE(fn, label##_f32, __VA_ARGS__, false) \
      ->Arg(256)                                         \
      ->Arg(1)                                           \
      ->Unit(benchmark::kMillisecond)                    \
      ->MeasureProcessCPUTime()                          \
      ->UseRealTime();                                   \
  BENCHMARK_CAPTURE(fn, label##_int8, __VA_ARGS__, true) \
      ->Arg(256)                                         \
      ->Arg(1)                                           \
      ->Unit(benchmark::kMillisecond)                    \
      ->MeasureProcessCPUTime()                          \
      ->UseRealTime()

INGOT_INT8_PAIR(layer, conv1, 0);
INGOT_INT8_PAIR(layer, conv2, 1);
INGOT_INT8_PAIR(layer, fc1, 2);
INGOT_INT8_PAIR(layer, fc2, 3);
BENCHMARK_CAPTURE(network, forward_f32, 0)
    ->Arg(256)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();
BENCHMARK_CAPTURE(network, forward_int8, 1)
    ->Arg(256)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();
BENCHMARK_CAPTURE(network, forward_int8_f32_conv1, 2)
    ->Arg(256)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

BENCHMARK_MAIN();

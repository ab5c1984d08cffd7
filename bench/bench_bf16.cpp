// bf16 against f32 through Ingot's dispatch (cpu_onednn): the convolutions and matmuls of one
// training step of the Fashion-MNIST CNN (configs/fashion_mnist_cnn.yaml: batch 128, 1x28x28,
// width 32, hidden 128) and the MLP's widest Linear, forward and both backward ops, each in f32
// and in bf16; plus the casts autocast adds around them. run_op as the training step calls it
// (outputs allocated, free to stay in the backend's blocked layout; inputs NCHW / row-major).
//
//   OMP_NUM_THREADS=2 bench_bf16 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdio>

#include "ingot/ops/linalg.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/runtime/plugin_loader.h"
#include "load_onednn.h"

namespace {

using namespace ingot;

using ingot::bench::load_onednn;

Tensor input(const Shape& s, DType dt, uint64_t seed) {
  Generator gen(seed);
  return uniform(s, -1.0, 1.0, DType::F32, &gen).to(dt);
}

/// 3x3, stride 1, padding 1, no bias.
ingot_attr_conv2d conv_attr() { return conv2d_attr(Conv2dParams{.padding = {1, 1}}, false, Activation::None); }

struct ConvShape {
  Shape x, w, y;
};
// conv1: 1 -> 32 channels at 28x28; conv2: 32 -> 64 at 14x14 (after the 2x2 pool)
const ConvShape kConv1{{128, 1, 28, 28}, {32, 1, 3, 3}, {128, 32, 28, 28}};
const ConvShape kConv2{{128, 32, 14, 14}, {64, 32, 3, 3}, {128, 64, 14, 14}};

void conv(benchmark::State& state, OpKind op, const ConvShape& s, DType dt) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const auto attr = conv_attr();
  std::vector<Tensor> in;
  Shape out;
  if (op == INGOT_OP_CONV2D) {
    in = {input(s.x, dt, 1), input(s.w, dt, 2)}, out = s.y;
  } else if (op == INGOT_OP_CONV2D_BWD_DATA) {
    in = {input(s.y, dt, 1), input(s.w, dt, 2)}, out = s.x;
  } else {
    in = {input(s.x, dt, 1), input(s.y, dt, 2)}, out = s.w;
  }
  state.SetLabel(select_backend(op, in, {{out, dt}}, &attr).name());
  for (auto _ : state) benchmark::DoNotOptimize(run_op(op, in, {{out, dt}}, &attr));
}

// fc1 of the CNN: [128, 3136] x w^T with w [128, 3136], bias, relu; its two gradients as
// autograd computes them (g w, and (g^T x)^T through a transposed operand). mlp_fc1: 784 -> 512.
void linear(benchmark::State& state, int64_t in_features, int64_t out_features, int which, DType dt) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const int64_t batch = 128;
  auto attr = make_attr<ingot_attr_matmul>();
  std::vector<Tensor> in;
  Shape out;
  if (which == 0) {  // forward
    attr.has_bias = 1;
    attr.activation = INGOT_ACT_RELU;
    in = {input({batch, in_features}, dt, 1), input({out_features, in_features}, dt, 2).transpose(0, 1),
          input({out_features}, dt, 3)};
    out = {batch, out_features};
  } else if (which == 1) {  // grad input = g w
    in = {input({batch, out_features}, dt, 1), input({out_features, in_features}, dt, 2)};
    out = {batch, in_features};
  } else {  // grad weight = g^T x
    in = {input({batch, out_features}, dt, 1).transpose(0, 1), input({batch, in_features}, dt, 2)};
    out = {out_features, in_features};
  }
  state.SetLabel(select_backend(INGOT_OP_MATMUL, in, {{out, dt}}, &attr).name());
  for (auto _ : state) benchmark::DoNotOptimize(run_op(INGOT_OP_MATMUL, in, {{out, dt}}, &attr));
}

// The casts autocast adds per conv layer under its policy (batch norm in f32): the bf16 conv
// output up to f32, straight from its blocked layout (cast_up_blocked: the output stays blocked)
// or from NCHW (cast_up_nchw: what Tensor::to runs after reordering the tensor to strided), and
// the f32 activation down to bf16 for the next conv.
void cast_up(benchmark::State& state, bool blocked) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const auto attr = conv_attr();
  Tensor y = run_op(INGOT_OP_CONV2D, {input(kConv2.x, DType::BF16, 1), input(kConv2.w, DType::BF16, 2)},
                    {{kConv2.y, DType::BF16}}, &attr)[0];
  if (!blocked) y = y.strided();
  state.SetLabel(y.is_opaque() ? "from blocked" : "from NCHW");
  for (auto _ : state) benchmark::DoNotOptimize(run_op(INGOT_OP_CAST, {y}, {{kConv2.y, DType::F32}}));
}

void cast_down(benchmark::State& state) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const Tensor x = input(kConv2.x, DType::F32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(run_op(INGOT_OP_CAST, {x}, {{kConv2.x, DType::BF16}}));
}

}  // namespace

// Each benchmark twice, named label_f32 and label_bf16.
#define INGOT_BF16_PAIR(fn, label, ...)                         \
  BENCHMARK_CAPTURE(fn, label##_f32, __VA_ARGS__, DType::F32)   \
      ->Unit(benchmark::kMillisecond)                           \
      ->MeasureProcessCPUTime()                                 \
      ->UseRealTime();                                          \
  BENCHMARK_CAPTURE(fn, label##_bf16, __VA_ARGS__, DType::BF16) \
      ->Unit(benchmark::kMillisecond)                           \
      ->MeasureProcessCPUTime()                                 \
      ->UseRealTime()

INGOT_BF16_PAIR(conv, conv1_fwd, INGOT_OP_CONV2D, kConv1);
INGOT_BF16_PAIR(conv, conv1_bwd_weight, INGOT_OP_CONV2D_BWD_WEIGHT, kConv1);
INGOT_BF16_PAIR(conv, conv2_fwd, INGOT_OP_CONV2D, kConv2);
INGOT_BF16_PAIR(conv, conv2_bwd_data, INGOT_OP_CONV2D_BWD_DATA, kConv2);
INGOT_BF16_PAIR(conv, conv2_bwd_weight, INGOT_OP_CONV2D_BWD_WEIGHT, kConv2);
INGOT_BF16_PAIR(linear, fc1_fwd, 3136, 128, 0);
INGOT_BF16_PAIR(linear, fc1_bwd_data, 3136, 128, 1);
INGOT_BF16_PAIR(linear, fc1_bwd_weight, 3136, 128, 2);
INGOT_BF16_PAIR(linear, mlp_fc1_fwd, 784, 512, 0);
INGOT_BF16_PAIR(linear, mlp_fc1_bwd_data, 784, 512, 1);
INGOT_BF16_PAIR(linear, mlp_fc1_bwd_weight, 784, 512, 2);
BENCHMARK_CAPTURE(cast_up, blocked, true)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK_CAPTURE(cast_up, nchw, false)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(cast_down)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

BENCHMARK_MAIN();

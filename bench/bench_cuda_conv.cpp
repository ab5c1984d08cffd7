// Convolution on the GPU (N=32, C=K=64, 56x56, 3x3, pad 1, NCHW): Ingot's conv2d forward,
// backward-data and backward-weight (cuDNN through the cuda plugin) against cuDNN's legacy API
// called directly with the same heuristic algorithm choice, in f32 and f16.
#include <cudnn.h>

#include "bench_cuda_util.h"
#include "ingot/ops/linalg.h"

namespace {

using namespace ingot;
const Shape kX{32, 64, 56, 56}, kW{64, 64, 3, 3};

Conv2dParams params() {
  Conv2dParams p;
  p.padding = {1, 1};
  return p;
}
DType dtype_of(int64_t v) { return v == 1 ? DType::F16 : DType::F32; }

// direction: 0 forward, 1 backward data, 2 backward weight.
void BM_ingot_conv(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const int dir = static_cast<int>(state.range(0));
  const DType dt = dtype_of(state.range(1));
  const Tensor x = bench::gpu_random(kX, dt), w = bench::gpu_random(kW, dt), gy = bench::gpu_random(kX, dt);
  auto once = [&] {
    if (dir == 0) return conv2d(x, w, Tensor(), params());
    if (dir == 1) return conv2d_backward_data(gy, w, kX, params());
    return conv2d_backward_weight(x, gy, kW, params());
  };
  Tensor out = once();
  bench::sync();
  for (auto _ : state) {
    out = once();
    bench::sync();
  }
  state.counters["TFLOPS"] = benchmark::Counter(2.0 * 32 * 64 * 56 * 56 * 64 * 9 / 1e12, benchmark::Counter::kIsIterationInvariantRate);
}

#define DNN(call) BENCH_CHECK((call) == CUDNN_STATUS_SUCCESS)

void BM_cudnn_direct(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const int dir = static_cast<int>(state.range(0));
  const DType dt = dtype_of(state.range(1));
  const cudnnDataType_t t = dt == DType::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const Tensor x = bench::gpu_random(kX, dt), w = bench::gpu_random(kW, dt), y = bench::gpu_random(kX, dt);
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  DNN(cudnnCreate(&h));
  DNN(cudnnCreateTensorDescriptor(&xd));
  DNN(cudnnCreateTensorDescriptor(&yd));
  DNN(cudnnCreateFilterDescriptor(&wd));
  DNN(cudnnCreateConvolutionDescriptor(&cd));
  DNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, t, 32, 64, 56, 56));
  DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, t, 32, 64, 56, 56));
  DNN(cudnnSetFilter4dDescriptor(wd, t, CUDNN_TENSOR_NCHW, 64, 64, 3, 3));
  DNN(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  DNN(cudnnSetConvolutionMathType(cd, dt == DType::F16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
  size_t bytes = 0;
  int n = 0;
  cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  cudnnConvolutionBwdDataAlgoPerf_t dp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  if (dir == 0) {
    DNN(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, fp));
    DNN(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, fp[0].algo, &bytes));
  } else if (dir == 1) {
    DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, dp));
    DNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, dp[0].algo, &bytes));
  } else {
    DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, wp));
    DNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, wp[0].algo, &bytes));
  }
  void* ws = nullptr;
  BENCH_CHECK(cudaMalloc(&ws, bytes > 0 ? bytes : 1) == cudaSuccess);
  const float one = 1.0f, zero = 0.0f;
  void* xp = x.storage()->data();
  void* wp_ = w.storage()->data();
  void* yp = y.storage()->data();
  auto once = [&] {
    if (dir == 0) DNN(cudnnConvolutionForward(h, &one, xd, xp, wd, wp_, cd, fp[0].algo, ws, bytes, &zero, yd, yp));
    else if (dir == 1) DNN(cudnnConvolutionBackwardData(h, &one, wd, wp_, yd, yp, cd, dp[0].algo, ws, bytes, &zero, xd, xp));
    else DNN(cudnnConvolutionBackwardFilter(h, &one, xd, xp, yd, yp, cd, wp[0].algo, ws, bytes, &zero, wd, wp_));
  };
  once();
  bench::sync();
  for (auto _ : state) {
    once();
    bench::sync();
  }
  cudaFree(ws);
  cudnnDestroyConvolutionDescriptor(cd);
  cudnnDestroyFilterDescriptor(wd);
  cudnnDestroyTensorDescriptor(yd);
  cudnnDestroyTensorDescriptor(xd);
  cudnnDestroy(h);
  state.counters["TFLOPS"] = benchmark::Counter(2.0 * 32 * 64 * 56 * 56 * 64 * 9 / 1e12, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_ingot_conv)->ArgNames({"fwd_data_weight", "f32_f16"})->ArgsProduct({{0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cudnn_direct)->ArgNames({"fwd_data_weight", "f32_f16"})->ArgsProduct({{0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

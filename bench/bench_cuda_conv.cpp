// Convolution on the GPU (N=32, C=K=64, 56x56, 3x3, pad 1): Ingot's conv2d forward, backward-data
// and backward-weight (cuDNN through the cuda plugin) against cuDNN's legacy API called directly
// with the same choice (the first algorithm of the _v7 heuristic, the same math), alternating in
// one process, in f32 and f16, NCHW and NHWC. f32 is FMA math on both sides: this program pins
// INGOT_CUDA_CONV_TF32=0 (the plugin reads it once; its default allows TF32, like PyTorch's).
// NHWC: Ingot gets channels-last views of x and dy with packed OIHW weights and allocates its
// output as it does; cuDNN gets x, dy and the filter all in NHWC, as a channels-last user writes.
#include <cudnn.h>

#include <cstdlib>
#include <string>

#include "bench_cuda_util.h"
#include "ingot/ops/linalg.h"

#define DNN(call) BENCH_CHECK((call) == CUDNN_STATUS_SUCCESS)

namespace ingot::bench {
namespace {

constexpr int kN = 32, kC = 64, kK = 64, kHW = 56, kR = 3;
const double kFlop = 2.0 * kN * kK * kHW * kHW * kC * kR * kR;

enum class Dir { Fwd, BwdData, BwdWeight };
const char* dir_name(Dir d) { return d == Dir::Fwd ? "fwd" : d == Dir::BwdData ? "bwd_data" : "bwd_weight"; }

Conv2dParams params() {
  Conv2dParams p;
  p.padding = {1, 1};
  return p;
}

/// An [n, c, h, w] tensor, in NHWC memory order when `nhwc` (a permuted view).
Tensor activation(DType dt, bool nhwc) {
  if (!nhwc) return gpu_random({kN, kC, kHW, kHW}, dt);
  return gpu_random({kN, kHW, kHW, kC}, dt).permute({0, 3, 1, 2});
}

/// cuDNN's legacy API on a handle of its own: descriptors, the heuristic's algorithm, workspace.
class DirectConv {
 public:
  DirectConv(Dir dir, DType dt, bool nhwc) : dir_(dir) {
    const cudnnDataType_t t = dt == DType::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const cudnnTensorFormat_t f = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    DNN(cudnnCreate(&h_));
    DNN(cudnnCreateTensorDescriptor(&xd_));
    DNN(cudnnCreateTensorDescriptor(&yd_));
    DNN(cudnnCreateFilterDescriptor(&wd_));
    DNN(cudnnCreateConvolutionDescriptor(&cd_));
    DNN(cudnnSetTensor4dDescriptor(xd_, f, t, kN, kC, kHW, kHW));
    DNN(cudnnSetTensor4dDescriptor(yd_, f, t, kN, kK, kHW, kHW));
    DNN(cudnnSetFilter4dDescriptor(wd_, t, f, kK, kC, kR, kR));
    DNN(cudnnSetConvolution2dDescriptor(cd_, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    DNN(cudnnSetConvolutionMathType(cd_, dt == DType::F16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    int n = 0;
    if (dir == Dir::Fwd) {
      cudnnConvolutionFwdAlgoPerf_t p[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      DNN(cudnnGetConvolutionForwardAlgorithm_v7(h_, xd_, wd_, cd_, yd_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, p));
      algo_ = first_ok(p, n);
      DNN(cudnnGetConvolutionForwardWorkspaceSize(h_, xd_, wd_, cd_, yd_, cudnnConvolutionFwdAlgo_t(algo_), &bytes_));
    } else if (dir == Dir::BwdData) {
      cudnnConvolutionBwdDataAlgoPerf_t p[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h_, wd_, yd_, cd_, xd_, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n,
                                                      p));
      algo_ = first_ok(p, n);
      DNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h_, wd_, yd_, cd_, xd_, cudnnConvolutionBwdDataAlgo_t(algo_),
                                                       &bytes_));
    } else {
      cudnnConvolutionBwdFilterAlgoPerf_t p[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h_, xd_, yd_, cd_, wd_, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                        &n, p));
      algo_ = first_ok(p, n);
      DNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h_, xd_, yd_, cd_, wd_, cudnnConvolutionBwdFilterAlgo_t(algo_),
                                                         &bytes_));
    }
    BENCH_CHECK(cudaMalloc(&ws_, bytes_ > 0 ? bytes_ : 1) == cudaSuccess);
  }
  ~DirectConv() {
    cudaFree(ws_);
    cudnnDestroyConvolutionDescriptor(cd_);
    cudnnDestroyFilterDescriptor(wd_);
    cudnnDestroyTensorDescriptor(yd_);
    cudnnDestroyTensorDescriptor(xd_);
    cudnnDestroy(h_);
  }
  DirectConv(const DirectConv&) = delete;
  DirectConv& operator=(const DirectConv&) = delete;

  /// One call on raw buffers x [N,C,H,W], w [K,C,R,S], y [N,K,H,W] (in the descriptors' layout).
  void run(void* x, void* w, void* y) const {
    const float one = 1.0f, zero = 0.0f;
    if (dir_ == Dir::Fwd) {
      DNN(cudnnConvolutionForward(h_, &one, xd_, x, wd_, w, cd_, cudnnConvolutionFwdAlgo_t(algo_), ws_, bytes_, &zero,
                                  yd_, y));
    } else if (dir_ == Dir::BwdData) {
      DNN(cudnnConvolutionBackwardData(h_, &one, wd_, w, yd_, y, cd_, cudnnConvolutionBwdDataAlgo_t(algo_), ws_, bytes_,
                                       &zero, xd_, x));
    } else {
      DNN(cudnnConvolutionBackwardFilter(h_, &one, xd_, x, yd_, y, cd_, cudnnConvolutionBwdFilterAlgo_t(algo_), ws_,
                                         bytes_, &zero, wd_, w));
    }
  }

 private:
  template <class Perf>
  static int first_ok(const Perf* p, int n) {
    for (int i = 0; i < n; ++i)
      if (p[i].status == CUDNN_STATUS_SUCCESS) return static_cast<int>(p[i].algo);
    BENCH_CHECK(!"cuDNN's heuristic offers no algorithm");
    return 0;
  }

  Dir dir_;
  int algo_ = 0;
  size_t bytes_ = 0;
  void* ws_ = nullptr;
  cudnnHandle_t h_ = nullptr;
  cudnnTensorDescriptor_t xd_ = nullptr, yd_ = nullptr;
  cudnnFilterDescriptor_t wd_ = nullptr;
  cudnnConvolutionDescriptor_t cd_ = nullptr;
};

void bm_conv(benchmark::State& state, Dir dir, DType dt, bool nhwc) {
  guarded(state, [&] {
    const Shape xs{kN, kC, kHW, kHW}, ws{kK, kC, kR, kR};
    const Tensor x = activation(dt, nhwc), gy = activation(dt, nhwc), w = gpu_random(ws, dt);
    // The reference's own buffers (contiguous; their layout is the descriptors').
    const Tensor rx = gpu_random(xs, dt), rw = gpu_random(ws, dt), ry = gpu_random(xs, dt);
    const DirectConv direct(dir, dt, nhwc);
    Tensor out;
    PairTimer timer(state, "cudnn");
    timer.run(
        [&] {
          if (dir == Dir::Fwd) out = conv2d(x, w, Tensor(), params());
          if (dir == Dir::BwdData) out = conv2d_backward_data(gy, w, xs, params());
          if (dir == Dir::BwdWeight) out = conv2d_backward_weight(x, gy, ws, params());
        },
        [&] { direct.run(device_ptr(rx), device_ptr(rw), device_ptr(ry)); });
    // Same layouts and algorithm: only Ingot's own cost separates the two (target 95%). NHWC has
    // no target: Ingot's output layout differs from the reference's there.
    timer.report(kFlop, kFlop, 1e12, "TFLOP/s", nhwc ? 0.0 : 0.95);
  });
}

}  // namespace

void register_benchmarks() {
  setenv("INGOT_CUDA_CONV_TF32", "0", 1);
  for (const bool nhwc : {false, true}) {
    for (const DType dt : {DType::F32, DType::F16}) {
      for (const Dir d : {Dir::Fwd, Dir::BwdData, Dir::BwdWeight}) {
        const std::string name =
            std::string("BM_conv/") + dir_name(d) + (dt == DType::F16 ? "/f16/" : "/f32/") + (nhwc ? "nhwc" : "nchw");
        benchmark::RegisterBenchmark(name.c_str(), bm_conv, d, dt, nhwc)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace ingot::bench

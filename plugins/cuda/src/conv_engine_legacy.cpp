// The cuDNN legacy-API convolution engine (cuDNN 9 deprecates this API, so it stays in this one
// file behind ConvEngine). NCHW tensors with any strides, packed OIHW weights; the algorithm comes
// from cuDNN's heuristics once per plan key and is cached; workspace from the caching allocator.
// Bias and activation run as kernels after the convolution.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "conv_engine.h"
#include "cuda_check.h"
#include "kernels.h"

namespace ingot::cuda {
namespace {

cudnnDataType_t dnn_type(int32_t dtype) {
  switch (dtype) {
    case INGOT_F16: return CUDNN_DATA_HALF;
    case INGOT_BF16: return CUDNN_DATA_BFLOAT16;
    case INGOT_F64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

bool tf32_allowed() {
  const char* v = std::getenv("INGOT_CUDA_ALLOW_TF32");
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

// RAII over the four legacy descriptors of one call.
struct ConvDescs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ConvDescs() {
    INGOT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
    INGOT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
    INGOT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
    INGOT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  }
  ~ConvDescs() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  ConvDescs(const ConvDescs&) = delete;
  ConvDescs& operator=(const ConvDescs&) = delete;
};

void set_tensor(cudnnTensorDescriptor_t t, const ingot_tensor_desc& d) {
  int dims[4], strides[4];
  for (int i = 0; i < 4; ++i) {
    dims[i] = static_cast<int>(d.shape[i]);
    strides[i] = static_cast<int>(d.strides[i] > 0 ? d.strides[i] : 1);
  }
  INGOT_CUDNN_CHECK(cudnnSetTensorNdDescriptor(t, dnn_type(d.dtype), 4, dims, strides));
}

class LegacyConvEngine final : public ConvEngine {
 public:
  explicit LegacyConvEngine(DeviceContext& dev) : dev_(dev) {}

  bool supports(const sdk::OpCall& c) const override {
    if (!all_device_strided(c) || c.n_out != 1 || c.attrs == nullptr) return false;
    const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
    const int32_t dt = c.out[0].dtype;
    if (dt != INGOT_F32 && dt != INGOT_F16 && dt != INGOT_BF16 && dt != INGOT_F64) return false;
    const int n_in = c.op == INGOT_OP_CONV2D ? (a.has_bias ? 3 : 2) : 2;
    if (c.n_in != n_in) return false;
    for (int i = 0; i < 2; ++i)
      if (c.in[i].ndim != 4 || c.in[i].dtype != dt) return false;
    if (c.out[0].ndim != 4 || a.groups < 1 || a.activation < INGOT_ACT_NONE || a.activation > INGOT_ACT_GELU) return false;
    for (int i = 0; i < 2; ++i)
      if (a.stride[i] < 1 || a.dilation[i] < 1 || a.padding[i] < 0) return false;
    if (c.op != INGOT_OP_CONV2D && (a.has_bias || a.activation != INGOT_ACT_NONE)) return false;
    if (c.op == INGOT_OP_CONV2D && a.has_bias && (c.in[2].ndim != 1 || c.in[2].dtype != dt)) return false;
    // Packed OIHW weights, 32-bit sizes (cuDNN's legacy descriptors take int).
    const ingot_tensor_desc& w = c.op == INGOT_OP_CONV2D_BWD_WEIGHT ? c.out[0] : c.in[1];
    if (!sdk::is_contiguous(w)) return false;
    // cuDNN needs positive strides (no broadcast dims) and int-sized tensors.
    for (const ingot_tensor_desc* d : {&c.in[0], &c.in[1], &c.out[0]})
      for (int j = 0; j < 4; ++j)
        if (d->shape[j] > 1 && d->strides[j] <= 0) return false;
    for (int i = 0; i < c.n_in; ++i)
      if (sdk::numel(c.in[i]) >= (int64_t(1) << 31) || sdk::numel(c.in[i]) == 0) return false;
    return sdk::numel(c.out[0]) < (int64_t(1) << 31) && sdk::numel(c.out[0]) > 0;
  }

  void run(const sdk::OpCall& c, cudaStream_t stream) override {
    const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
    const ingot_tensor_desc* x = &c.in[0];
    const ingot_tensor_desc* w = &c.in[1];
    const ingot_tensor_desc* y = &c.out[0];
    if (c.op == INGOT_OP_CONV2D_BWD_DATA) x = &c.out[0], y = &c.in[0];
    if (c.op == INGOT_OP_CONV2D_BWD_WEIGHT) w = &c.out[0], y = &c.in[1];
    const int32_t dt = c.out[0].dtype;
    cudnnHandle_t h = dev_.cudnn();
    INGOT_CUDNN_CHECK(cudnnSetStream(h, stream));
    ConvDescs d;
    set_tensor(d.x, *x);
    set_tensor(d.y, *y);
    INGOT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, dnn_type(dt), CUDNN_TENSOR_NCHW, static_cast<int>(w->shape[0]),
                                                 static_cast<int>(w->shape[1]), static_cast<int>(w->shape[2]),
                                                 static_cast<int>(w->shape[3])));
    const cudnnDataType_t compute = dt == INGOT_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    INGOT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        d.conv, static_cast<int>(a.padding[0]), static_cast<int>(a.padding[1]), static_cast<int>(a.stride[0]),
        static_cast<int>(a.stride[1]), static_cast<int>(a.dilation[0]), static_cast<int>(a.dilation[1]),
        CUDNN_CROSS_CORRELATION, compute));
    INGOT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(a.groups)));
    const cudnnMathType_t math = dt == INGOT_F32 ? (tf32_allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)
                                                 : (dt == INGOT_F64 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH);
    INGOT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, math));

    const std::string key = plan_key(c, math);
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const void* one = dt == INGOT_F64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = dt == INGOT_F64 ? static_cast<const void*>(&zero_d) : &zero_f;
    if (c.op == INGOT_OP_CONV2D) {
      const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(find_algo(key, [&] {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int n = 0;
        INGOT_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
        for (int i = 0; i < n; ++i)
          if (perf[i].status == CUDNN_STATUS_SUCCESS) return static_cast<int>(perf[i].algo);
        return -1;
      }));
      size_t bytes = 0;
      INGOT_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, algo, &bytes));
      Scratch ws(dev_.allocator(), bytes);
      INGOT_CUDNN_CHECK(cudnnConvolutionForward(h, one, d.x, sdk::data_ptr<const void>(*x), d.w, sdk::data_ptr<const void>(*w),
                                                d.conv, algo, ws.get(), bytes, zero, d.y, sdk::data_ptr(*y)));
      epilogue(c, a, stream);
    } else if (c.op == INGOT_OP_CONV2D_BWD_DATA) {
      const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(find_algo(key, [&] {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        int n = 0;
        INGOT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
        for (int i = 0; i < n; ++i)
          if (perf[i].status == CUDNN_STATUS_SUCCESS) return static_cast<int>(perf[i].algo);
        return -1;
      }));
      size_t bytes = 0;
      INGOT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x, algo, &bytes));
      Scratch ws(dev_.allocator(), bytes);
      INGOT_CUDNN_CHECK(cudnnConvolutionBackwardData(h, one, d.w, sdk::data_ptr<const void>(*w), d.y, sdk::data_ptr<const void>(*y),
                                                     d.conv, algo, ws.get(), bytes, zero, d.x, sdk::data_ptr(*x)));
    } else {
      const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(find_algo(key, [&] {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        int n = 0;
        INGOT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
        for (int i = 0; i < n; ++i)
          if (perf[i].status == CUDNN_STATUS_SUCCESS) return static_cast<int>(perf[i].algo);
        return -1;
      }));
      size_t bytes = 0;
      INGOT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w, algo, &bytes));
      Scratch ws(dev_.allocator(), bytes);
      INGOT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, one, d.x, sdk::data_ptr<const void>(*x), d.y, sdk::data_ptr<const void>(*y),
                                                       d.conv, algo, ws.get(), bytes, zero, d.w, sdk::data_ptr(*w)));
    }
  }

  void cache_stats(ingot_plan_cache_stats& s) const override {
    std::lock_guard<std::mutex> lock(mu_);
    s.entries = static_cast<int64_t>(algos_.size());
    s.capacity = -1;  // unbounded: one small entry per distinct convolution
    s.hits = hits_;
    s.misses = misses_;
  }

  const char* last_algo() const override { return last_.c_str(); }

 private:
  // Everything the algorithm depends on: op, dtype, math, shapes, strides and attributes.
  static std::string plan_key(const sdk::OpCall& c, cudnnMathType_t math) {
    const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
    std::string k;
    auto num = [&k](int64_t v) {
      k += std::to_string(v);
      k += ',';
    };
    num(c.op), num(c.out[0].dtype), num(math);
    for (const ingot_tensor_desc* d : {&c.in[0], &c.in[1], &c.out[0]})
      for (int j = 0; j < 4; ++j) num(d->shape[j]), num(d->strides[j]);
    for (int i = 0; i < 2; ++i) num(a.stride[i]), num(a.padding[i]), num(a.dilation[i]);
    num(a.groups);
    return k;
  }

  template <class Find>
  int find_algo(const std::string& key, Find&& find) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = algos_.find(key);
    if (it != algos_.end()) {
      ++hits_;
    } else {
      ++misses_;
      const int algo = find();
      if (algo < 0) {
        std::string msg = "cuda conv2d: cuDNN has no algorithm for plan ";
        msg += key;
        throw sdk::Failure(INGOT_ERR_UNSUPPORTED, msg);
      }
      it = algos_.emplace(key, algo).first;
    }
    last_ = "cudnn_legacy:algo_";
    last_ += std::to_string(it->second);
    return it->second;
  }

  // Bias (broadcast over N, H, W) and activation, in place on the output.
  void epilogue(const sdk::OpCall& c, const ingot_attr_conv2d& a, cudaStream_t stream) {
    const ingot_tensor_desc& y = c.out[0];
    const Launch launch{stream, &dev_.allocator(), dev_.props().multiProcessorCount};
    if (a.has_bias) {
      ingot_tensor_desc bias = c.in[2];
      bias.ndim = 3;
      bias.shape[0] = c.in[2].shape[0], bias.shape[1] = 1, bias.shape[2] = 1;
      bias.strides[0] = c.in[2].strides[0], bias.strides[1] = 1, bias.strides[2] = 1;
      const ingot_tensor_desc ins[2] = {y, bias};
      binary_run(sdk::OpCall{INGOT_OP_ADD, ins, 2, &y, 1, nullptr}, launch);
    }
    if (a.activation != INGOT_ACT_NONE) {
      const int32_t op = a.activation == INGOT_ACT_GELU ? INGOT_OP_GELU : INGOT_OP_RELU;
      unary_run(sdk::OpCall{op, &y, 1, &y, 1, nullptr}, launch);
    }
  }

  DeviceContext& dev_;
  mutable std::mutex mu_;
  std::map<std::string, int> algos_;
  int64_t hits_ = 0, misses_ = 0;
  std::string last_;
};

}  // namespace

std::unique_ptr<ConvEngine> make_legacy_conv_engine(DeviceContext& dev) { return std::make_unique<LegacyConvEngine>(dev); }

}  // namespace ingot::cuda

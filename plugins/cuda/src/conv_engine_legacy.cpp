// The cuDNN legacy-API convolution engine (cuDNN 9 deprecates this API, so it stays in this one
// file behind ConvEngine). NCHW tensors with any strides, packed OIHW weights. cuDNN's heuristic
// ranks the algorithms once per plan key; a call runs the first whose workspace the caching
// allocator can give, under the math type it was ranked with. Forward bias + ReLU (and bias alone
// under the one algorithm cuDNN allows it for) is one fused cuDNN call; other epilogues are kernels.
#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "caching_allocator.h"
#include "conv_engine.h"
#include "cuda_check.h"
#include "kernels.h"
#include "plan_key.h"
#include "tf32_policy.h"

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

// f32 follows the TF32 policy (DEFAULT_MATH lets cuDNN use TF32 on Ampere and newer, FMA_MATH
// forbids it); f16 / bf16 use tensor cores; f64 has no choice.
cudnnMathType_t requested_math(int32_t dtype) {
  if (dtype == INGOT_F32) return conv_tf32_allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  return dtype == INGOT_F64 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
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

// The bias as a [1, C, 1, 1] tensor and the activation of the fused forward call.
struct FusedDescs {
  cudnnTensorDescriptor_t bias = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  FusedDescs(int32_t dtype, int channels, cudnnActivationMode_t mode) {
    INGOT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bias));
    INGOT_CUDNN_CHECK(cudnnCreateActivationDescriptor(&act));
    const int dims[4] = {1, channels, 1, 1}, strides[4] = {channels, 1, 1, 1};
    INGOT_CUDNN_CHECK(cudnnSetTensorNdDescriptor(bias, dnn_type(dtype), 4, dims, strides));
    INGOT_CUDNN_CHECK(cudnnSetActivationDescriptor(act, mode, CUDNN_PROPAGATE_NAN, 0.0));  // relu(NaN) = NaN, as torch
  }
  ~FusedDescs() {
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(bias);
  }
  FusedDescs(const FusedDescs&) = delete;
  FusedDescs& operator=(const FusedDescs&) = delete;
};

void set_tensor(cudnnTensorDescriptor_t t, const ingot_tensor_desc& d) {
  int dims[4], strides[4];
  for (int i = 0; i < 4; ++i) {
    dims[i] = static_cast<int>(d.shape[i]);
    strides[i] = static_cast<int>(d.strides[i] > 0 ? d.strides[i] : 1);
  }
  INGOT_CUDNN_CHECK(cudnnSetTensorNdDescriptor(t, dnn_type(d.dtype), 4, dims, strides));
}

// The call's tensors in cuDNN's roles: x the image, w the filter, y the convolution's result.
struct Roles {
  const ingot_tensor_desc* x;
  const ingot_tensor_desc* w;
  const ingot_tensor_desc* y;
};

Roles roles_of(const sdk::OpCall& c) {
  if (c.op == INGOT_OP_CONV2D_BWD_DATA) return {&c.out[0], &c.in[1], &c.in[0]};
  if (c.op == INGOT_OP_CONV2D_BWD_WEIGHT) return {&c.in[0], &c.out[0], &c.in[1]};
  return {&c.in[0], &c.in[1], &c.out[0]};
}

// Everything the ranked algorithms depend on.
struct ConvKey {
  int64_t op, dtype, math;
  int64_t x[8], w[8], y[8];  // shape, then strides
  int64_t stride[2], padding[2], dilation[2], groups;
};

ConvKey key_of(const sdk::OpCall& c, const Roles& r, const ingot_attr_conv2d& a, cudnnMathType_t math) {
  ConvKey k{};
  k.op = c.op, k.dtype = c.out[0].dtype, k.math = math;
  for (int j = 0; j < 4; ++j) {
    k.x[j] = r.x->shape[j], k.x[4 + j] = r.x->strides[j];
    k.w[j] = r.w->shape[j], k.w[4 + j] = r.w->strides[j];
    k.y[j] = r.y->shape[j], k.y[4 + j] = r.y->strides[j];
  }
  for (int i = 0; i < 2; ++i) k.stride[i] = a.stride[i], k.padding[i] = a.padding[i], k.dilation[i] = a.dilation[i];
  k.groups = a.groups;
  return k;
}

// One algorithm as the heuristic ranked it: the math type it goes with and its workspace.
struct Candidate {
  int algo;
  cudnnMathType_t math;
  size_t workspace;
};

struct ConvPlan {
  std::vector<Candidate> candidates;  // in the heuristic's order, minus those that did not fit
  bool fused = true;                  // false once cuDNN declined the fused bias + activation call
};

template <class Perf>
void keep_usable(const Perf* perf, int n, bool fma_only, std::vector<Candidate>& out) {
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS)  // FMA_MATH when TF32 is off, whatever was ranked
      out.push_back({static_cast<int>(perf[i].algo), fma_only ? CUDNN_FMA_MATH : perf[i].mathType, perf[i].memory});
}

cudnnStatus_t workspace_size(int32_t op, cudnnHandle_t h, const ConvDescs& d, int algo, size_t& bytes) {
  if (op == INGOT_OP_CONV2D)
    return cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                   static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
  if (op == INGOT_OP_CONV2D_BWD_DATA)
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
  return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w,
                                                        static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
}

// The heuristic's usable algorithms, each with the workspace cuDNN asks for under its math type.
std::vector<Candidate> rank(int32_t op, cudnnHandle_t h, const ConvDescs& d, bool fma_only) {
  std::vector<Candidate> out;
  int n = 0;
  if (op == INGOT_OP_CONV2D) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    INGOT_CUDNN_CHECK(
        cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
    keep_usable(perf, n, fma_only, out);
  } else if (op == INGOT_OP_CONV2D_BWD_DATA) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    INGOT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x,
                                                                  CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, perf));
    keep_usable(perf, n, fma_only, out);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    INGOT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w,
                                                                    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, perf));
    keep_usable(perf, n, fma_only, out);
  }
  for (auto it = out.begin(); it != out.end();) {
    cudnnStatus_t s = cudnnSetConvolutionMathType(d.conv, it->math);
    if (s == CUDNN_STATUS_SUCCESS) s = workspace_size(op, h, d, it->algo, it->workspace);
    it = s == CUDNN_STATUS_SUCCESS ? it + 1 : out.erase(it);
  }
  return out;
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
    if (c.out[0].ndim != 4 || a.groups < 1 || !epilogue_activation(a.activation)) return false;
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
    const Roles r = roles_of(c);
    const int32_t dt = c.out[0].dtype;
    cudnnHandle_t h = dev_.cudnn();
    INGOT_CUDNN_CHECK(cudnnSetStream(h, stream));
    ConvDescs d;
    set_tensor(d.x, *r.x);
    set_tensor(d.y, *r.y);
    INGOT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, dnn_type(dt), CUDNN_TENSOR_NCHW, static_cast<int>(r.w->shape[0]),
                                                 static_cast<int>(r.w->shape[1]), static_cast<int>(r.w->shape[2]),
                                                 static_cast<int>(r.w->shape[3])));
    const cudnnDataType_t compute = dt == INGOT_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    INGOT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        d.conv, static_cast<int>(a.padding[0]), static_cast<int>(a.padding[1]), static_cast<int>(a.stride[0]),
        static_cast<int>(a.stride[1]), static_cast<int>(a.dilation[0]), static_cast<int>(a.dilation[1]),
        CUDNN_CROSS_CORRELATION, compute));
    INGOT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(a.groups)));
    const cudnnMathType_t math = requested_math(dt);
    INGOT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, math));

    const ConvKey key = key_of(c, r, a, math);
    const ConvPlan plan = plan_for(key, [&] { return rank(c.op, h, d, dt == INGOT_F32 && math == CUDNN_FMA_MATH); });
    StreamMemory mem(dev_.allocator(), stream);
    const size_t n = plan.candidates.size();
    for (size_t i = 0; i < n; ++i) {
      const Candidate& cand = plan.candidates[i];
      std::optional<Scratch> ws;
      try {
        ws.emplace(mem, cand.workspace);
      } catch (const sdk::Failure& e) {
        if (e.code() != INGOT_ERR_OUT_OF_MEMORY || i + 1 == n) throw;
        continue;  // a later candidate may need less workspace
      }
      if (i > 0) forget_before(key, cand);
      INGOT_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, cand.math));
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_ = "cudnn_legacy:algo_" + std::to_string(cand.algo);
      }
      if (fusable(c, a, plan, cand.algo) && run_fused(c, a, key, h, d, r, cand, ws->get())) return;
      INGOT_CUDNN_CHECK(execute(c.op, h, d, r, cand, ws->get()));
      if (c.op == INGOT_OP_CONV2D) epilogue(c, a, stream, mem);
      return;
    }
  }

  void cache_stats(ingot_plan_cache_stats& s) const override {
    std::lock_guard<std::mutex> lock(mu_);
    s.entries = static_cast<int64_t>(plans_.size());
    s.capacity = -1;  // unbounded: one small entry per distinct convolution
    s.hits = hits_;
    s.misses = misses_;
  }

  const char* last_algo() const override { return last_.c_str(); }

 private:
  struct Scalars {
    double one_d = 1.0, zero_d = 0.0;
    float one_f = 1.0f, zero_f = 0.0f;
    const void* one(int32_t dt) const { return dt == INGOT_F64 ? static_cast<const void*>(&one_d) : &one_f; }
    const void* zero(int32_t dt) const { return dt == INGOT_F64 ? static_cast<const void*>(&zero_d) : &zero_f; }
  };

  template <class Rank>
  ConvPlan plan_for(const ConvKey& key, Rank&& rank_algos) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) {
      ++hits_;
      return it->second;
    }
    ++misses_;
    ConvPlan plan;
    plan.candidates = rank_algos();
    if (plan.candidates.empty())
      throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cuda conv2d: cuDNN's heuristic offers no algorithm for op " +
                                                    std::to_string(key.op) + ", dtype " + std::to_string(key.dtype) +
                                                    ", input " + shape_str(key.x) + ", filter " + shape_str(key.w) +
                                                    ", groups " + std::to_string(key.groups));
    return plans_.emplace(key, std::move(plan)).first->second;
  }

  static std::string shape_str(const int64_t* t) {
    return "[" + std::to_string(t[0]) + ", " + std::to_string(t[1]) + ", " + std::to_string(t[2]) + ", " +
           std::to_string(t[3]) + "]";
  }

  // The candidates ranked above `cand` did not fit: start at `cand` from now on (as PyTorch does),
  // rather than empty the cache for the same failed workspace on every call.
  void forget_before(const ConvKey& key, const Candidate& cand) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it == plans_.end()) return;
    std::vector<Candidate>& v = it->second.candidates;
    auto pos = std::find_if(v.begin(), v.end(),
                            [&](const Candidate& x) { return x.algo == cand.algo && x.math == cand.math; });
    if (pos != v.end()) v.erase(v.begin(), pos);
  }

  static cudnnStatus_t execute(int32_t op, cudnnHandle_t h, const ConvDescs& d, const Roles& r, const Candidate& cand,
                               void* ws) {
    const int32_t dt = r.y->dtype;
    const Scalars s;
    const void* x = sdk::data_ptr<const void>(*r.x);
    const void* w = sdk::data_ptr<const void>(*r.w);
    const void* y = sdk::data_ptr<const void>(*r.y);
    if (op == INGOT_OP_CONV2D)
      return cudnnConvolutionForward(h, s.one(dt), d.x, x, d.w, w, d.conv,
                                     static_cast<cudnnConvolutionFwdAlgo_t>(cand.algo), ws, cand.workspace, s.zero(dt),
                                     d.y, sdk::data_ptr(*r.y));
    if (op == INGOT_OP_CONV2D_BWD_DATA)
      return cudnnConvolutionBackwardData(h, s.one(dt), d.w, w, d.y, y, d.conv,
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(cand.algo), ws, cand.workspace,
                                          s.zero(dt), d.x, sdk::data_ptr(*r.x));
    return cudnnConvolutionBackwardFilter(h, s.one(dt), d.x, x, d.y, y, d.conv,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(cand.algo), ws, cand.workspace,
                                          s.zero(dt), d.w, sdk::data_ptr(*r.w));
  }

  // cuDNN fuses bias + ReLU with any algorithm, bias alone (IDENTITY) only with IMPLICIT_PRECOMP_GEMM;
  // it needs a bias and has no GELU.
  static bool fusable(const sdk::OpCall& c, const ingot_attr_conv2d& a, const ConvPlan& plan, int algo) {
    if (c.op != INGOT_OP_CONV2D || !a.has_bias || !plan.fused) return false;
    if (c.in[2].shape[0] > 1 && c.in[2].strides[0] != 1) return false;
    if (a.activation == INGOT_ACT_RELU) return true;
    return a.activation == INGOT_ACT_NONE && algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  }

  // y = act(conv(x, w) + bias) in one call; false (nothing written) when cuDNN declines the
  // configuration, which is then remembered so later calls go straight to the separate passes.
  bool run_fused(const sdk::OpCall& c, const ingot_attr_conv2d& a, const ConvKey& key, cudnnHandle_t h,
                 const ConvDescs& d, const Roles& r, const Candidate& cand, void* ws) {
    const int32_t dt = r.y->dtype;
    const Scalars s;
    FusedDescs f(dt, static_cast<int>(r.y->shape[1]),
                 a.activation == INGOT_ACT_RELU ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY);
    // z = y with alpha2 = 0: cuDNN's form of "no residual input".
    const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
        h, s.one(dt), d.x, sdk::data_ptr<const void>(*r.x), d.w, sdk::data_ptr<const void>(*r.w), d.conv,
        static_cast<cudnnConvolutionFwdAlgo_t>(cand.algo), ws, cand.workspace, s.zero(dt), d.y,
        sdk::data_ptr<const void>(*r.y), f.bias, sdk::data_ptr<const void>(c.in[2]), f.act, d.y, sdk::data_ptr(*r.y));
    if (st == CUDNN_STATUS_SUCCESS) return true;
    const int category = CUDNN_STATUS_CATEGORY(st);
    if (category != CUDNN_STATUS_NOT_SUPPORTED && category != CUDNN_STATUS_BAD_PARAM)
      check_cudnn(st, "cudnnConvolutionBiasActivationForward", __FILE__, __LINE__);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) it->second.fused = false;
    return false;
  }

  // Bias (broadcast over N, H, W) and activation, in place on the output.
  void epilogue(const sdk::OpCall& c, const ingot_attr_conv2d& a, cudaStream_t stream, StreamMemory& mem) {
    const ingot_tensor_desc& y = c.out[0];
    const Launch launch{stream, &mem, dev_.props().multiProcessorCount};
    if (a.has_bias) {
      ingot_tensor_desc bias = c.in[2];
      bias.ndim = 3;
      bias.shape[0] = c.in[2].shape[0], bias.shape[1] = 1, bias.shape[2] = 1;
      bias.strides[0] = c.in[2].strides[0], bias.strides[1] = 1, bias.strides[2] = 1;
      const ingot_tensor_desc ins[2] = {y, bias};
      binary_run(sdk::OpCall{INGOT_OP_ADD, ins, 2, &y, 1, nullptr}, launch);
    }
    if (a.activation != INGOT_ACT_NONE) activation_run(a.activation, y, launch);
  }

  DeviceContext& dev_;
  mutable std::mutex mu_;
  std::unordered_map<ConvKey, ConvPlan, PlanKeyHash<ConvKey>, PlanKeyEqual<ConvKey>> plans_;
  int64_t hits_ = 0, misses_ = 0;
  std::string last_;
};

}  // namespace

std::unique_ptr<ConvEngine> make_legacy_conv_engine(DeviceContext& dev) { return std::make_unique<LegacyConvEngine>(dev); }

}  // namespace ingot::cuda

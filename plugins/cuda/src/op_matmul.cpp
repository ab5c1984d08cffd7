// MATMUL through cuBLASLt (the mapping of strides and batch dims is matmul_problem.cpp). Bias
// and ReLU are cuBLASLt epilogues; GELU (erf form, which cuBLASLt lacks) runs as a kernel after the
// bias epilogue. A plan (five cuBLASLt descriptors and the heuristic's algorithm) is built once per MatmulKey and
// kept in a per-thread LRU cache: only the compute thread calls backends, so lookups take no lock
// and setting a plan's bias pointer per call races with nobody.
#include "op_matmul.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "caching_allocator.h"
#include "cuda_check.h"
#include "kernels.h"
#include "matmul_problem.h"
#include "plan_key.h"
#include "plan_lru.h"
#include "tf32_policy.h"

namespace ingot::cuda {
namespace {

cudaDataType_t cuda_type(int64_t dtype) {
  switch (dtype) {
    case INGOT_F16: return CUDA_R_16F;
    case INGOT_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

// The five descriptors of one cuBLASLt call and the algorithm the heuristic chose for them.
struct MatmulPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;  // what `algo` needs, at most DeviceContext::kMatmulWorkspaceBytes
  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;
  ~MatmulPlan() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

void set_batch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride) {
  const int32_t count = static_cast<int32_t>(batch);
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
}

void set_bias(const MatmulPlan& plan, const void* bias) {
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
}

std::string describe(const MatmulKey& k) {
  return "dtype " + std::to_string(k.dtype) + ", [" + std::to_string(k.m) + " x " +
         std::to_string(k.a_op == CUBLAS_OP_N ? k.a_rows : k.a_cols) + "] x [" +
         std::to_string(k.b_op == CUBLAS_OP_N ? k.b_cols : k.b_rows) + " x " + std::to_string(k.n) + "], batch " +
         std::to_string(k.batch) + ", epilogue " + std::to_string(k.epilogue) + (k.tf32 ? ", tf32" : "");
}

std::unique_ptr<MatmulPlan> build_plan(const MatmulKey& k, cublasLtHandle_t handle, const void* bias) {
  auto plan = std::make_unique<MatmulPlan>();
  const cudaDataType_t t = cuda_type(k.dtype);
  const cublasComputeType_t compute = k.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const auto op_a = static_cast<cublasOperation_t>(k.a_op), op_b = static_cast<cublasOperation_t>(k.b_op);
  const auto epi = static_cast<cublasLtEpilogue_t>(k.epilogue);
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, compute, CUDA_R_32F));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  if (bias != nullptr) set_bias(*plan, bias);
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, t, k.a_rows, k.a_cols, k.a_ld));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, t, k.b_rows, k.b_cols, k.b_ld));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, t, k.n, k.m, k.n));
  if (k.batch > 1) {  // cuBLAS's A is our b, its B our a
    set_batch(plan->a, k.batch, k.stride_b);
    set_batch(plan->b, k.batch, k.stride_a);
    set_batch(plan->c, k.batch, k.stride_c);
  }
  const size_t ws_bytes = DeviceContext::kMatmulWorkspaceBytes;
  const auto al_a = static_cast<uint32_t>(k.align_a), al_b = static_cast<uint32_t>(k.align_b),
             al_c = static_cast<uint32_t>(k.align_c);
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&plan->pref));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &ws_bytes, sizeof(ws_bytes)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
                                                          sizeof(al_a)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
                                                          sizeof(al_b)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c,
                                                          sizeof(al_c)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c,
                                                          sizeof(al_c)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  INGOT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, plan->op, plan->a, plan->b, plan->c, plan->c, plan->pref, 1,
                                                    &result, &found));
  if (found == 0)
    throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cuda matmul: cuBLASLt has no algorithm for " + describe(k));
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  return plan;
}

// Plans, one cache per thread (see the file comment).
using PlanCache = PlanLru<MatmulKey, MatmulPlan, 1024>;
thread_local PlanCache t_plans;

// cuBLASLt's workspace for one matmul_run: the compute stream's persistent block, or on another
// stream a block of that stream (sharing one would let concurrent matmuls overwrite each other's).
class LtWorkspace {
 public:
  LtWorkspace(DeviceContext& dev, cudaStream_t stream, DeviceMemory& mem) : dev_(dev), stream_(stream), mem_(mem) {}

  void* get(size_t needed, size_t& bytes) {
    if (stream_ == dev_.stream()) {
      bytes = DeviceContext::kMatmulWorkspaceBytes;
      return dev_.matmul_workspace();
    }
    if (needed > side_bytes_) {
      side_.reset();
      side_.emplace(mem_, needed);
      side_bytes_ = needed;
    }
    bytes = side_bytes_;
    return side_bytes_ > 0 ? side_->get() : nullptr;
  }

 private:
  DeviceContext& dev_;
  cudaStream_t stream_;
  DeviceMemory& mem_;
  std::optional<Scratch> side_;
  size_t side_bytes_ = 0;
};

void run_lt(DeviceContext& dev, cudaStream_t stream, LtWorkspace& ws, const MatmulProblem& p, bool tf32, const void* a,
            const void* b, const void* bias, void* out) {
  const MatmulKey key = matmul_key(p, dev.device(), tf32, a, b, out);
  MatmulPlan* plan = t_plans.find(key);
  if (plan == nullptr) {
    plan = &t_plans.insert(key, build_plan(key, dev.cublaslt(), bias));
  } else if (bias != nullptr) {
    set_bias(*plan, bias);
  }
  size_t ws_bytes = 0;
  void* w = ws.get(plan->workspace, ws_bytes);
  const float one = 1.0f, zero = 0.0f;
  INGOT_CUBLAS_CHECK(cublasLtMatmul(dev.cublaslt(), plan->op, &one, b, plan->a, a, plan->b, &zero, out, plan->c, out,
                                    plan->c, &plan->algo, w, ws_bytes, stream));
}

}  // namespace

bool matmul_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1 || c.n_in < 2 || c.n_in > 3 || c.attrs == nullptr) return false;
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const ingot_tensor_desc &a = c.in[0], &b = c.in[1], &y = c.out[0];
  const int32_t dt = y.dtype;
  if (dt != INGOT_F32 && dt != INGOT_F16 && dt != INGOT_BF16) return false;
  if (a.dtype != dt || b.dtype != dt || a.ndim < 2 || b.ndim < 2 || y.ndim < 2) return false;
  if (a.ndim > y.ndim || b.ndim > y.ndim || !sdk::is_contiguous(y)) return false;
  if (attr.has_bias && (c.n_in != 3 || c.in[2].dtype != dt || c.in[2].ndim != 1 || c.in[2].strides[0] != 1)) return false;
  if (!epilogue_activation(attr.activation)) return false;
  MatLayout m;
  return matmul_layout_of(a, m) && matmul_layout_of(b, m);
}

void matmul_run(const sdk::OpCall& c, DeviceContext& dev, cudaStream_t stream) {
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const ingot_tensor_desc &a = c.in[0], &b = c.in[1], &y = c.out[0];
  MatmulProblem p;
  if (!describe_matmul(c, p)) return;
  StreamMemory mem(dev.allocator(), stream);
  const Launch launch{stream, &mem, dev.props().multiProcessorCount};
  const bool has_bias = attr.has_bias != 0;
  if (p.k == 0) {  // empty sum: out = bias (or 0), then the activation
    const ingot_attr_scalar zero{sizeof(ingot_attr_scalar), INGOT_ABI_MINOR, 0.0};
    creation_run(sdk::OpCall{INGOT_OP_FILL, nullptr, 0, &y, 1, &zero}, launch);
    if (has_bias) {
      const ingot_tensor_desc ins[2] = {y, c.in[2]};
      binary_run(sdk::OpCall{INGOT_OP_ADD, ins, 2, &y, 1, nullptr}, launch);
    }
  } else {
    const bool tf32 = matmul_tf32_allowed();
    LtWorkspace ws(dev, stream, mem);
    const void* bias = has_bias ? sdk::data_ptr<const void>(c.in[2]) : nullptr;
    if (!p.looped) {
      run_lt(dev, stream, ws, p, tf32, sdk::data_ptr<const void>(a), sdk::data_ptr<const void>(b), bias,
             sdk::data_ptr(y));
    } else {
      // Batch dims that do not flatten: one call per matrix, offsets from the broadcast strides.
      const int nb = y.ndim - 2;
      int64_t sa[INGOT_MAX_DIMS] = {}, sb[INGOT_MAX_DIMS] = {}, sy[INGOT_MAX_DIMS] = {};
      matmul_batch_strides(a, y, sa);
      matmul_batch_strides(b, y, sb);
      matmul_batch_strides(y, y, sy);
      const int64_t es = sdk::dtype_size(p.dtype);
      MatmulProblem one = p;
      one.batch = 1;
      one.sa = one.sb = one.sc = 0;
      one.looped = false;
      for (int64_t i = 0; i < p.batch; ++i) {
        int64_t rem = i, oa = 0, ob = 0, oy = 0;
        for (int d = nb - 1; d >= 0; --d) {
          const int64_t ci = rem % y.shape[d];
          rem /= y.shape[d];
          oa += ci * sa[d], ob += ci * sb[d], oy += ci * sy[d];
        }
        run_lt(dev, stream, ws, one, tf32, sdk::data_ptr<const char>(a) + oa * es,
               sdk::data_ptr<const char>(b) + ob * es, bias, sdk::data_ptr<char>(y) + oy * es);
      }
    }
  }
  // cuBLASLt's epilogue applies ReLU; the others run in place afterwards
  if (attr.activation != INGOT_ACT_NONE && (attr.activation != INGOT_ACT_RELU || p.k == 0))
    activation_run(attr.activation, y, launch);
}

}  // namespace ingot::cuda

// QLINEAR (see op_qlinear.h): scratch, the kernels around the GEMM, and the cuBLASLt int8 GEMM
// with its plan cache; what supports() accepts and the padded sizes are in qlinear_problem.cpp.
// cuBLASLt's int8 (IMMA) kernels want the "TN" form: row-major y[M, N] = x'[M, K] w'[N, K]^T is
// column-major y^T = w' (op T) x'^T (op N). Only the compute thread calls backends, so the
// per-thread plan cache takes no lock.
#include "op_qlinear.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "caching_allocator.h"
#include "cuda_check.h"
#include "kernels.h"
#include "plan_key.h"
#include "plan_lru.h"
#include "qlinear_kernels.h"

namespace ingot::cuda {
namespace {

// One cuBLASLt int8 GEMM shape; a plain struct of int64 (plan_key.h).
struct QLinearKey {
  int64_t device, m, n_pad, k_pad;
};

struct QLinearPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  QLinearPlan() = default;
  QLinearPlan(const QLinearPlan&) = delete;
  QLinearPlan& operator=(const QLinearPlan&) = delete;
  ~QLinearPlan() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

std::unique_ptr<QLinearPlan> build_plan(const QLinearKey& k, cublasLtHandle_t handle) {
  auto plan = std::make_unique<QLinearPlan>();
  const cublasOperation_t op_a = CUBLAS_OP_T, op_b = CUBLAS_OP_N;
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  INGOT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_8I, k.k_pad, k.n_pad, k.k_pad));  // w'
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_8I, k.k_pad, k.m, k.k_pad));      // x'
  INGOT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_32I, k.n_pad, k.m, k.n_pad));     // acc
  const size_t ws_bytes = DeviceContext::kMatmulWorkspaceBytes;
  const uint32_t align = 16;  // scratch blocks and their 16-byte rows
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&plan->pref));
  INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &ws_bytes, sizeof(ws_bytes)));
  for (const auto which : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                           CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    INGOT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, which, &align, sizeof(align)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  INGOT_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, plan->op, plan->a, plan->b, plan->c, plan->c, plan->pref, 1,
                                                    &result, &found));
  if (found == 0)
    throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cuda qlinear: cuBLASLt has no int8 algorithm for [" +
                                                  std::to_string(k.m) + " x " + std::to_string(k.k_pad) + "] x [" +
                                                  std::to_string(k.k_pad) + " x " + std::to_string(k.n_pad) + "]");
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  return plan;
}

// Plans, one cache per thread.
using PlanCache = PlanLru<QLinearKey, QLinearPlan, 256>;
thread_local PlanCache t_plans;

// acc = w' x'^T on the stream. cuBLASLt's workspace: the compute stream's persistent block, or on
// another stream a block of that stream (one shared workspace would let two GEMMs overwrite it).
void run_gemm(DeviceContext& dev, cudaStream_t stream, DeviceMemory& mem, const QLinearDims& d,
              const QLinearScratch& s) {
  const QLinearKey key{dev.device(), d.m, d.n_pad, d.k_pad};
  QLinearPlan* found = t_plans.find(key);
  const QLinearPlan& plan = found != nullptr ? *found : t_plans.insert(key, build_plan(key, dev.cublaslt()));
  void* workspace = nullptr;
  size_t ws_bytes = 0;
  std::optional<Scratch> side;
  if (stream == dev.stream()) {
    workspace = dev.matmul_workspace();
    ws_bytes = DeviceContext::kMatmulWorkspaceBytes;
  } else if (plan.workspace > 0) {
    side.emplace(mem, plan.workspace);
    workspace = side->get();
    ws_bytes = plan.workspace;
  }
  const int32_t one = 1, zero = 0;
  INGOT_CUBLAS_CHECK(cublasLtMatmul(dev.cublaslt(), plan.op, &one, s.w, plan.a, s.x, plan.b, &zero, s.acc, plan.c,
                                    s.acc, plan.c, &plan.algo, workspace, ws_bytes, stream));
}

}  // namespace

void qlinear_run(const sdk::OpCall& c, DeviceContext& dev, cudaStream_t stream) {
  QLinearDims d;
  qlinear_dims(c, d);
  if (d.m == 0 || d.n == 0) return;
  StreamMemory mem(dev.allocator(), stream);
  const Launch launch{stream, &mem, dev.props().multiProcessorCount};
  const auto bytes = [](int64_t count, size_t size) { return static_cast<size_t>(count) * size; };
  Scratch x(mem, bytes(d.m * d.k_pad, 1)), x_sums(mem, bytes(d.m, 4)), w(mem, bytes(d.n_pad * d.k_pad, 1));
  Scratch w_sums(mem, bytes(d.n_pad, 4)), acc(mem, bytes(d.m * d.n_pad, 4));
  const QLinearScratch s{x.as<int8_t>(), x_sums.as<int32_t>(), w.as<int8_t>(), w_sums.as<int32_t>(), acc.as<int32_t>()};
  qlinear_prepare(c, d, s, launch);
  run_gemm(dev, stream, mem, d, s);
  qlinear_epilogue(c, d, s, launch);
}

}  // namespace ingot::cuda

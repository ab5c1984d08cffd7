// Matmul 4096^3 on the GPU: Ingot (dispatch, cuBLASLt through the cuda plugin) against cuBLAS's
// cublasGemmEx called directly on the same device, in f32, tf32 and bf16. Each iteration waits
// for the GPU, so both sides pay the same synchronisation. Target: Ingot >= 95% of direct.
#include <cublas_v2.h>

#include <cstdlib>

#include "bench_cuda_util.h"
#include "ingot/ops/linalg.h"

namespace {

using namespace ingot;
constexpr int64_t kN = 4096;

// variant: 0 f32, 1 tf32, 2 bf16
DType dtype_of(int variant) { return variant == 2 ? DType::BF16 : DType::F32; }

void set_tf32(bool on) { setenv("INGOT_CUDA_ALLOW_TF32", on ? "1" : "0", 1); }

void BM_ingot_matmul(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const int variant = static_cast<int>(state.range(0));
  set_tf32(variant == 1);
  const Tensor a = bench::gpu_random({kN, kN}, dtype_of(variant)), b = bench::gpu_random({kN, kN}, dtype_of(variant));
  Tensor c = matmul(a, b);  // plan and workspace outside the timing
  bench::sync();
  for (auto _ : state) {
    c = matmul(a, b);
    bench::sync();
  }
  state.counters["TFLOPS"] = benchmark::Counter(2.0 * kN * kN * kN / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  set_tf32(false);
}

void BM_cublas_direct(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const int variant = static_cast<int>(state.range(0));
  const Tensor a = bench::gpu_random({kN, kN}, dtype_of(variant)), b = bench::gpu_random({kN, kN}, dtype_of(variant));
  const Tensor c = Tensor::empty({kN, kN}, dtype_of(variant), bench::kGpu);
  bench::sync();
  cublasHandle_t h = nullptr;
  BENCH_CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  const cudaDataType_t t = variant == 2 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute = variant == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float one = 1.0f, zero = 0.0f;
  const auto n = static_cast<int>(kN);
  auto gemm = [&] {  // row-major C = A B as column-major C^T = B^T A^T
    BENCH_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b.storage()->data(), t, n,
                             a.storage()->data(), t, n, &zero, c.storage()->data(), t, n, compute,
                             CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  };
  gemm();
  bench::sync();
  for (auto _ : state) {
    gemm();
    bench::sync();
  }
  cublasDestroy(h);
  state.counters["TFLOPS"] = benchmark::Counter(2.0 * kN * kN * kN / 1e12, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_ingot_matmul)->ArgName("f32_tf32_bf16")->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cublas_direct)->ArgName("f32_tf32_bf16")->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

// Ingot's matmul against cublasGemmEx called directly, n x n x n, in one math (f32, tf32, bf16):
// the results compared first (the same product, TF32 really on or off), then both timed
// alternately. Shared by bench_cuda_matmul (f32, bf16) and bench_cuda_matmul_tf32: the cuda
// plugin reads its TF32 switch once per process, so each program pins it before any matmul.
#pragma once

#include <cublas_v2.h>

#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cuda_util.h"
#include "ingot/ops/linalg.h"

namespace ingot::bench {

// The cuda plugin's switch for TF32 in f32 matmuls (off by default, as in PyTorch), read at the
// process's first matmul.
constexpr const char* kTf32Switch = "INGOT_CUDA_MATMUL_TF32";
// Largest relative difference (max |a - b| / max |b|) of two f32 results computed with the same
// strict math: ~5e-6 is expected at these sizes; TF32 differs from strict f32 by ~4e-4.
constexpr double kStrictAgreement = 5e-5;

enum class Math { F32, TF32, BF16 };

inline const char* math_name(Math m) { return m == Math::F32 ? "f32" : m == Math::TF32 ? "tf32" : "bf16"; }

/// max |a - b| / max |b| over the first rows (a few million values are plenty).
inline double rel_diff(const Tensor& a, const Tensor& b) {
  const int64_t rows = std::min<int64_t>(a.size(0), 256);
  const std::vector<float> x = a.slice(0, 0, rows).to_vector<float>();
  const std::vector<float> y = b.slice(0, 0, rows).to_vector<float>();
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(x[i] - y[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(y[i])));
  }
  return diff / std::max(scale, 1e-30);
}

/// cublasGemmEx on a handle of its own, with a 32 MiB workspace (as the plugin's cuBLASLt has).
class DirectGemm {
 public:
  explicit DirectGemm(int n) : n_(n) {
    BENCH_CHECK(cublasCreate(&handle_) == CUBLAS_STATUS_SUCCESS);
    BENCH_CHECK(cudaMalloc(&workspace_, kWorkspace) == cudaSuccess);
    BENCH_CHECK(cublasSetWorkspace(handle_, workspace_, kWorkspace) == CUBLAS_STATUS_SUCCESS);
  }
  ~DirectGemm() {
    cublasDestroy(handle_);
    cudaFree(workspace_);
  }
  DirectGemm(const DirectGemm&) = delete;
  DirectGemm& operator=(const DirectGemm&) = delete;

  /// Row-major c = a b as column-major c^T = b^T a^T.
  void run(const Tensor& a, const Tensor& b, const Tensor& c, Math math) const {
    const cudaDataType_t t = math == Math::BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = math == Math::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const float one = 1.0f, zero = 0.0f;
    BENCH_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &one, device_ptr(b), t, n_, device_ptr(a),
                             t, n_, &zero, device_ptr(c), t, n_, compute,
                             CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  }

 private:
  static constexpr size_t kWorkspace = size_t(32) << 20;
  int n_;
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

/// Throws unless Ingot's result `ci` is the product cuBLAS computed with the same math, and TF32
/// is on exactly when asked for.
inline void check_same_math(const Tensor& ci, const Tensor& a, const Tensor& b, const DirectGemm& gemm, Math math) {
  const Tensor ref = Tensor::empty(ci.shape(), ci.dtype(), kGpu);
  gemm.run(a, b, ref, math);
  wait_cuda();
  const double d = rel_diff(ci, ref);
  const double limit = math == Math::F32 ? kStrictAgreement : math == Math::TF32 ? 5e-3 : 2e-2;
  if (!(d <= limit))
    throw std::runtime_error("Ingot's " + std::string(math_name(math)) + " matmul differs from cuBLAS's by " +
                             std::to_string(d) + " (relative; limit " + std::to_string(limit) +
                             "): not the same product or not the same math");
  if (math != Math::TF32) return;
  gemm.run(a, b, ref, Math::F32);
  wait_cuda();
  if (rel_diff(ci, ref) <= kStrictAgreement)
    throw std::runtime_error(std::string("Ingot's f32 matmul with ") + kTf32Switch +
                             "=1 equals strict f32: the cuda plugin did not use TF32");
}

inline void bm_matmul(benchmark::State& state, Math math, int64_t n) {
  guarded(state, [&] {
    const DType dt = math == Math::BF16 ? DType::BF16 : DType::F32;
    const Tensor a = gpu_random({n, n}, dt), b = gpu_random({n, n}, dt);
    const Tensor c = Tensor::empty({n, n}, dt, kGpu);
    const DirectGemm gemm(static_cast<int>(n));
    check_same_math(matmul(a, b), a, b, gemm, math);
    Tensor out;
    PairTimer timer(state, "cublas");
    timer.run([&] { out = matmul(a, b); }, [&] { gemm.run(a, b, c, math); });
    const double flop = 2.0 * static_cast<double>(n * n * n);
    timer.report(flop, flop, 1e12, "TFLOP/s", 0.95);
  });
}

/// Pins the TF32 switch (`tf32`) for the process, then registers BM_matmul/<math>/<n> for
/// n = 4096, 8192 and each of `maths` (which must agree with `tf32` for f32 inputs).
inline void register_matmul(bool tf32, std::initializer_list<Math> maths) {
  setenv(kTf32Switch, tf32 ? "1" : "0", 1);
  for (const int64_t n : {int64_t(4096), int64_t(8192)}) {
    for (const Math m : maths) {
      const std::string name = std::string("BM_matmul/") + math_name(m) + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(), bm_matmul, m, n)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace ingot::bench

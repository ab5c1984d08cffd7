// Matmul 4096^3 and 8192^3 on the GPU in f32 with TF32 allowed (INGOT_CUDA_MATMUL_TF32=1, pinned
// for this process before its first matmul): Ingot's public matmul against cublasGemmEx with
// CUBLAS_COMPUTE_32F_FAST_TF32, alternating in one process; a run where Ingot's result equals
// strict f32 is an error. Target: Ingot >= 95% of direct.
#include "matmul_pair.h"

namespace ingot::bench {

void register_benchmarks() { register_matmul(true, {Math::TF32}); }

}  // namespace ingot::bench

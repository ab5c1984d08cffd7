// Matmul 4096^3 and 8192^3 on the GPU in f32 (TF32 off, the plugin's default) and bf16: Ingot's
// public matmul (cuBLASLt through the cuda plugin) against cublasGemmEx called directly with the
// same math, alternating in one process. Target: Ingot >= 95% of direct. TF32 is
// bench_cuda_matmul_tf32 (the plugin reads its switch once per process).
#include "matmul_pair.h"

namespace ingot::bench {

void register_benchmarks() { register_matmul(false, {Math::F32, Math::BF16}); }

}  // namespace ingot::bench

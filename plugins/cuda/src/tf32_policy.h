// Whether f32 GPU math may use TF32 tensor cores, with PyTorch's defaults: cuDNN convolutions may
// (torch.backends.cudnn.allow_tf32 = True), cuBLASLt matmuls may not (torch.backends.cuda.matmul.
// allow_tf32 = False since 1.12). INGOT_CUDA_CONV_TF32 and INGOT_CUDA_MATMUL_TF32 (0 or 1) override
// them; each is read once, at the first convolution or matmul of the process.
#pragma once

#include <cstdlib>
#include <string>

#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

/// The switch `name` given its environment text `value`: `fallback` when unset or empty, else "0"
/// or "1"; anything else is an invalid-argument Failure naming the variable.
inline bool parse_tf32_switch(const char* name, const char* value, bool fallback) {
  if (value == nullptr || value[0] == '\0') return fallback;
  const std::string v = value;
  if (v == "0") return false;
  if (v == "1") return true;
  throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, std::string("cuda: ") + name + "=" + v +
                                                     " is not a valid switch: use 0 (no TF32) or 1 (allow TF32)");
}

/// f32 convolutions: CUDNN_DEFAULT_MATH (TF32 on Ampere and newer) when true, CUDNN_FMA_MATH when false.
inline bool conv_tf32_allowed() {
  static const bool on = parse_tf32_switch("INGOT_CUDA_CONV_TF32", std::getenv("INGOT_CUDA_CONV_TF32"), true);
  return on;
}

/// f32 matmuls: CUBLAS_COMPUTE_32F_FAST_TF32 when true, CUBLAS_COMPUTE_32F when false.
inline bool matmul_tf32_allowed() {
  static const bool on = parse_tf32_switch("INGOT_CUDA_MATMUL_TF32", std::getenv("INGOT_CUDA_MATMUL_TF32"), false);
  return on;
}

}  // namespace ingot::cuda

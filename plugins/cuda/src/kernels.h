// The op families of the CUDA backend: each .cu file (one per family) says which calls it runs
// (`*_supports`, host-only checks on descriptors) and runs them on the compute stream (`*_run`).
#pragma once

#include <cuda_runtime_api.h>

#include "device_errors.h"
#include "device_memory.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

/// What a family needs to launch work: the stream, scratch memory, the SM count (grid sizes) and
/// the device's error record (NULL where no channel is wired: kernels then report nothing).
struct Launch {
  cudaStream_t stream;
  DeviceMemory* mem;
  int sm_count;
  DeviceErrors* errors = nullptr;

  DeviceErrorRecord* error_record() const { return errors != nullptr ? errors->record() : nullptr; }
  /// Call after launching a kernel that may report an error.
  void watch_errors() const {
    if (errors != nullptr) errors->watch(stream);
  }
};

/// Strided, on this backend's device, at most INGOT_MAX_DIMS dims (every family needs this).
bool is_device_strided(const ingot_tensor_desc& d);
/// Every input and output of the call is device-strided.
bool all_device_strided(const sdk::OpCall& c);
inline bool has_dtype(uint32_t mask, int32_t dtype) { return dtype >= 0 && dtype < INGOT_DTYPE_COUNT && ((mask >> dtype) & 1u); }
/// The op table's name of an op ("gather"), for messages.
const char* op_name(int32_t op);

#define INGOT_CUDA_FAMILY(name)                  \
  bool name##_supports(const sdk::OpCall& call); \
  void name##_run(const sdk::OpCall& call, const Launch& launch);

INGOT_CUDA_FAMILY(unary)     // k_elementwise.cu: family ELEMENTWISE_UNARY
INGOT_CUDA_FAMILY(binary)    // k_elementwise.cu: families ELEMENTWISE_BINARY, COMPARISON, SELECT
INGOT_CUDA_FAMILY(creation)  // k_creation.cu: FILL, COPY, CAST, ARANGE
INGOT_CUDA_FAMILY(reduce)    // k_reduce.cu: SUM MEAN MAX MIN ARGMAX
INGOT_CUDA_FAMILY(softmax)   // k_softmax.cu: SOFTMAX, LOG_SOFTMAX and their backward ops
INGOT_CUDA_FAMILY(norm)      // k_norm.cu: LAYER_NORM, BATCH_NORM and their backward ops
INGOT_CUDA_FAMILY(pool)      // k_pool.cu: MAX_POOL2D, AVG_POOL2D and their backward ops
INGOT_CUDA_FAMILY(index)     // k_index.cu: CONCAT PAD GATHER INDEX_SELECT SCATTER_ADD
INGOT_CUDA_FAMILY(sort)      // k_sort.cu: SORT TOPK
INGOT_CUDA_FAMILY(rng)       // k_rng.cu: UNIFORM BERNOULLI NORMAL DROPOUT
INGOT_CUDA_FAMILY(optim)     // k_optim.cu: GLOBAL_NORM SGD_UPDATE ADAM_UPDATE
INGOT_CUDA_FAMILY(quant)     // k_quant.cu: QUANTIZE DEQUANTIZE (QLINEAR: op_qlinear.cpp)
INGOT_CUDA_FAMILY(attention)  // k_attention.cu: SCALED_DOT_PRODUCT_ATTENTION and its backward

#undef INGOT_CUDA_FAMILY

/// The fused activations a matmul's or convolution's epilogue runs: NONE, RELU, GELU (erf) and
/// RELU6 (GELU_TANH is not ours).
bool epilogue_activation(int32_t activation);
/// Applies a fused activation (not NONE) in place on `y`: the epilogue's separate pass.
void activation_run(int32_t activation, const ingot_tensor_desc& y, const Launch& launch);

/// Throws sdk::Failure for a failed launch (cudaGetLastError after <<<>>>).
void check_launch(const char* kernel);

}  // namespace ingot::cuda

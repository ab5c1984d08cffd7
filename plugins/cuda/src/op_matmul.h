// MATMUL through cuBLASLt: a [..., M, K] x b [..., K, N] (+ bias [N], relu / gelu epilogue),
// batched with broadcast batch dims, transposes passed as strides, f32 (optionally TF32), f16, bf16.
#pragma once

#include "device_context.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

bool matmul_supports(const sdk::OpCall& call);
void matmul_run(const sdk::OpCall& call, DeviceContext& dev, cudaStream_t stream);

}  // namespace ingot::cuda

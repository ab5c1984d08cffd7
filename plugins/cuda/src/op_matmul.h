// MATMUL through cuBLASLt: a [..., M, K] x b [..., K, N] (+ bias [N], relu / gelu epilogue),
// batched with broadcast batch dims, transposes passed as strides, f32 (TF32 when allowed), f16,
// bf16. Each distinct call gets a plan (descriptors, layouts, preference and the heuristic's
// algorithm) kept in a bounded per-thread cache keyed by MatmulKey.
#pragma once

#include "device_context.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

bool matmul_supports(const sdk::OpCall& call);
void matmul_run(const sdk::OpCall& call, DeviceContext& dev, cudaStream_t stream);

}  // namespace ingot::cuda

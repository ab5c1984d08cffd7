// QLINEAR through cuBLASLt's int8 GEMM (i8 x i8 -> i32, tensor cores) between the preparation and
// epilogue kernels of k_qlinear.cu: u8 or i8 x [..., K] per tensor, i8 w [N, K] per tensor or per
// output channel, outputs i32, f32 or requantized u8 / i8 with bias and activation. Each distinct
// shape gets a plan (descriptors, layouts, the heuristic's algorithm) in a bounded per-thread cache.
#pragma once

#include "device_context.h"
#include "ingot/plugin/sdk.h"
#include "qlinear_problem.h"

namespace ingot::cuda {

/// Runs a call qlinear_supports (qlinear_problem.h) accepted, on `stream`.
void qlinear_run(const sdk::OpCall& call, DeviceContext& dev, cudaStream_t stream);

}  // namespace ingot::cuda

// QLINEAR on the cuda backend as host arithmetic: which calls it runs and the padded sizes of the
// cuBLASLt int8 GEMM (qlinear_problem.cpp; tested on the CPU).
#pragma once

#include "qlinear_kernels.h"

namespace ingot::cuda {

/// Whether op_qlinear.cpp runs the call: u8 / i8 x [..., K] per tensor, i8 w [N, K] per tensor or
/// per output channel, f32 bias, a contiguous output of f32, i32 (no bias, no activation) or u8 /
/// i8 (per-tensor output parameters), all on the device.
bool qlinear_supports(const sdk::OpCall& call);
/// Fills `d` (rows, outputs, K and the padded sizes); false when x, w and y do not fit together.
bool qlinear_dims(const sdk::OpCall& call, QLinearDims& d);

}  // namespace ingot::cuda

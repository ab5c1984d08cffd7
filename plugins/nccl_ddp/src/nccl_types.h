// How Ingot's dtypes and reductions map onto NCCL's: eight dtypes (f32, f64, f16, bf16, i32, i64,
// u8, i8) and sum / avg / max / min; anything else is refused as unsupported.
#pragma once

#include <nccl.h>

#include <cstdint>

namespace ingot::nccl {

/// NCCL's type for an ingot_dtype; throws sdk::Failure (INGOT_ERR_UNSUPPORTED) for the others.
ncclDataType_t nccl_dtype(int32_t dtype);

/// NCCL's reduction for an ingot_reduce_op (INGOT_REDUCE_AVG is ncclAvg: sum / world size, which
/// truncates for integers); throws sdk::Failure (INGOT_ERR_INVALID_ARGUMENT) for an unknown op.
ncclRedOp_t nccl_reduce_op(int32_t op);

}  // namespace ingot::nccl

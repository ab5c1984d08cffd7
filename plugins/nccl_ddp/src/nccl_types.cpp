// The dtype and reduction tables of nccl_types.h.
#include "nccl_types.h"

#include <string>

#include "ingot/plugin/sdk.h"

namespace ingot::nccl {

ncclDataType_t nccl_dtype(int32_t dtype) {
  switch (dtype) {
    case INGOT_F32:
      return ncclFloat32;
    case INGOT_F64:
      return ncclFloat64;
    case INGOT_F16:
      return ncclFloat16;
    case INGOT_BF16:
      return ncclBfloat16;
    case INGOT_I32:
      return ncclInt32;
    case INGOT_I64:
      return ncclInt64;
    case INGOT_U8:
      return ncclUint8;
    case INGOT_I8:
      return ncclInt8;
    default:
      throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "nccl_ddp: no NCCL type for dtype " + sdk::dtype_label(dtype, true) +
                                                    " (supported: f32, f64, f16, bf16, i32, i64, u8, i8)");
  }
}

ncclRedOp_t nccl_reduce_op(int32_t op) {
  switch (op) {
    case INGOT_REDUCE_SUM:
      return ncclSum;
    case INGOT_REDUCE_AVG:
      return ncclAvg;
    case INGOT_REDUCE_MAX:
      return ncclMax;
    case INGOT_REDUCE_MIN:
      return ncclMin;
    default:
      throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT,
                         "nccl_ddp: unknown reduce op " + std::to_string(op) + " (sum 0, avg 1, max 2, min 3)");
  }
}

}  // namespace ingot::nccl

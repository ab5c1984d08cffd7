// Element-wise reductions for gloo's allreduce: one function per (dtype, reduce op), with
// f16 and bf16 reduced in float and rounded back to nearest even, integers wrapping on overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ingot::gloo_ddp {

/// gloo's reduction signature: out[i] = a[i] (op) b[i] for n elements (out may be a or b).
using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

/// Whether the communicator reduces `dtype` (f32 f64 f16 bf16 i32 i64 u8 i8).
bool reducible(int32_t dtype);
/// Throws sdk::Failure (INGOT_ERR_UNSUPPORTED) naming `dtype` unless it is reducible.
void require_reducible(int32_t dtype);
/// The dtypes reduce accepts, for messages: "f32, f64, f16, bf16, i32, i64, u8 and i8".
const char* reducible_list();

/// The pairwise function of `op` (sum, avg and max, min; avg sums) for `dtype`; throws
/// sdk::Failure (INGOT_ERR_UNSUPPORTED) naming the dtype or the op when there is none.
ReduceFn reduce_function(int32_t dtype, int32_t op);
/// Divides the n elements at `data` by `divisor` in place (avg; integers truncate toward zero).
void divide(int32_t dtype, void* data, size_t n, int divisor);

}  // namespace ingot::gloo_ddp

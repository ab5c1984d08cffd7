// Element types, their sizes and names, and PyTorch's type-promotion rules.
#pragma once

#include <cstdint>
#include <string_view>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot {

/// The element types of a tensor; values equal the ABI's ingot_dtype.
enum class DType : int32_t {
  F32 = INGOT_F32,
  F64 = INGOT_F64,
  F16 = INGOT_F16,
  BF16 = INGOT_BF16,
  I8 = INGOT_I8,
  U8 = INGOT_U8,
  I32 = INGOT_I32,
  I64 = INGOT_I64,
  Bool = INGOT_BOOL,
};

inline constexpr int kDTypeCount = INGOT_DTYPE_COUNT;

/// Bytes per element.
int64_t dtype_size(DType t);
/// PyTorch-style name: "float32", "float16", "bfloat16", "int64", "bool", ...
std::string_view dtype_name(DType t);
/// Parses a name as printed by dtype_name, plus the short forms "f32", "bf16", "i64"...;
/// throws ConfigError on anything else.
DType dtype_from_name(std::string_view name);
bool is_floating(DType t);
bool is_integral(DType t);  // signed and unsigned integers, not bool
inline uint32_t dtype_bit(DType t) { return 1u << static_cast<int>(t); }

/// torch.promote_types: bool < integers < floating; u8 with i8 -> i16 is widened to i32 here
/// (Ingot has no i16); f16 with bf16 -> f32.
DType promote_types(DType a, DType b);

/// Category of a Python-style scalar taking part in promotion (tensor-scalar ops).
enum class ScalarKind { Bool, Integral, Floating };
/// torch.result_type(tensor, scalar): a scalar only raises the category, never the width,
/// so float16 + 2.5 stays float16 and int32 + 2.5 becomes the default float (float32).
DType promote_with_scalar(DType t, ScalarKind s);

}  // namespace ingot

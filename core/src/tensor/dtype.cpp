// DType sizes, names and PyTorch's promotion lattice.
#include "ingot/tensor/dtype.h"

#include <array>
#include <string>

#include "ingot/base/error.h"

namespace ingot {
namespace {

// Bytes per element (names: the ABI header's ingot_dtype_name, which kernel plugins share).
struct DTypeRow {
  DType type;
  int64_t size;
};

constexpr std::array<DTypeRow, kDTypeCount> kRows{{
    {DType::F32, 4},
    {DType::F64, 8},
    {DType::F16, 2},
    {DType::BF16, 2},
    {DType::I8, 1},
    {DType::U8, 1},
    {DType::I32, 4},
    {DType::I64, 8},
    {DType::Bool, 1},
}};

const DTypeRow& row(DType t) {
  const auto i = static_cast<size_t>(t);
  INGOT_CHECK_AS(i < kRows.size(), DTypeError, "invalid dtype value {}", static_cast<int>(t));
  return kRows[i];
}

}  // namespace

int64_t dtype_size(DType t) { return row(t).size; }
std::string_view dtype_name(DType t) { return ingot_dtype_name(static_cast<int32_t>(row(t).type), 0); }

DType dtype_from_name(std::string_view name) {
  for (int32_t d = 0; d < kDTypeCount; ++d)
    if (name == ingot_dtype_name(d, 0) || name == ingot_dtype_name(d, 1)) return static_cast<DType>(d);
  if (name == "float") return DType::F32;
  if (name == "double") return DType::F64;
  if (name == "half") return DType::F16;
  if (name == "long") return DType::I64;
  if (name == "int") return DType::I32;
  throw ConfigError(fmt::format("unknown dtype '{}'; expected one of float32, float64, float16, bfloat16, "
                                "int8, uint8, int32, int64, bool",
                                name));
}

bool is_floating(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
bool is_integral(DType t) {
  return t == DType::I8 || t == DType::U8 || t == DType::I32 || t == DType::I64;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;  // float beats integer, whatever the widths
  if (fa) {
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    return DType::F32;  // f32 with anything, or f16 with bf16
  }
  // Both integers: u8 mixes with signed types by widening (torch: u8 + i8 -> i16 -> here i32).
  auto rank = [](DType t) {
    switch (t) {
      case DType::I8: return 1;
      case DType::U8: return 1;
      case DType::I32: return 3;
      default: return 4;  // I64
    }
  };
  if ((a == DType::U8 && b == DType::I8) || (a == DType::I8 && b == DType::U8)) return DType::I32;
  return rank(a) >= rank(b) ? a : b;
}

DType promote_with_scalar(DType t, ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return t;
    case ScalarKind::Integral: return t == DType::Bool ? DType::I64 : t;
    case ScalarKind::Floating: return is_floating(t) ? t : DType::F32;
  }
  return t;
}

}  // namespace ingot

// Metadata of every op, generated from op_table.def: name, family, arity, attribute struct, dtypes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot {

using OpKind = ingot_op_kind;

/// One row of the op table.
struct OpInfo {
  OpKind kind;
  const char* name;
  int n_in;          ///< -1 = variadic
  int n_out;
  const char* attr;  ///< attribute struct suffix ("none", "conv2d", ...)
  size_t attr_size;  ///< sizeof(ingot_attr_<attr>)
  uint32_t dtypes;   ///< INGOT_DTYPES_* bits of accepted input dtypes
  bool differentiable;
  ingot_op_family family;  ///< the kernel family backends route the op to
};

/// Row for an op kind; throws on an out-of-range kind.
const OpInfo& op_info(OpKind kind);
/// Kind for a name, e.g. "conv2d".
std::optional<OpKind> op_from_name(std::string_view name);
inline constexpr int kOpCount = INGOT_OP_COUNT;

/// Fills struct_size and abi_minor of an ABI attribute struct.
template <class A>
A make_attr() {
  A a{};
  a.struct_size = sizeof(A);
  a.abi_minor = INGOT_ABI_MINOR;
  return a;
}

}  // namespace ingot

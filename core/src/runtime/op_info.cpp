// The op registry: op_table.def expanded into a constant array.
#include "ingot/runtime/op_info.h"

#include <array>
#include <string_view>

#include "ingot/base/error.h"

namespace ingot {
namespace {

#define INGOT_GRAD_none false
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad)                                     \
  OpInfo{INGOT_OP_##ENUM, name, n_in, n_out, #attr, sizeof(ingot_attr_##attr), INGOT_DTYPES_##dtypes, \
         std::string_view(#grad) != "none", INGOT_FAMILY_##family},
constexpr std::array<OpInfo, INGOT_OP_COUNT> kOps{{
#include "ingot/plugin/op_table.def"
}};
#undef INGOT_OP
#undef INGOT_GRAD_none

}  // namespace

const OpInfo& op_info(OpKind kind) {
  const auto i = static_cast<size_t>(kind);
  INGOT_CHECK(i < kOps.size(), "invalid op kind {}", static_cast<int>(kind));
  return kOps[i];
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const auto& op : kOps)
    if (name == op.name) return op.kind;
  return std::nullopt;
}

}  // namespace ingot

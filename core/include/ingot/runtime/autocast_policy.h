// Autocast's policy table: for each op of the op table, which precision it runs in under
// autocast (docs/amp.md lists it). On the runtime floor beside the autocast mode, so the
// functional ops can leave operand promotion to the interceptor for the ops it lowers.
#pragma once

#include "ingot/runtime/op_info.h"
#include "ingot/tensor/dtype.h"

namespace ingot {

enum class CastPolicy {
  Lower,        ///< f32 floating inputs are cast to the autocast dtype; it runs in low precision
  Float32,      ///< low-precision floating inputs are cast to f32; it runs and outputs in f32
  Fallthrough,  ///< runs in the dtype of its inputs (elementwise, pooling, shape ops, casts)
};

/// The policy of `op` (the same on every device).
CastPolicy autocast_policy(OpKind op);

/// Whether output `index` of `op` keeps its own dtype under autocast: attention's log-sum-exp
/// stays f32 (what its backward recomputes the probabilities from), only the output is lowered.
bool autocast_keeps_output(OpKind op, int index);

/// "lower", "float32" or "fallthrough".
const char* cast_policy_name(CastPolicy policy);

/// True when autocast is on for this thread and lowers `op`: then the functional op passes its
/// operands unpromoted and the interceptor casts them (weights from its per-region cache).
bool autocast_lowers(OpKind op);

}  // namespace ingot

// Autocast's policy table. Following torch.autocast: the ops whose cost is the multiply-adds run
// in low precision; those whose accuracy suffers from a short mantissa or range (exp, log, pow,
// layer norm, softmax, reductions and so the losses built from them) run in f32; everything else
// runs in whatever dtype reaches it — batch norm included, whose statistics and affine parameters
// are f32 whatever its input (as in torch's autocast, which leaves batch_norm to its input dtype).
#include "ingot/runtime/autocast_policy.h"

#include "ingot/runtime/autocast_mode.h"

namespace ingot {

CastPolicy autocast_policy(OpKind op) {
  switch (op) {
    case INGOT_OP_MATMUL:  // matmul, linear, batched matmul
    case INGOT_OP_CONV2D:
    case INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION:  // torch lowers it too; its softmax accumulates in f32
      return CastPolicy::Lower;
    case INGOT_OP_EXP:
    case INGOT_OP_LOG:
    case INGOT_OP_LOG1P:
    case INGOT_OP_POW:
    case INGOT_OP_RSQRT:
    case INGOT_OP_RECIPROCAL:
    case INGOT_OP_SOFTPLUS:
    case INGOT_OP_SOFTMAX:
    case INGOT_OP_LOG_SOFTMAX:
    case INGOT_OP_LAYER_NORM:
    case INGOT_OP_SUM:
    case INGOT_OP_MEAN:
    case INGOT_OP_GLOBAL_NORM:
    case INGOT_OP_CROSS_ENTROPY:
      return CastPolicy::Float32;
    default:
      return CastPolicy::Fallthrough;
  }
}

bool autocast_keeps_output(OpKind op, int index) {
  return op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION && index > 0;
}

const char* cast_policy_name(CastPolicy policy) {
  switch (policy) {
    case CastPolicy::Lower:
      return "lower";
    case CastPolicy::Float32:
      return "float32";
    case CastPolicy::Fallthrough:
      return "fallthrough";
  }
  return "?";
}

bool autocast_lowers(OpKind op) { return AutocastMode::is_enabled() && autocast_policy(op) == CastPolicy::Lower; }

}  // namespace ingot

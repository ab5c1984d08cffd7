// Maps every op of the op table to its case generator. The switch has no default on purpose:
// with -Wall -Werror (-Wswitch) a new row in op_table.def does not compile until it has cases.
#include "op_case.h"

namespace ingot::conformance {

namespace {
using Generator = CaseList (*)(OpKind);

Generator generator_for(OpKind op) {
  switch (op) {
    case INGOT_OP_NEG:
    case INGOT_OP_ABS:
    case INGOT_OP_EXP:
    case INGOT_OP_LOG:
    case INGOT_OP_LOG1P:
    case INGOT_OP_SQRT:
    case INGOT_OP_RSQRT:
    case INGOT_OP_SIN:
    case INGOT_OP_COS:
    case INGOT_OP_TANH:
    case INGOT_OP_SIGMOID:
    case INGOT_OP_RELU:
    case INGOT_OP_GELU:
    case INGOT_OP_ERF:
    case INGOT_OP_GELU_TANH:
    case INGOT_OP_SOFTPLUS:
    case INGOT_OP_SIGN:
    case INGOT_OP_FLOOR:
    case INGOT_OP_CEIL:
    case INGOT_OP_ROUND:
    case INGOT_OP_RECIPROCAL:
    case INGOT_OP_CLAMP:
      return &unary_cases;
    case INGOT_OP_ADD:
    case INGOT_OP_ADD_RELU:
    case INGOT_OP_SUB:
    case INGOT_OP_MUL:
    case INGOT_OP_DIV:
    case INGOT_OP_POW:
    case INGOT_OP_MAXIMUM:
    case INGOT_OP_MINIMUM:
      return &binary_cases;
    case INGOT_OP_LOGICAL_NOT:
    case INGOT_OP_EQ:
    case INGOT_OP_NE:
    case INGOT_OP_LT:
    case INGOT_OP_LE:
    case INGOT_OP_GT:
    case INGOT_OP_GE:
    case INGOT_OP_LOGICAL_AND:
    case INGOT_OP_LOGICAL_OR:
    case INGOT_OP_WHERE:
      return &logic_cases;
    case INGOT_OP_SUM:
    case INGOT_OP_MEAN:
    case INGOT_OP_MAX:
    case INGOT_OP_MIN:
    case INGOT_OP_ARGMAX:
      return &reduction_cases;
    case INGOT_OP_MATMUL:
      return &matmul_cases;
    case INGOT_OP_CONV2D:
    case INGOT_OP_CONV2D_BWD_DATA:
    case INGOT_OP_CONV2D_BWD_WEIGHT:
      return &conv_cases;
    case INGOT_OP_MAX_POOL2D:
    case INGOT_OP_MAX_POOL2D_BWD:
    case INGOT_OP_AVG_POOL2D:
    case INGOT_OP_AVG_POOL2D_BWD:
      return &pool_cases;
    case INGOT_OP_CONCAT:
    case INGOT_OP_PAD:
    case INGOT_OP_GATHER:
    case INGOT_OP_INDEX_SELECT:
    case INGOT_OP_SCATTER_ADD:
      return &shape_cases;
    case INGOT_OP_SORT:
    case INGOT_OP_TOPK:
      return &order_cases;
    case INGOT_OP_ARANGE:
    case INGOT_OP_FILL:
    case INGOT_OP_COPY:
    case INGOT_OP_CAST:
    case INGOT_OP_UNIFORM:
    case INGOT_OP_BERNOULLI:
    case INGOT_OP_NORMAL:
      return &creation_cases;
    case INGOT_OP_SOFTMAX:
    case INGOT_OP_LOG_SOFTMAX:
    case INGOT_OP_SOFTMAX_BWD:
    case INGOT_OP_LOG_SOFTMAX_BWD:
      return &softmax_cases;
    case INGOT_OP_LAYER_NORM:
    case INGOT_OP_LAYER_NORM_BWD:
    case INGOT_OP_BATCH_NORM:
    case INGOT_OP_BATCH_NORM_BWD:
    case INGOT_OP_BATCH_NORM_RELU:
      return &norm_cases;
    case INGOT_OP_GLOBAL_NORM:
    case INGOT_OP_SGD_UPDATE:
      return &multi_tensor_cases;
    case INGOT_OP_DROPOUT:
      return &dropout_cases;
    case INGOT_OP_ADAM_UPDATE:
      return &optim_cases;
    case INGOT_OP_SGD_UPDATE_CAPTURABLE:
    case INGOT_OP_ADAM_UPDATE_CAPTURABLE:
      return &capturable_cases;
    case INGOT_OP_RELU_BWD:
    case INGOT_OP_ADD_RELU_BWD:
    case INGOT_OP_GELU_BWD:
    case INGOT_OP_GELU_TANH_BWD:
      return &relu_bwd_cases;
    case INGOT_OP_QUANTIZE:
    case INGOT_OP_DEQUANTIZE:
    case INGOT_OP_QLINEAR:
    case INGOT_OP_QCONV2D:
      return &quantized_cases;
    case INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION:
    case INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD:
      return &attention_cases;
    case INGOT_OP_CROSS_ENTROPY:
    case INGOT_OP_CROSS_ENTROPY_BWD:
      return &cross_entropy_cases;
    case INGOT_OP_COUNT:
      return nullptr;
  }
  return nullptr;
}
}  // namespace

CaseList op_cases(OpKind op) {
  reset_seeds();
  const Generator gen = generator_for(op);
  if (gen == nullptr) return {};
  CaseList cases = gen(op);
  for (OpCase& c : amp_cases(op)) cases.push_back(std::move(c));
  for (OpCase& c : quantized_pool_cases(op)) cases.push_back(std::move(c));
  return cases;
}

}  // namespace ingot::conformance

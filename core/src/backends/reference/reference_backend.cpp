// The reference backend: answers supports() for strided host tensors in each op's dtype set and
// dispatches execute() to the kernel of the op's family.
#include "backends/reference/reference_backend.h"

#include "backends/reference/check.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

const uint32_t kOpDtypes[] = {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) INGOT_DTYPES_##dtypes,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
};

// The kernel of an op: routed by its family (the op table's column), then by the op within
// families whose ops have kernels of their own. nullptr = not an op this backend knows.
Kernel kernel_for(int32_t op) {
  if (op == INGOT_OP_ADD_RELU_BWD) return &run_add_relu_bwd;  // three inputs in the binary family
  switch (ingot_op_family_of(op)) {
    case INGOT_FAMILY_ELEMENTWISE_UNARY: return &run_unary;
    case INGOT_FAMILY_ELEMENTWISE_BINARY: return &run_binary;
    case INGOT_FAMILY_COMPARISON: return &run_compare;
    case INGOT_FAMILY_SELECT: return &run_where;
    case INGOT_FAMILY_REDUCTION: return op == INGOT_OP_ARGMAX ? &run_argmax : &run_reduce;
    case INGOT_FAMILY_MATMUL: return &run_matmul;
    case INGOT_FAMILY_SOFTMAX: return &run_softmax;
    case INGOT_FAMILY_RANDOM: return op == INGOT_OP_DROPOUT ? &run_dropout : &run_random;
    case INGOT_FAMILY_ATTENTION: return op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION ? &run_sdpa : &run_sdpa_bwd;
    case INGOT_FAMILY_LOSS: return op == INGOT_OP_CROSS_ENTROPY ? &run_cross_entropy : &run_cross_entropy_bwd;
    default: break;
  }
  switch (op) {
    case INGOT_OP_CONV2D: return &run_conv2d;
    case INGOT_OP_CONV2D_BWD_DATA: return &run_conv2d_bwd_data;
    case INGOT_OP_CONV2D_BWD_WEIGHT: return &run_conv2d_bwd_weight;
    case INGOT_OP_MAX_POOL2D: return &run_max_pool2d;
    case INGOT_OP_MAX_POOL2D_BWD: return &run_max_pool2d_bwd;
    case INGOT_OP_AVG_POOL2D: return &run_avg_pool2d;
    case INGOT_OP_AVG_POOL2D_BWD: return &run_avg_pool2d_bwd;
    case INGOT_OP_CONCAT: return &run_concat;
    case INGOT_OP_PAD: return &run_pad;
    case INGOT_OP_GATHER: return &run_gather;
    case INGOT_OP_INDEX_SELECT: return &run_index_select;
    case INGOT_OP_SCATTER_ADD: return &run_scatter_add;
    case INGOT_OP_SORT: return &run_sort;
    case INGOT_OP_TOPK: return &run_topk;
    case INGOT_OP_ARANGE: return &run_arange;
    case INGOT_OP_FILL: return &run_fill;
    case INGOT_OP_COPY: return &run_copy;
    case INGOT_OP_CAST: return &run_cast;
    case INGOT_OP_LAYER_NORM: return &run_layer_norm;
    case INGOT_OP_LAYER_NORM_BWD: return &run_layer_norm_bwd;
    case INGOT_OP_BATCH_NORM:
    case INGOT_OP_BATCH_NORM_RELU: return &run_batch_norm;
    case INGOT_OP_BATCH_NORM_BWD: return &run_batch_norm_bwd;
    case INGOT_OP_GLOBAL_NORM: return &run_global_norm;
    case INGOT_OP_SGD_UPDATE: return &run_sgd_update;
    case INGOT_OP_ADAM_UPDATE: return &run_adam_update;
    case INGOT_OP_SGD_UPDATE_CAPTURABLE: return &run_sgd_update_capturable;
    case INGOT_OP_ADAM_UPDATE_CAPTURABLE: return &run_adam_update_capturable;
    case INGOT_OP_QUANTIZE: return &run_quantize;
    case INGOT_OP_DEQUANTIZE: return &run_dequantize;
    case INGOT_OP_QLINEAR: return &run_qlinear;
    case INGOT_OP_QCONV2D: return &run_qconv2d;
    default: return nullptr;
  }
}

bool is_host_strided(const ingot_tensor_desc& d) {
  return d.layout == INGOT_LAYOUT_STRIDED && d.device_kind == INGOT_DEVICE_CPU && d.ndim >= 0 &&
         d.ndim <= INGOT_MAX_DIMS && d.dtype >= 0 && d.dtype < INGOT_DTYPE_COUNT;
}

// The tensor whose dtype the op table's dtypes column constrains: the first data input, or the
// output of ops without inputs (creation, RNG).
const ingot_tensor_desc* primary(const sdk::OpCall& c) {
  if (c.op == INGOT_OP_WHERE || c.op == INGOT_OP_SGD_UPDATE_CAPTURABLE || c.op == INGOT_OP_ADAM_UPDATE_CAPTURABLE)
    return c.n_in > 1 ? &c.in[1] : nullptr;  // after the condition / the hyper-parameters
  if (c.n_in > 0) return &c.in[0];
  return c.n_out > 0 ? &c.out[0] : nullptr;
}

// Optional slots, which core may pass as descriptors without data (see is_absent): norm
// weights, biases and statistics, SGD momentum buffers. Every other tensor must have data.
bool may_be_absent(int32_t op, bool input, int index) {
  switch (op) {
    case INGOT_OP_LAYER_NORM:
    case INGOT_OP_BATCH_NORM:
    case INGOT_OP_BATCH_NORM_RELU:
      return index >= 1;
    case INGOT_OP_LAYER_NORM_BWD:
      return input ? index == 4 : index >= 1;
    case INGOT_OP_BATCH_NORM_BWD:
      return input ? index == 2 : index >= 1;
    case INGOT_OP_SGD_UPDATE:
      return input && index % 3 == 2;
    case INGOT_OP_SGD_UPDATE_CAPTURABLE:
      return input && index > 0 && (index - 1) % 3 == 2;
    default:
      return false;
  }
}

void check_data(const sdk::OpCall& c) {
  for (int i = 0; i < c.n_in; ++i) {
    if (c.in[i].data == nullptr && sdk::numel(c.in[i]) > 0 && !may_be_absent(c.op, true, i)) {
      fail("{}: input {} {} has no data", op_name(c.op), i, shape_str(c.in[i]));
    }
  }
  for (int i = 0; i < c.n_out; ++i) {
    if (c.out[i].data == nullptr && sdk::numel(c.out[i]) > 0 && !may_be_absent(c.op, false, i)) {
      fail("{}: output {} {} has no data", op_name(c.op), i, shape_str(c.out[i]));
    }
  }
}

class ReferenceBackend final : public sdk::ComputeImpl {
 public:
  bool supports(const sdk::OpCall& c) override {
    if (c.op < 0 || c.op >= INGOT_OP_COUNT || kernel_for(c.op) == nullptr) return false;
    for (int i = 0; i < c.n_in; ++i) {
      if (!is_host_strided(c.in[i])) return false;
    }
    for (int i = 0; i < c.n_out; ++i) {
      if (!is_host_strided(c.out[i])) return false;
    }
    const ingot_tensor_desc* p = primary(c);
    return p == nullptr || (kOpDtypes[c.op] & (1u << p->dtype)) != 0;
  }

  void execute(const sdk::OpCall& c, const ingot_exec_context& ctx) override {
    (void)ctx;  // single-threaded loops, no scratch from core
    if (c.op < 0 || c.op >= INGOT_OP_COUNT) fail("reference: unknown op kind {}", c.op);
    if (c.n_in < 0 || c.n_out < 0 || (c.n_in > 0 && c.in == nullptr) || (c.n_out > 0 && c.out == nullptr)) {
      fail("{}: bad descriptor arrays ({} inputs, {} outputs)", op_name(c.op), c.n_in, c.n_out);
    }
    if (!supports(c)) {
      const ingot_tensor_desc* p = primary(c);
      throw sdk::Failure(INGOT_ERR_UNSUPPORTED,
                         fmt::format("{}: the reference backend needs strided host tensors of a supported dtype "
                                     "(got {})",
                                     op_name(c.op), p != nullptr ? sdk::dtype_label(p->dtype) : "no tensors"));
    }
    check_data(c);
    kernel_for(c.op)(c);
  }
};

}  // namespace

const ingot_backend* backend_table() {
  static const ingot_backend* const table = sdk::make_host_backend(new ReferenceBackend, "reference", 0);
  return table;
}

}  // namespace ingot::reference

// One entry per oneDNN primitive family (matmul, conv, pooling, ...): which ops it handles,
// whether it accelerates a call exactly (supports), how to run it, and optional opaque outputs.
#pragma once

#include "exec.h"
#include "ingot/plugin/sdk.h"
#include "onednn_backend.h"

namespace ingot::onednn {

struct OpFamily {
  bool (*handles)(int32_t op);
  /// True only for calls computed exactly with torch semantics by a non-"ref" kernel.
  bool (*supports)(OnednnBackend& be, const sdk::OpCall& call);
  void (*execute)(const sdk::OpCall& call, Exec& ex);
  /// Optional: give output `index` an opaque (blocked) layout; false = stay strided.
  bool (*choose_layout)(OnednnBackend& be, const sdk::OpCall& call, ingot_tensor_desc* outputs, int index);
  /// Optional: the blocked layout input `index` runs fastest in, for a tensor packed once.
  bool (*choose_input_layout)(OnednnBackend& be, const sdk::OpCall& call, int index, ingot_tensor_desc* layout) =
      nullptr;
  /// Optional: true if output `out` may be written over input `in` (the backend has checked that
  /// both have one layout): the kernel reads each element before it writes it.
  bool (*in_place)(OnednnBackend& be, const sdk::OpCall& call, int out, int in) = nullptr;
};

const OpFamily& matmul_family();
const OpFamily& conv_family();
const OpFamily& pool_family();
const OpFamily& eltwise_family();
const OpFamily& binary_family();
const OpFamily& softmax_family();
const OpFamily& batch_norm_family();
const OpFamily& layer_norm_family();
const OpFamily& reduction_family();
const OpFamily& reorder_family();
const OpFamily& optim_family();
const OpFamily& select_family();
const OpFamily& relu_bwd_family();
const OpFamily& quant_family();          // QUANTIZE, DEQUANTIZE
const OpFamily& qlinear_family();        // QLINEAR
const OpFamily& qconv_family();          // QCONV2D
const OpFamily& attention_family();      // SCALED_DOT_PRODUCT_ATTENTION and its backward
const OpFamily& fill_family();           // FILL (f32, bf16)
const OpFamily& dropout_family();        // DROPOUT (f32, bf16)
const OpFamily& cross_entropy_family();  // CROSS_ENTROPY and its backward (f32, bf16)
const OpFamily& add_relu_bwd_family();   // ADD_RELU_BWD (f32, bf16)
const OpFamily& index_family();          // INDEX_SELECT (any dtype), SCATTER_ADD (f32)
const OpFamily& random_family();         // UNIFORM, NORMAL (f32)

/// Sets outputs[index] to an opaque layout holding `md` (a new handle owned by core).
bool set_opaque_output(OnednnBackend& be, ingot_tensor_desc* outputs, int index, const dnnl::memory::desc& md);

}  // namespace ingot::onednn

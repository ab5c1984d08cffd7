// Entry points of the reference kernels, one per op family; reference_backend.cpp dispatches
// the op table to them. Each checks its arguments and throws sdk::Failure on bad ones.
#pragma once

#include "ingot/plugin/sdk.h"

namespace ingot::reference {

using Kernel = void (*)(const sdk::OpCall&);

// unary.cpp: NEG .. LOGICAL_NOT, GELU_TANH
void run_unary(const sdk::OpCall& c);
// binary.cpp: ADD SUB MUL DIV POW MAXIMUM MINIMUM, ADD_RELU, RELU_BWD, GELU_BWD, GELU_TANH_BWD; ADD_RELU_BWD
void run_binary(const sdk::OpCall& c);
void run_add_relu_bwd(const sdk::OpCall& c);
// compare.cpp: EQ NE LT LE GT GE LOGICAL_AND LOGICAL_OR, and WHERE
void run_compare(const sdk::OpCall& c);
void run_where(const sdk::OpCall& c);
// reduce.cpp: SUM MEAN MAX MIN to the output's shape, ARGMAX along an axis
void run_reduce(const sdk::OpCall& c);
void run_argmax(const sdk::OpCall& c);
// matmul.cpp
void run_matmul(const sdk::OpCall& c);
// conv.cpp
void run_conv2d(const sdk::OpCall& c);
void run_conv2d_bwd_data(const sdk::OpCall& c);
void run_conv2d_bwd_weight(const sdk::OpCall& c);
// pool.cpp
void run_max_pool2d(const sdk::OpCall& c);
void run_max_pool2d_bwd(const sdk::OpCall& c);
void run_avg_pool2d(const sdk::OpCall& c);
void run_avg_pool2d_bwd(const sdk::OpCall& c);
// indexing.cpp
void run_concat(const sdk::OpCall& c);
void run_pad(const sdk::OpCall& c);
void run_gather(const sdk::OpCall& c);
void run_index_select(const sdk::OpCall& c);
void run_scatter_add(const sdk::OpCall& c);
// sort.cpp
void run_sort(const sdk::OpCall& c);
void run_topk(const sdk::OpCall& c);
// creation.cpp
void run_arange(const sdk::OpCall& c);
void run_fill(const sdk::OpCall& c);
void run_copy(const sdk::OpCall& c);
void run_cast(const sdk::OpCall& c);
// attention.cpp: SCALED_DOT_PRODUCT_ATTENTION and its backward
void run_sdpa(const sdk::OpCall& c);
void run_sdpa_bwd(const sdk::OpCall& c);
// cross_entropy.cpp: CROSS_ENTROPY and its backward
void run_cross_entropy(const sdk::OpCall& c);
void run_cross_entropy_bwd(const sdk::OpCall& c);
// softmax.cpp: SOFTMAX LOG_SOFTMAX and their backward ops
void run_softmax(const sdk::OpCall& c);
// layer_norm.cpp, batch_norm.cpp
void run_layer_norm(const sdk::OpCall& c);
void run_layer_norm_bwd(const sdk::OpCall& c);
void run_batch_norm(const sdk::OpCall& c);  // and BATCH_NORM_RELU
void run_batch_norm_bwd(const sdk::OpCall& c);
// optim.cpp
void run_global_norm(const sdk::OpCall& c);
void run_sgd_update(const sdk::OpCall& c);
void run_adam_update(const sdk::OpCall& c);
void run_sgd_update_capturable(const sdk::OpCall& c);
void run_adam_update_capturable(const sdk::OpCall& c);
// random.cpp: UNIFORM BERNOULLI NORMAL
void run_random(const sdk::OpCall& c);
// dropout.cpp
void run_dropout(const sdk::OpCall& c);
// quantize.cpp: QUANTIZE DEQUANTIZE QLINEAR QCONV2D
void run_quantize(const sdk::OpCall& c);
void run_dequantize(const sdk::OpCall& c);
void run_qlinear(const sdk::OpCall& c);
void run_qconv2d(const sdk::OpCall& c);

// Helpers other families reuse.
/// An INGOT_ACT_* activation in double (matmul.cpp): the int8 ops' epilogue.
double apply_activation(int32_t activation, double x);
/// The fused post-op of MATMUL and CONV2D on their sums `y` (double) for an output of `dtype`: each
/// sum rounded to the dtype, then the activation exactly as its own op (RELU, GELU, GELU_TANH)
/// computes it, so that a fused call gives the bits of the op and then the activation (unary.cpp).
void activate_as_stored(const sdk::OpCall& c, int32_t dtype, int32_t activation, std::vector<double>& y);
/// (creation.cpp) Copies `src` (same dtype, broadcast to dst's shape) into `dst` through both strides.
void copy_strided(const ingot_tensor_desc& dst, const ingot_tensor_desc& src, int32_t op);
/// Writes `value` converted to `dst`'s dtype into every element of `dst`.
void fill_strided(const ingot_tensor_desc& dst, double value);

}  // namespace ingot::reference

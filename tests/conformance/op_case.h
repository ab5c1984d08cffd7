// One conformance case: inputs, output specs and attributes of one op call, plus what to compare
// and how tightly; and the helpers the per-family case generators build inputs with.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot::conformance {

/// One call of one op, run on a backend under test and on the reference.
struct OpCase {
  OpKind op = INGOT_OP_COUNT;
  std::string note;  ///< what the case exercises ("broadcast", "transposed b")
  std::vector<Tensor> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<unsigned char> attr;    ///< bytes of the ingot_attr_* struct; empty = NULL
  int64_t reduction = 1;              ///< longest reduction behind an output (scales tolerances)
  std::vector<int> compared_outputs;  ///< empty = every output
  std::vector<int> mutated_inputs;    ///< in-place ops: inputs compared after the call
  std::optional<double> tolerance;    ///< replaces the dtype's rtol = atol (0 = bit-identical);
                                      ///< integer outputs: the absolute difference allowed
  /// MAX_POOL2D_BWD: inputs are (grad_y, x); the workspace comes from each backend's own forward.
  bool pool_workspace = false;

  template <class A>
  void set_attr(const A& a) {
    attr.resize(sizeof(A));
    std::memcpy(attr.data(), &a, sizeof(A));
  }
  const void* attrs() const { return attr.empty() ? nullptr : attr.data(); }
  /// "conv2d [2,3,7,7] f32 strides [147,49,7,1] ... -> [2,4,7,7] f32 (note)".
  std::string describe() const;
};

using CaseList = std::vector<OpCase>;

/// Every case of one op (empty for an op no generator knows: a test reports it).
CaseList op_cases(OpKind op);

// ---- input helpers (cases_helpers.cpp) -------------------------------------------------------

/// Memory layouts of an input with a given logical shape.
enum class Layout {
  Contiguous,
  Transposed,  ///< last two dims swapped in memory (falls back to Strided below rank 2)
  Strided,     ///< every other element of the last dim (stride 2)
  Offset,      ///< a slice starting at element 1 of dim 0 (non-zero offset)
  Expanded,    ///< dim 0 broadcast from size 1 (stride 0); rank 0 stays contiguous
};
const char* layout_name(Layout l);

/// Uniform values in [lo, hi) with the requested memory layout; integer and bool dtypes get
/// integers in [lo, hi] (converted, so bool is true where the integer is non-zero), and so do
/// floating dtypes when `integers` (ties for comparisons).
Tensor make_input(const Shape& shape, DType dtype, uint64_t seed, Layout layout = Layout::Contiguous, double lo = -1.0,
                  double hi = 1.0, bool integers = false);
/// Integer values in [lo, hi] stored as `dtype` (comparisons, ties, booleans).
Tensor small_ints(const Shape& shape, DType dtype, uint64_t seed, int64_t lo, int64_t hi);
/// Values distinct along `axis` (a permutation of 0..n-1 per line, shifted to fit `dtype`):
/// for ops whose result depends on order (sort, top-k, argmax, max-pool indices).
Tensor distinct_along(const Shape& shape, DType dtype, uint64_t seed, int axis);
/// i64 indices uniform in [0, bound).
Tensor random_indices(const Shape& shape, int64_t bound, uint64_t seed);
/// `count` random shapes of rank 0..4 with dims from {0, 1, 2, 3, 5, 7, 17} (0 rarely), at most
/// 4096 elements each.
std::vector<Shape> random_shapes(uint64_t seed, int count);
/// A random shape that broadcasts to `s`: some leading dims dropped, some dims set to 1.
Shape broadcastable_to(const Shape& s, uint64_t seed);
/// "[2, 3] f32 strides [1, 2] +4" for a case description.
std::string tensor_note(const Tensor& t);

/// The dtypes of the op table's dtypes column, in enum order.
std::vector<DType> table_dtypes(OpKind op);
/// Whether `dtype` holds 1003 consecutive integers exactly (not bf16, i8, u8): order-dependent
/// cases with long lines need that many distinct values.
bool holds_1003_distinct(DType dtype);
/// Value range that keeps integer results of `dtype` in range (no overflow, no wrap).
struct Range {
  double lo, hi;
};
Range default_range(DType dtype);

/// A fresh case for `op` with `note`.
OpCase new_case(OpKind op, std::string note);
/// A seed that differs per op and per call; op_cases() resets the count so that every op's cases
/// are the same whichever tests run.
uint64_t next_seed(OpKind op);
void reset_seeds();

// ---- per-family generators (one file each) ----------------------------------------------------
CaseList unary_cases(OpKind op);         // cases_elementwise.cpp
CaseList binary_cases(OpKind op);        // cases_elementwise.cpp
CaseList logic_cases(OpKind op);         // cases_elementwise.cpp: comparisons, logical ops, where
CaseList relu_bwd_cases(OpKind op);      // cases_elementwise.cpp: relu_bwd, gelu_bwd, gelu_tanh_bwd, add_relu_bwd (no broadcasting)
CaseList reduction_cases(OpKind op);     // cases_reduce.cpp: sum/mean/max/min/argmax
CaseList softmax_cases(OpKind op);       // cases_reduce.cpp: softmax family
CaseList matmul_cases(OpKind op);        // cases_conv.cpp
CaseList conv_cases(OpKind op);          // cases_conv.cpp: conv2d and its backward ops
CaseList pool_cases(OpKind op);          // cases_pool.cpp
CaseList shape_cases(OpKind op);         // cases_shape.cpp: concat, pad, gather, index_select, scatter_add
CaseList order_cases(OpKind op);         // cases_shape.cpp: sort, topk
CaseList creation_cases(OpKind op);      // cases_create.cpp: arange, fill, copy, cast, rng
CaseList norm_cases(OpKind op);          // cases_norm.cpp: layer_norm, batch_norm and backward
CaseList multi_tensor_cases(OpKind op);  // cases_norm.cpp: global_norm, sgd_update
CaseList optim_cases(OpKind op);         // cases_optim.cpp: adam_update
CaseList capturable_cases(OpKind op);    // cases_optim.cpp: sgd_update_capturable, adam_update_capturable
CaseList dropout_cases(OpKind op);       // cases_dropout.cpp
CaseList quantized_cases(OpKind op);     // cases_quant.cpp: quantize, dequantize, qlinear, qconv2d
CaseList attention_cases(OpKind op);     // cases_attention.cpp: scaled_dot_product_attention and backward
CaseList cross_entropy_cases(OpKind op); // cases_attention.cpp: the fused cross_entropy and backward
/// Extra cases for every op, after its family's: a bf16 training step's calls (cases_amp.cpp).
CaseList amp_cases(OpKind op);
/// Extra MAX_POOL2D cases of quantized values with ties (cases_quant.cpp); empty for other ops.
CaseList quantized_pool_cases(OpKind op);

}  // namespace ingot::conformance

// What QLINEAR on the cuda backend accepts and the padded sizes of its GEMM, as host arithmetic on
// the descriptors (no CUDA calls: tested without a GPU). cuBLASLt's int8 kernels want dims and
// leading dimensions that are multiples of 4: K is padded to a multiple of 16 (16-byte rows of x'
// and w') and N to a multiple of 4 (the i32 result's rows).
#include "qlinear_problem.h"

namespace ingot::cuda {
namespace {

bool is_q8(int32_t dtype) { return dtype == INGOT_U8 || dtype == INGOT_I8; }

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// A scale (f32) or zero-point (i32) tensor of 1 value, or of `count` values read densely.
bool param_ok(const ingot_tensor_desc& d, int32_t dtype, int64_t count) {
  const int64_t n = sdk::numel(d);
  return d.dtype == dtype && d.ndim <= 1 && (n == 1 || (n == count && d.strides[0] == 1));
}

}  // namespace

bool qlinear_dims(const sdk::OpCall& c, QLinearDims& d) {
  const ingot_tensor_desc &x = c.in[0], &w = c.in[3], &y = c.out[0];
  if (w.ndim != 2 || x.ndim < 1 || y.ndim != x.ndim) return false;
  d.n = w.shape[0], d.k = w.shape[1], d.m = 1;
  if (x.shape[x.ndim - 1] != d.k || y.shape[y.ndim - 1] != d.n) return false;
  for (int i = 0; i + 1 < x.ndim; ++i) {
    if (x.shape[i] != y.shape[i]) return false;
    d.m *= x.shape[i];
  }
  d.k_pad = d.k > 16 ? round_up(d.k, 16) : 16;
  d.n_pad = d.n > 4 ? round_up(d.n, 4) : 4;
  return true;
}

bool qlinear_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1 || c.attrs == nullptr ||
      static_cast<const ingot_attr_matmul*>(c.attrs)->struct_size < sizeof(ingot_attr_matmul))
    return false;
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const int32_t out = c.out[0].dtype;
  if (out != INGOT_F32 && out != INGOT_I32 && !is_q8(out)) return false;
  if (c.n_in != 6 + (attr.has_bias ? 1 : 0) + (is_q8(out) ? 2 : 0)) return false;
  if (attr.activation < INGOT_ACT_NONE || attr.activation > INGOT_ACT_GELU) return false;
  if (out == INGOT_I32 && (attr.has_bias || attr.activation != INGOT_ACT_NONE)) return false;
  QLinearDims d;
  if (!is_q8(c.in[0].dtype) || c.in[3].dtype != INGOT_I8 || !qlinear_dims(c, d) || !sdk::is_contiguous(c.out[0]))
    return false;
  if (d.m >= (int64_t{1} << 31) || d.n_pad >= (int64_t{1} << 31)) return false;  // one block per row
  if (!param_ok(c.in[1], INGOT_F32, 1) || !param_ok(c.in[2], INGOT_I32, 1) || !param_ok(c.in[4], INGOT_F32, d.n) ||
      !param_ok(c.in[5], INGOT_I32, d.n) || sdk::numel(c.in[4]) != sdk::numel(c.in[5]))
    return false;
  if (attr.has_bias) {
    const ingot_tensor_desc& b = c.in[6];
    if (b.dtype != INGOT_F32 || b.ndim != 1 || b.shape[0] != d.n || (d.n > 1 && b.strides[0] != 1)) return false;
  }
  return !is_q8(out) || (param_ok(c.in[c.n_in - 2], INGOT_F32, 1) && param_ok(c.in[c.n_in - 1], INGOT_I32, 1));
}

}  // namespace ingot::cuda

// Attention family: SCALED_DOT_PRODUCT_ATTENTION and its backward as tiled online-softmax
// kernels (op_attention_kernels.h; oneDNN 2.6 has no attention primitive) on f32 and bf16
// operands in any strides, on AVX2 and AVX-512 CPUs; f64 and older ISAs stay with the reference.
#include <optional>

#include "ingot/plugin/philox.h"
#include "op_attention_kernels.h"
#include "op_families.h"

namespace ingot::onednn {

void attention_keep_tile(const AttnProblem& p, int64_t bh, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                         float* keep, int64_t ld) {
  const double keep_p = 1.0 - p.dropout_p;
  const auto kept = static_cast<float>(1.0 / keep_p);
  for (int64_t i = 0; i < rows; ++i) {
    // the reference's draw: value n of the stream over the row-major [B, H, Tq, Tk] index
    const auto row = static_cast<uint64_t>((bh * p.tq + i0 + i) * p.tk);
    uint64_t block_of = ~uint64_t{0};
    sdk::PhiloxBlock block{};
    for (int64_t j = 0; j < cols; ++j) {
      const uint64_t n = row + static_cast<uint64_t>(j0 + j);
      if (n / 4 != block_of) {
        block_of = n / 4;
        block = sdk::philox_block(p.seed, p.offset + block_of);
      }
      keep[j * ld + i] = sdk::philox_bernoulli(block.v[n % 4], keep_p) ? kept : 0.f;
    }
  }
}

namespace {

bool handles(int32_t op) {
  return op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION || op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
}

/// The kernels for the ISA oneDNN runs at (so ONEDNN_MAX_CPU_ISA=AVX2 tests the AVX2 ones), or
/// nullptr below AVX2.
const AttnKernels* kernels() {
  static const AttnKernels* const k = []() -> const AttnKernels* {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core:
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return &attention_kernels_avx512();
      case dnnl::cpu_isa::avx2:
      case dnnl::cpu_isa::avx2_vnni:
        return __builtin_cpu_supports("fma") ? &attention_kernels_avx2() : nullptr;
      default:
        return nullptr;
    }
  }();
  return k;
}

const char* kernels_name() {
  return kernels() == &attention_kernels_avx512() ? "flash_attention:avx512" : "flash_attention:avx2";
}

using Shape4 = int64_t[4];

/// A strided input of `shape` and `dtype`; broadcast (size-1) dims get stride 0.
bool input_ok(const ingot_tensor_desc& t, int32_t dtype, const Shape4& shape, AttnOperand& out) {
  if (t.dtype != dtype || t.layout != INGOT_LAYOUT_STRIDED || t.ndim != 4) return false;
  for (int i = 0; i < 4; ++i) {
    if (t.shape[i] != shape[i]) return false;
    out.stride[i] = t.shape[i] == 1 ? 0 : t.strides[i];
  }
  out.data = sdk::data_ptr(t);
  return true;
}

/// The kernels write outputs (and read lse) row-major dense.
bool dense_ok(const ingot_tensor_desc& t, int32_t dtype, int64_t numel) {
  return t.dtype == dtype && t.layout == INGOT_LAYOUT_STRIDED && sdk::numel(t) == numel && sdk::is_contiguous(t);
}

std::optional<AttnProblem> analyse(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_attention>(c.attrs);
  const bool bwd = c.op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
  if (a.causal < 0 || a.causal > 2 || a.mask < 0 || a.mask > 2 || !(a.dropout_p >= 0.0 && a.dropout_p < 1.0))
    return std::nullopt;
  if (c.n_in != (bwd ? 6 : 3) + (a.mask != 0 ? 1 : 0) || c.n_out != (bwd ? 3 : 2)) return std::nullopt;
  const int first = bwd ? 1 : 0;
  const ingot_tensor_desc &q = c.in[first], &k = c.in[first + 1], &v = c.in[first + 2];
  const int32_t dt = q.dtype;
  if ((dt != INGOT_F32 && dt != INGOT_BF16) || q.ndim != 4 || k.ndim != 4 || v.ndim != 4) return std::nullopt;
  AttnProblem p;
  p.b = q.shape[0], p.h = q.shape[1], p.tq = q.shape[2], p.tk = k.shape[2], p.d = q.shape[3], p.dv = v.shape[3];
  if (p.d == 0 || p.dv == 0) return std::nullopt;
  const Shape4 qs{p.b, p.h, p.tq, p.d}, ks{p.b, p.h, p.tk, p.d}, vs{p.b, p.h, p.tk, p.dv}, os{p.b, p.h, p.tq, p.dv};
  if (!input_ok(q, dt, qs, p.q) || !input_ok(k, dt, ks, p.k) || !input_ok(v, dt, vs, p.v)) return std::nullopt;
  if (a.mask != 0) {
    const ingot_tensor_desc& m = c.in[c.n_in - 1];
    if (m.dtype != (a.mask == 1 ? INGOT_BOOL : dt) || m.layout != INGOT_LAYOUT_STRIDED || m.ndim != 4)
      return std::nullopt;
    const Shape4 full{p.b, p.h, p.tq, p.tk};
    for (int i = 0; i < 4; ++i) {
      if (m.shape[i] != full[i] && m.shape[i] != 1) return std::nullopt;
      p.m.stride[i] = m.shape[i] == 1 ? 0 : m.strides[i];
    }
    p.m.data = sdk::data_ptr(m);
  }
  const int64_t rows = p.b * p.h * p.tq;
  if (!bwd) {
    if (!dense_ok(c.out[0], dt, rows * p.dv) || c.out[0].ndim != 4 || !dense_ok(c.out[1], INGOT_F32, rows))
      return std::nullopt;
    p.o_out = sdk::data_ptr(c.out[0]);
    p.lse_out = sdk::data_ptr<float>(c.out[1]);
  } else {
    if (!input_ok(c.in[0], dt, os, p.go) || !input_ok(c.in[4], dt, os, p.o) || !dense_ok(c.in[5], INGOT_F32, rows))
      return std::nullopt;
    if (!dense_ok(c.out[0], dt, rows * p.d) || !dense_ok(c.out[1], dt, p.b * p.h * p.tk * p.d) ||
        !dense_ok(c.out[2], dt, p.b * p.h * p.tk * p.dv))
      return std::nullopt;
    p.lse_in = sdk::data_ptr<const float>(c.in[5]);
    p.gq = sdk::data_ptr(c.out[0]);
    p.gk = sdk::data_ptr(c.out[1]);
    p.gv = sdk::data_ptr(c.out[2]);
  }
  p.bf16 = dt == INGOT_BF16;
  p.scale = static_cast<float>(a.scale);
  p.causal = a.causal != 0;
  p.causal_shift = a.causal == 2 ? p.tk - p.tq : 0;
  p.mask = a.mask;
  p.dropout_p = a.dropout_p;
  p.seed = a.seed;
  p.offset = a.offset;
  return p;
}

bool supports(OnednnBackend&, const sdk::OpCall& c) { return kernels() != nullptr && analyse(c).has_value(); }

void execute(const sdk::OpCall& c, Exec& ex) {
  std::optional<AttnProblem> p = analyse(c);
  const AttnKernels* k = kernels();
  if (!p || k == nullptr) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn attention: unsupported call");
  p->threads = ex.backend().threads();
  const bool bwd = c.op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
  const size_t slot = ex.reserve(bwd ? k->backward_workspace(*p) : k->forward_workspace(*p));
  ex.allocate();
  ex.backend().note_impl(c.op, kernels_name());
  (bwd ? k->backward : k->forward)(*p, ex.ptr(slot));
}

}  // namespace

const OpFamily& attention_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn

// Reduction family: SUM / MEAN / MAX / MIN of a dense f32 or bf16 tensor to the output's shape
// (same rank, each dim kept or 1), through oneDNN's reduction primitive. bf16 accumulates in f32
// and rounds once (torch's opmath), into a bf16 output or an f32 one.
#include <omp.h>

#include <algorithm>
#include <optional>

#include "bf16.h"
#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

std::optional<dnnl::algorithm> alg_of(int32_t op) {
  switch (op) {
    case INGOT_OP_SUM:
      return dnnl::algorithm::reduction_sum;
    case INGOT_OP_MEAN:
      return dnnl::algorithm::reduction_mean;
    case INGOT_OP_MAX:
      return dnnl::algorithm::reduction_max;
    case INGOT_OP_MIN:
      return dnnl::algorithm::reduction_min;
    default:
      return std::nullopt;
  }
}

bool handles(int32_t op) { return alg_of(op).has_value(); }

bool shapes_ok(const sdk::OpCall& c) {
  if (c.n_in != 1 || c.n_out != 1) return false;
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  if (x.dtype != INGOT_F32 && x.dtype != INGOT_BF16) return false;
  if (!is_compute_dtype(x.dtype) || (y.dtype != x.dtype && y.dtype != INGOT_F32)) return false;
  if (x.ndim != y.ndim || !is_plain_host(x) || !is_plain_host(y)) return false;
  if (!sdk::is_contiguous(x) || !sdk::is_contiguous(y)) return false;
  for (int d = 0; d < x.ndim; ++d) {
    if (y.shape[d] != x.shape[d] && y.shape[d] != 1) return false;
  }
  return true;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c) {
  const dims x = dims_of(c.in[0]), y = dims_of(c.out[0]);
  const dt xt = to_dnnl(c.in[0].dtype), yt = to_dnnl(c.out[0].dtype);
  KeyBuilder key(c.op);
  key.add(x.size()).add_bytes(x.data(), x.size() * sizeof(int64_t)).add_bytes(y.data(), y.size() * sizeof(int64_t));
  key.add(xt).add(yt).add(be.threads());
  return be.plan(key.str(), [&] {
    auto d = dnnl::reduction::desc(*alg_of(c.op), plain_md(x, xt), plain_md(y, yt), 0.f, 0.f);
    auto pd = dnnl::reduction::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
    Plan p;
    p.prim = dnnl::reduction(pd);
    p.pd = pd;
    return p;
  });
}

// SUM / MEAN as [A, K, B] -> [K]: the kept dims form one block, everything before (A) and after
// (B) it is reduced. That is a Linear's bias gradient ([rows, features] -> [features]) and a
// conv's ([N, C, H*W] -> [C]), which oneDNN 2.6 only offers as its slow reference kernel.
struct Blocks {
  int64_t a = 1, k = 1, b = 1;
};

std::optional<Blocks> blocks_of(const sdk::OpCall& c) {
  if (c.op != INGOT_OP_SUM && c.op != INGOT_OP_MEAN) return std::nullopt;
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  Blocks r;
  int stage = 0;  // 0: leading reduced dims, 1: kept block, 2: trailing reduced dims
  for (int d = 0; d < x.ndim; ++d) {
    if (x.shape[d] == 1) continue;
    const bool kept = y.shape[d] == x.shape[d];
    if (kept && stage == 2) return std::nullopt;
    if (kept) stage = 1;
    if (!kept && stage == 1) stage = 2;
    (stage == 0 ? r.a : stage == 1 ? r.k : r.b) *= x.shape[d];
  }
  return r;
}

/// Accumulates in f32 whatever the storage type (In / Out: float or bf16 bits), rounding once.
template <class In, class Out>
void reduce_blocks(const Blocks& s, const In* x, Out* y, float scale) {
  const bool par = s.a * s.k * s.b >= Exec::kSerialGrain && omp_get_max_threads() > 1;
  if (s.b == 1) {
    // Rows added in order into a chunk of accumulators, vectorised along K; threads own chunks of K.
    constexpr int64_t kChunk = 256;
#pragma omp parallel for if (par && s.k > kChunk)
    for (int64_t k0 = 0; k0 < s.k; k0 += kChunk) {
      const int64_t n = std::min(kChunk, s.k - k0);
      float acc[kChunk];
      for (int64_t j = 0; j < n; ++j) acc[j] = 0.f;
      for (int64_t a = 0; a < s.a; ++a) {
        const In* row = x + a * s.k + k0;
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) acc[j] += load_f32(row, j);
      }
      for (int64_t j = 0; j < n; ++j) store_f32(y + k0, j, acc[j] * scale);
    }
    return;
  }
#pragma omp parallel for if (par && s.k > 1)
  for (int64_t k = 0; k < s.k; ++k) {
    float acc = 0.f;
    for (int64_t a = 0; a < s.a; ++a) {
      const In* row = x + (a * s.k + k) * s.b;
      float part = 0.f;
#pragma omp simd reduction(+ : part)
      for (int64_t b = 0; b < s.b; ++b) part += load_f32(row, b);
      acc += part;
    }
    store_f32(y, k, acc * scale);
  }
}

void run_blocks(const sdk::OpCall& c, const Blocks& s, float scale) {
  const void* x = sdk::data_ptr(c.in[0]);
  void* y = sdk::data_ptr(c.out[0]);
  if (c.in[0].dtype == INGOT_F32) return reduce_blocks(s, static_cast<const float*>(x), static_cast<float*>(y), scale);
  const auto* xb = static_cast<const uint16_t*>(x);
  if (c.out[0].dtype == INGOT_BF16) return reduce_blocks(s, xb, static_cast<uint16_t*>(y), scale);
  reduce_blocks(s, xb, static_cast<float*>(y), scale);
}

bool own_loop(OnednnBackend& be, const sdk::OpCall& c) {
  auto p = get_plan(be, c);
  return (!p->prim || is_ref_impl(p->impl)) && blocks_of(c).has_value();
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  if (!shapes_ok(c)) return false;
  auto p = get_plan(be, c);
  return (p->prim && !is_ref_impl(p->impl)) || own_loop(be, c);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  if (!shapes_ok(c)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn reduction: unsupported call");
  if (own_loop(ex.backend(), c)) {
    const Blocks s = *blocks_of(c);
    ex.backend().note_impl(c.op, "cpu_onednn:omp_blocks");
    const float scale = c.op == INGOT_OP_MEAN ? 1.f / static_cast<float>(s.a * s.b) : 1.f;
    return run_blocks(c, s, scale);
  }
  auto p = get_plan(ex.backend(), c);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn reduction: " + p->impl);
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(c.in[0]));
  ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.out[0]));
  ex.run(*p, c.op, scratch);
}

}  // namespace

const OpFamily& reduction_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn

// DROPOUT on f32 and bf16 as an OpenMP loop over 4-value Philox blocks: the reference's draws
// (ingot/plugin/philox.h) and its float arithmetic, so the kept elements and values match it bit
// for bit on any thread count (the reference's single thread was 11% of a BERT training step).
// Dense tensors only.
#include <omp.h>

#include "bf16.h"
#include "ingot/plugin/philox.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_DROPOUT; }

bool dense(const ingot_tensor_desc& t) { return t.layout == INGOT_LAYOUT_STRIDED && sdk::is_contiguous(t); }

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  if (c.n_in != 1 || c.n_out != 2) return false;
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0], &keep = c.out[1];
  const auto& a = sdk::attr<ingot_attr_rng>(c.attrs);
  return (x.dtype == INGOT_F32 || x.dtype == INGOT_BF16) && y.dtype == x.dtype && keep.dtype == INGOT_BOOL &&
         dense(x) && dense(y) && dense(keep) && sdk::numel(y) == sdk::numel(x) && sdk::numel(keep) == sdk::numel(x) &&
         a.a >= 0.0 && a.a <= 1.0;
}

/// Value i keeps x_i (times scale) when the Bernoulli draw of lane i % 4 of counter offset + i / 4
/// says so, as the reference decides it.
template <class T>
void dropout(const T* x, T* y, uint8_t* keep, int64_t n, const ingot_attr_rng& a) {
  const double keep_p = 1.0 - a.a;
  const float scale = keep_p > 0.0 ? static_cast<float>(1.0 / keep_p) : 0.0f;  // (p = 1 keeps nothing)
  const int64_t blocks = (n + 3) / 4;
  const bool parallel = n >= Exec::kSerialGrain && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t b = 0; b < blocks; ++b) {
    const sdk::PhiloxBlock r = sdk::philox_block(a.seed, a.offset + static_cast<uint64_t>(b));
    for (int64_t i = 4 * b, j = 0; j < 4 && i < n; ++i, ++j) {
      const bool k = sdk::philox_bernoulli(r.v[j], keep_p);
      keep[i] = k ? 1 : 0;
      store_f32(y, i, k ? load_f32(x, i) * scale : 0.0f);
    }
  }
}

void execute(const sdk::OpCall& c, Exec&) {
  const auto& a = sdk::attr<ingot_attr_rng>(c.attrs);
  const int64_t n = sdk::numel(c.in[0]);
  auto* keep = sdk::data_ptr<uint8_t>(c.out[1]);
  if (c.in[0].dtype == INGOT_BF16)
    dropout(sdk::data_ptr<const uint16_t>(c.in[0]), sdk::data_ptr<uint16_t>(c.out[0]), keep, n, a);
  else
    dropout(sdk::data_ptr<const float>(c.in[0]), sdk::data_ptr<float>(c.out[0]), keep, n, a);
}

}  // namespace

const OpFamily& dropout_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn

// UNIFORM and NORMAL on dense f32 outputs as an OpenMP loop over Philox counters: each counter's
// block gives four values, computed with the reference's functions (ingot/plugin/philox.h), so
// every value has the reference's bits on any thread count. Weight initialisation draws every
// parameter once or twice; the reference's single strided loop took seconds for a VGG.
#include <omp.h>

#include <algorithm>

#include "ingot/plugin/philox.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_UNIFORM || op == INGOT_OP_NORMAL; }

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  if (c.n_in != 0 || c.n_out != 1) return false;
  const ingot_tensor_desc& y = c.out[0];
  return y.device_kind == INGOT_DEVICE_CPU && y.layout == INGOT_LAYOUT_STRIDED && y.dtype == INGOT_F32 &&
         sdk::is_contiguous(y);
}

void execute(const sdk::OpCall& c, Exec&) {
  const auto& a = sdk::attr<ingot_attr_rng>(c.attrs);
  float* y = sdk::data_ptr<float>(c.out[0]);
  const int64_t n = sdk::numel(c.out[0]);
  const int64_t blocks = (n + 3) / 4;
  const bool normal = c.op == INGOT_OP_NORMAL;
  const auto lo = static_cast<float>(a.a), hi = static_cast<float>(a.b);
  const bool parallel = n >= Exec::kSerialGrain && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t b = 0; b < blocks; ++b) {
    const sdk::PhiloxBlock block = sdk::philox_block(a.seed, a.offset + static_cast<uint64_t>(b));
    const int64_t at = 4 * b, m = std::min<int64_t>(4, n - at);
    for (int64_t j = 0; j < m; ++j) {
      const auto lane = static_cast<unsigned>(j);
      y[at + j] =
          normal ? lo + hi * sdk::philox_normal_float(block, lane) : sdk::philox_uniform_float(block.v[lane], lo, hi);
    }
  }
}

}  // namespace

const OpFamily& random_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn

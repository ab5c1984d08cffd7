// DROPOUT on f32 and bf16 as an OpenMP loop over chunks of 16 Philox blocks computed side by side
// in SIMD lanes: the reference's draws (ingot/plugin/philox.h) and its float arithmetic, so the
// kept elements and values match it bit for bit on any thread count (the reference's single
// thread was 11% of a BERT training step).
// Dense tensors only.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "bf16.h"
#include "ingot/plugin/philox.h"
#include "op_families.h"
#include "simd_clones.h"

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

// INGOT_SIMD_CLONES: Philox's 32 x 32 -> 64 bit multiplies vectorize across counters (vpmuludq),
// 2-wide at best with SSE2.
/// Counters a chunk draws at once, one per SIMD lane.
constexpr int kLanes = 16;

/// The 4 x kLanes draws of counters counter .. counter + kLanes - 1 (philox_block of each, as the
/// reference computes it), value j of counter l at out[4 * l + j].
INGOT_SIMD_CLONES void philox_chunk(uint64_t seed, uint64_t counter, uint32_t* out) {
  uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t c = counter + static_cast<uint64_t>(l);
    c0[l] = static_cast<uint32_t>(c);
    c1[l] = static_cast<uint32_t>(c >> 32);
    c2[l] = c3[l] = 0;
  }
  uint32_t key0 = static_cast<uint32_t>(seed), key1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) sdk::philox_bump_key(key0, key1);
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) sdk::philox_round(c0[l], c1[l], c2[l], c3[l], key0, key1);
  }
  for (int l = 0; l < kLanes; ++l) {
    out[4 * l] = c0[l];
    out[4 * l + 1] = c1[l];
    out[4 * l + 2] = c2[l];
    out[4 * l + 3] = c3[l];
  }
}

/// Elements [0, n) of a chunk: kept where the draw's top 24 bits are below `threshold`. The
/// dropped ones get +0 by masking the bits of the scaled value, so that the loop has no branch.
template <class T>
INGOT_SIMD_CLONES void apply_chunk(const uint32_t* __restrict draws, const T* __restrict x, T* __restrict y,
                                   uint8_t* __restrict keep, int64_t n, uint32_t threshold, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t kept = (draws[i] >> 8) < threshold ? 1u : 0u;
    keep[i] = static_cast<uint8_t>(kept);
    if constexpr (std::is_same_v<T, float>) {
      y[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(x[i] * scale) & (0u - kept));
    } else {
      y[i] = static_cast<uint16_t>(float_to_bf16(bf16_to_float(x[i]) * scale) & (0u - kept));
    }
  }
}

/// Value i keeps x_i (times scale) when the Bernoulli draw of lane i % 4 of counter offset + i / 4
/// says so, as the reference decides it: philox_bernoulli's (bits >> 8) * 2^-24 < keep_p is, for
/// the integer bits >> 8, (bits >> 8) < ceil(keep_p * 2^24), an integer compare.
template <class T>
void dropout(const T* x, T* y, uint8_t* keep, int64_t n, const ingot_attr_rng& a) {
  const double keep_p = 1.0 - a.a;
  const float scale = keep_p > 0.0 ? static_cast<float>(1.0 / keep_p) : 0.0f;  // (p = 1 keeps nothing)
  const auto threshold = static_cast<uint32_t>(std::ceil(keep_p * 16777216.0));
  constexpr int64_t per_chunk = 4 * kLanes;
  const int64_t chunks = (n + per_chunk - 1) / per_chunk;
  const bool parallel = n >= Exec::kSerialGrain && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    uint32_t draws[per_chunk];
    philox_chunk(a.seed, a.offset + static_cast<uint64_t>(ch * kLanes), draws);
    const int64_t at = ch * per_chunk;
    apply_chunk(draws, x + at, y + at, keep + at, std::min(per_chunk, n - at), threshold, scale);
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

// Autocast (torch.autocast): ops run in the precision the policy table gives them
// (runtime/autocast_policy.h) — matmul and conv in bf16 or fp16, numerically touchy ops in f32 —
// through an interceptor in the dispatch chain, while weights and optimizer state stay f32.
// docs/amp.md has the table and the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingot/runtime/autocast_mode.h"
#include "ingot/tensor/tensor.h"

namespace ingot::amp {

/// An autocast region (torch's `with torch.autocast(device, dtype):`) with a cache of weight
/// casts: the low-precision copy of each of `weights` (and of each view of one, such as
/// Linear's transposed weight) is made once per outermost region and reused by every op in it,
/// the evaluation of a whole test set or all micro-batches of an optimizer step. Weights must
/// not change inside the region: end it before the optimizer steps. Gradients still flow to the
/// f32 weights (each use records its own cast node). `enabled` false is a no-op scope.
class AutocastRegion {
 public:
  AutocastRegion(DType dtype, const std::vector<Tensor>& weights = {}, bool enabled = true);
  ~AutocastRegion();
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  std::optional<AutocastGuard> guard_;
};

/// Counters of the weight-cast cache since the process started: casts made, casts reused.
struct CastCacheStats {
  int64_t casts = 0;
  int64_t hits = 0;
};
CastCacheStats cast_cache_stats();

/// "" when `dtype` autocast can run on `device`; otherwise one line saying why not and what to do
/// — when no backend there runs matmul or conv in `dtype` except the reference (slower than f32:
/// fp16 on a CPU without f16 kernels, bf16 without oneDNN or AVX-512 BF16) while f32 runs on a
/// faster one. A run that chose the reference backend alone may use any dtype.
std::string autocast_unsupported_reason(Device device, DType dtype);

/// "bf16" / "fp16" (the config's names).
const char* amp_dtype_name(DType dtype);

}  // namespace ingot::amp

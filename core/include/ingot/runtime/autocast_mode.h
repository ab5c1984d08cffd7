// Autocast mode: whether, and to which low-precision dtype, the autocast interceptor casts the
// ops this thread runs (torch.autocast's thread-local state). On the runtime floor because the
// autograd engine turns it off while a backward pass runs (backward ops run in the dtypes their
// forward ops ran in) and gradient checkpointing restores it when it recomputes a segment.
#pragma once

#include <cstdint>

#include "ingot/tensor/dtype.h"

namespace ingot {

/// The state one thread's autocast interceptor reads.
struct AutocastState {
  bool enabled = false;
  DType dtype = DType::BF16;  ///< the low precision: BF16 or F16
};

class AutocastMode {
 public:
  static AutocastState get();
  static void set(AutocastState state);
  static bool is_enabled() { return get().enabled; }
  /// Nesting depth of AutocastGuard scopes that enabled autocast (0 = outside every region). The
  /// interceptor's weight-cast cache lives while the depth is above 0, like torch's.
  static int depth();
  /// Bumped whenever the outermost enabled region ends: cached casts of an older region are stale.
  static uint64_t region_generation();

 private:
  friend class AutocastGuard;
  static void enter();
  static void leave();
};

/// Sets the autocast state for its scope (torch.autocast(...) as a context manager) and restores
/// the previous one on exit. AutocastGuard({false}) turns autocast off inside a region.
class AutocastGuard {
 public:
  explicit AutocastGuard(AutocastState state);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  AutocastState prev_;
  bool entered_;
};

}  // namespace ingot

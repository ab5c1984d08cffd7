// Autocast mode: thread-local state and region depth.
#include "ingot/runtime/autocast_mode.h"

#include <atomic>

namespace ingot {

namespace {
thread_local AutocastState t_state;
thread_local int t_depth = 0;
std::atomic<uint64_t> g_generation{0};
}  // namespace

AutocastState AutocastMode::get() { return t_state; }
void AutocastMode::set(AutocastState state) { t_state = state; }
int AutocastMode::depth() { return t_depth; }
uint64_t AutocastMode::region_generation() { return g_generation.load(std::memory_order_acquire); }

void AutocastMode::enter() { ++t_depth; }
void AutocastMode::leave() {
  if (--t_depth == 0) g_generation.fetch_add(1, std::memory_order_acq_rel);
}

AutocastGuard::AutocastGuard(AutocastState state) : prev_(t_state), entered_(state.enabled) {
  t_state = state;
  if (entered_) AutocastMode::enter();
}

AutocastGuard::~AutocastGuard() {
  t_state = prev_;
  if (entered_) AutocastMode::leave();
}

}  // namespace ingot

// Grad mode: one thread-local flag, on by default (like torch).
#include "ingot/base/grad_mode.h"

namespace ingot {

namespace {
thread_local bool grad_enabled = true;
}  // namespace

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

}  // namespace ingot

// The end of the dispatch chain: picks the backend, allocates the outputs, executes, counts the
// op for its backend. Private to runtime/.
#pragma once

#include <vector>

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/dispatch_chain.h"

namespace ingot::detail {

/// Runs `call` on the highest-priority backend of its device that supports it (or on the host
/// when no backend of an accelerator does); records nothing.
std::vector<Tensor> run_on_backend(const OpCall& call);

}  // namespace ingot::detail

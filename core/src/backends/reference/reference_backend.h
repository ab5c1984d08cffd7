// The reference backend: plain, readable loops for every op of the op table on strided host
// tensors. It is the test oracle and the last-resort fallback.
#pragma once

#include "ingot/plugin/ingot_plugin.h"

namespace ingot::reference {

/// The reference backend's ABI table, built once and valid for the process lifetime.
const ingot_backend* backend_table();

}  // namespace ingot::reference

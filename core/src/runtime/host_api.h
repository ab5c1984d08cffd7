// The host API core hands every plugin's init: logging, and the key-value store whose handles
// are KvStore pointers (communicator bootstrap).
#pragma once

#include "ingot/plugin/ingot_plugin.h"

namespace ingot {

class KvStore;

/// The process's host API table (valid for the process).
const ingot_host_api& host_api();

/// The opaque handle of `store` as plugins receive it (the store must outlive its users).
inline void* kv_store_handle(KvStore& store) { return &store; }

}  // namespace ingot

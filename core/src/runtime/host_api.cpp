// The host API: log forwards to core's logger; kv_set / kv_get reach the KvStore behind a
// handle, turning core's exceptions into status objects (no exception crosses the ABI).
#include "runtime/host_api.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>

#include "ingot/base/error.h"
#include "ingot/plugin/sdk_core.h"
#include "ingot/runtime/kv_store.h"
#include "ingot/runtime/logging.h"

namespace ingot {
namespace {

void host_log(void* /*host*/, int32_t level, const char* plugin, const char* message) {
  const int clamped = std::clamp(level, static_cast<int32_t>(INGOT_LOG_DEBUG), static_cast<int32_t>(INGOT_LOG_ERROR));
  log_message(static_cast<LogLevel>(clamped), plugin == nullptr ? "plugin" : plugin, message == nullptr ? "" : message);
}

// Runs fn; a core exception becomes a status the plugin releases (TimeoutError keeps its code).
template <class Fn>
ingot_status* to_status(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const TimeoutError& e) {
    return sdk::make_status(INGOT_ERR_TIMEOUT, e.what());
  } catch (const std::bad_alloc&) {
    return sdk::make_status(INGOT_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return sdk::make_status(INGOT_ERR_RUNTIME, e.what());
  } catch (...) {
    return sdk::make_status(INGOT_ERR_RUNTIME, "unknown exception");
  }
}

KvStore& store_of(void* handle) {
  INGOT_CHECK(handle != nullptr, "key-value store handle is NULL");
  return *static_cast<KvStore*>(handle);
}

ingot_status* host_kv_set(void* /*host*/, void* store, const char* key, const void* value, size_t size) {
  return to_status([&] {
    INGOT_CHECK(key != nullptr && (value != nullptr || size == 0), "kv_set: NULL key or value");
    store_of(store).set(key, std::string(static_cast<const char*>(value), size));
  });
}

ingot_status* host_kv_get(void* /*host*/, void* store, const char* key, int64_t timeout_ms, void* buffer,
                          size_t capacity, size_t* size) {
  return to_status([&] {
    INGOT_CHECK(key != nullptr && size != nullptr && (buffer != nullptr || capacity == 0),
                "kv_get: NULL key, size or buffer");
    const std::string value = store_of(store).get(key, std::chrono::milliseconds(timeout_ms));
    *size = value.size();
    if (capacity > 0) std::memcpy(buffer, value.data(), std::min(capacity, value.size()));
  });
}

}  // namespace

const ingot_host_api& host_api() {
  static const ingot_host_api api = [] {
    ingot_host_api a{};
    a.struct_size = sizeof(ingot_host_api);
    a.abi_minor = INGOT_ABI_MINOR;
    a.host = nullptr;
    a.log = &host_log;
    a.kv_set = &host_kv_set;
    a.kv_get = &host_kv_get;
    return a;
  }();
  return api;
}

}  // namespace ingot

// Opaque layout handle registry of the cpu_onednn backend.
#include "opaque_layout.h"

namespace ingot::onednn {

void* OpaqueRegistry::create(const dnnl::memory::desc& md) {
  auto* h = new OpaqueHandle{md, 1};
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(h);
  return h;
}

const dnnl::memory::desc* OpaqueRegistry::find(void* handle) const {
  auto* h = static_cast<OpaqueHandle*>(handle);
  std::lock_guard<std::mutex> lock(mu_);
  return live_.count(h) != 0 ? &h->md : nullptr;
}

void OpaqueRegistry::retain(void* handle) {
  auto* h = static_cast<OpaqueHandle*>(handle);
  std::lock_guard<std::mutex> lock(mu_);
  if (live_.count(h) != 0) ++h->refcount;
}

void OpaqueRegistry::release(void* handle) {
  auto* h = static_cast<OpaqueHandle*>(handle);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_.count(h) == 0 || --h->refcount > 0) return;
    live_.erase(h);
  }
  delete h;
}

}  // namespace ingot::onednn

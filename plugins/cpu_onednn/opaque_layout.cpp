// Opaque layout handle registry of the cpu_onednn backend.
#include "opaque_layout.h"

namespace ingot::onednn {

void* OpaqueRegistry::create(const dnnl::memory::desc& md, std::shared_ptr<const OpaqueCodec> codec) {
  auto* h = new OpaqueHandle{md, 1, std::move(codec)};
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(h);
  return h;
}

const dnnl::memory::desc* OpaqueRegistry::find(void* handle) const {
  const OpaqueHandle* h = find_handle(handle);
  return h != nullptr && h->codec == nullptr ? &h->md : nullptr;
}

const OpaqueHandle* OpaqueRegistry::find_handle(void* handle) const {
  auto* h = static_cast<OpaqueHandle*>(handle);
  std::lock_guard<std::mutex> lock(mu_);
  return live_.count(h) != 0 ? h : nullptr;
}

bool OpaqueRegistry::read_by(void* handle, int32_t op) const {
  const OpaqueHandle* h = find_handle(handle);
  return h != nullptr && h->codec != nullptr && h->codec->read_by(op);
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

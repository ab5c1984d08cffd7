// Packed weights cache of the cpu_onednn backend (see packed_weights.h).
#include "packed_weights.h"

#include <cstdint>
#include <cstring>

#include "desc_util.h"
#include "exec.h"

namespace ingot::onednn {

const void* PackedWeights::get(Exec& ex, const dnnl::memory::desc& src_md, const void* src, size_t bytes,
                               const dnnl::memory::desc& want) {
  KeyBuilder kb(-2);
  kb.add(src).add(bytes).add_md(src_md).add_md(want);
  const std::string_view key = kb.str();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key) continue;
    entries_.splice(entries_.begin(), entries_, it);
    Entry& e = entries_.front();
    if (std::memcmp(e.source.data(), src, bytes) != 0) {
      std::memcpy(e.source.data(), src, bytes);
      ex.reorder(src_md, const_cast<void*>(src), want, e.packed);
      ++repacks_;
    }
    return e.packed;
  }
  Entry e;
  e.key = std::string(key);
  e.source.assign(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
  e.storage.resize(want.get_size() + 64);
  e.packed = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(e.storage.data()) + 63) / 64 * 64);
  ex.reorder(src_md, const_cast<void*>(src), want, e.packed);
  ++repacks_;
  entries_.push_front(std::move(e));
  if (entries_.size() > capacity_) entries_.pop_back();
  return entries_.front().packed;
}

}  // namespace ingot::onednn

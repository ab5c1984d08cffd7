// Packed weights: constant weights reordered once into a primitive's own (blocked) format and
// kept, so an inference layer does not reorder its weights on every call. An entry is keyed by
// the weights' address and both layouts, and holds a copy of the source bytes: a call whose
// weights differ from that copy (updated in place, or a new tensor at a freed address) repacks,
// so the cache is never stale; comparing bytes costs far less than the reorder it saves.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace ingot::onednn {

class Exec;

class PackedWeights {
 public:
  explicit PackedWeights(size_t capacity) : capacity_(capacity) {}

  /// The dense weights at `src` (layout `src_md`, `bytes` long) in layout `want`: the cached
  /// copy when the source bytes are unchanged, else reordered (through `ex`) and cached.
  const void* get(Exec& ex, const dnnl::memory::desc& src_md, const void* src, size_t bytes,
                  const dnnl::memory::desc& want);

  int64_t entries() const { return static_cast<int64_t>(entries_.size()); }
  int64_t repacks() const { return repacks_; }

 private:
  struct Entry {
    std::string key;
    std::vector<char> source;  ///< the bytes the packed copy was made from
    std::vector<char> storage;
    void* packed = nullptr;  ///< 64-byte aligned inside storage
  };
  size_t capacity_;
  std::list<Entry> entries_;  ///< most recently used first
  int64_t repacks_ = 0;
};

}  // namespace ingot::onednn

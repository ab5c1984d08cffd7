// Plans (oneDNN's pattern: describe once, execute many times) and the bounded LRU cache that
// keeps them, keyed by everything a primitive depends on (op, shapes, strides, dtypes, layouts,
// attributes, post-ops, thread count).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace ingot::onednn {

/// One created primitive with the memory objects bound to it. Only the compute thread runs
/// backends, so binding new data pointers into the cached memory objects is safe.
struct Plan {
  dnnl::primitive prim;
  dnnl::primitive_desc_base pd;
  std::string impl;  ///< pd.impl_info_str(), e.g. "brg:avx512_core"
  std::unordered_map<int, dnnl::memory> args;
  /// Optional second primitive (e.g. the forward hint a backward op needs kept alive).
  dnnl::primitive_desc_base aux_pd;

  /// Scratchpad bytes the primitive needs (scratchpad_mode::user), 0 when none.
  size_t scratchpad_bytes() const { return pd ? pd.scratchpad_desc().get_size() : 0; }
};

/// Least-recently-used map from a plan key to a plan; hits/misses for plan_cache_stats.
class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(capacity) {}

  /// The cached plan for `key` (a hit, now most recent), or nullptr (a miss).
  std::shared_ptr<Plan> find(std::string_view key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  /// Adds a plan after a miss, evicting the least recently used one beyond capacity.
  void insert(std::string_view key, std::shared_ptr<Plan> plan) {
    order_.emplace_front(std::string(key), std::move(plan));
    index_.emplace(order_.front().first, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  int64_t entries() const { return static_cast<int64_t>(order_.size()); }
  int64_t capacity() const { return static_cast<int64_t>(capacity_); }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<Plan>>;
  size_t capacity_;
  std::list<Entry> order_;
  /// Transparent hashing: lookups take the key builder's string_view without a copy.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::list<Entry>::iterator, Hash, std::equal_to<>> index_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace ingot::onednn

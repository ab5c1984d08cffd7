// A bounded least-recently-used map from plan keys (plan_key.h) to plans: the per-thread plan
// caches of the cuBLASLt ops (matmul, int8 linear).
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>

#include "plan_key.h"

namespace ingot::cuda {

template <class Key, class Plan, size_t Capacity>
class PlanLru {
 public:
  /// The plan of `key` (now the most recently used), or null.
  Plan* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second.get();
  }

  /// Keeps `plan` under `key` (absent until now), dropping the least recently used beyond Capacity.
  Plan& insert(const Key& key, std::unique_ptr<Plan> plan) {
    lru_.emplace_front(key, std::move(plan));
    index_.emplace(key, lru_.begin());
    if (lru_.size() > Capacity) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return *lru_.front().second;
  }

 private:
  using Entry = std::pair<Key, std::unique_ptr<Plan>>;
  std::list<Entry> lru_;
  std::unordered_map<Key, typename std::list<Entry>::iterator, PlanKeyHash<Key>, PlanKeyEqual<Key>> index_;
};

}  // namespace ingot::cuda

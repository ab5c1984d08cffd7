// The weight-cast cache: keyed by the source's storage, offset, shape, strides and the target
// dtype, so Linear's transposed weight view hits the same entry every time.
#include "cast_cache.h"

#include <atomic>
#include <map>
#include <tuple>
#include <unordered_set>

#include "autograd/record.h"
#include "ingot/amp/autocast.h"
#include "ingot/base/grad_mode.h"

namespace ingot::amp {

namespace {

using Key = std::tuple<const Storage*, int64_t, std::vector<int64_t>, std::vector<int64_t>, int>;

struct ThreadCache {
  int depth = 0;
  std::vector<Tensor> weights;  ///< keeps registered storages alive while cached
  std::unordered_set<const Storage*> storages;
  std::map<Key, Tensor> casts;
};

thread_local ThreadCache t_cache;
std::atomic<int64_t> g_casts{0}, g_hits{0};

std::vector<int64_t> dims(const Shape& s) { return {s.data(), s.data() + s.size()}; }

}  // namespace

CastCacheStats cast_cache_stats() { return {g_casts.load(), g_hits.load()}; }

namespace detail {

void cache_enter(const std::vector<Tensor>& weights) {
  ++t_cache.depth;
  for (const Tensor& w : weights)
    if (w.defined() && w.storage() != nullptr && t_cache.storages.insert(w.storage().get()).second)
      t_cache.weights.push_back(w);
}

void cache_leave() {
  if (--t_cache.depth > 0) return;
  t_cache.casts.clear();
  t_cache.storages.clear();
  t_cache.weights.clear();
}

Tensor cast_for_autocast(const Tensor& t, DType dtype) {
  const bool cacheable = t.storage() != nullptr && !t.is_opaque() && t_cache.storages.count(t.storage().get()) > 0;
  if (!cacheable) return t.to(dtype);
  const Key key{t.storage().get(), t.offset(), dims(t.shape()), dims(t.strides()), static_cast<int>(dtype)};
  auto it = t_cache.casts.find(key);
  if (it == t_cache.casts.end()) {
    const NoGradGuard no_grad;  // the cached data; each use records its own node below
    it = t_cache.casts.emplace(key, t.detach().to(dtype)).first;
    ++g_casts;
  } else {
    ++g_hits;
  }
  Tensor out = autograd::saved_alias(it->second);
  const DType from = t.dtype();
  return autograd::record_view(t, std::move(out), "AutocastCastBackward",
                               [from](const Tensor& g) { return g.to(from); });
}

}  // namespace detail
}  // namespace ingot::amp

// The dispatch chain: an immutable snapshot of the interceptors, swapped on change, so running an
// op reads one atomic pointer and takes no lock.
#include "ingot/runtime/dispatch_chain.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "dispatch_terminal.h"

namespace ingot {

struct DispatchChainState {
  struct Entry {
    std::shared_ptr<OpInterceptor> interceptor;
    InterceptorOrder order;
  };
  std::vector<Entry> entries;
};

namespace {

std::mutex g_mu;

/// The current snapshot. Snapshots are never freed: an op running on another thread may still
/// read an old one, and changes are rare (a handful per process).
std::atomic<const DispatchChainState*>& current() {
  static std::atomic<const DispatchChainState*> chain{new DispatchChainState()};
  return chain;
}

/// Replaced snapshots, kept here (under g_mu) rather than dropped: still never freed, but
/// reachable, so a leak checker tells them from real leaks.
std::vector<const DispatchChainState*>& retired() {
  static auto* snapshots = new std::vector<const DispatchChainState*>();
  return *snapshots;
}

void publish(DispatchChainState* next) { retired().push_back(current().exchange(next, std::memory_order_acq_rel)); }

}  // namespace

std::vector<Tensor> DispatchNext::operator()(const OpCall& call) const {
  if (index_ >= chain_->entries.size()) return detail::run_on_backend(call);
  return chain_->entries[index_].interceptor->intercept(call, DispatchNext(chain_, index_ + 1));
}

namespace dispatch_chain {

void add(std::shared_ptr<OpInterceptor> interceptor, InterceptorOrder order) {
  INGOT_CHECK(interceptor != nullptr, "dispatch chain: cannot add a null interceptor");
  std::lock_guard<std::mutex> lock(g_mu);
  auto* next = new DispatchChainState(*current().load(std::memory_order_acquire));
  auto at = std::upper_bound(next->entries.begin(), next->entries.end(), order,
                             [](InterceptorOrder o, const DispatchChainState::Entry& e) { return o < e.order; });
  next->entries.insert(at, {std::move(interceptor), order});
  publish(next);
}

void remove(const OpInterceptor* interceptor) {
  std::lock_guard<std::mutex> lock(g_mu);
  const DispatchChainState* now = current().load(std::memory_order_acquire);
  auto* next = new DispatchChainState(*now);
  std::erase_if(next->entries, [&](const auto& e) { return e.interceptor.get() == interceptor; });
  if (next->entries.size() == now->entries.size()) {
    delete next;
    return;
  }
  publish(next);
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : current().load(std::memory_order_acquire)->entries) out.emplace_back(e.interceptor->name());
  return out;
}

std::vector<Tensor> run(const OpCall& call) { return DispatchNext(current().load(std::memory_order_acquire), 0)(call); }

}  // namespace dispatch_chain
}  // namespace ingot

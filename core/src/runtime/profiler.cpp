// Profiler recording: per-thread event buffers and running totals (no lock per event; one lock
// when a thread records for the first time), merged into a ProfileReport on demand.
#include "ingot/runtime/profiler.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "ingot/runtime/dispatch_chain.h"

namespace ingot {
namespace {

/// Times each op dispatched while the profiler records (installed by start, removed by stop).
class OpTimer final : public OpInterceptor {
 public:
  const char* name() const override { return "profiler"; }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    const ProfileScope profile(op_info(call.op).name, "op");
    return next(call);
  }
};

const std::shared_ptr<OpInterceptor>& op_timer() {
  static const std::shared_ptr<OpInterceptor> timer = std::make_shared<OpTimer>();
  return timer;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct NameKey {
  const char* name;
  const char* category;
  const char* detail;
  bool operator==(const NameKey& o) const { return name == o.name && category == o.category && detail == o.detail; }
};
struct NameKeyHash {
  size_t operator()(const NameKey& k) const {
    const std::hash<const void*> h;
    return (h(k.name) * 31 + h(k.category)) * 31 + h(k.detail);
  }
};
struct Totals {
  int64_t calls = 0, total_ns = 0, self_ns = 0;
};

/// What one thread recorded. Only its thread writes it while the profiler is on.
struct ThreadBuffer {
  uint32_t thread = 0;
  std::vector<ProfileEvent> events;
  std::vector<int64_t> child_ns;    ///< time of finished children, one slot per open scope
  std::vector<ProfileScope*> open;  ///< the open scopes, innermost last
  std::unordered_map<NameKey, Totals, NameKeyHash> totals;
  std::unordered_set<std::string> interned;  ///< never cleared: open scopes may point into it
};

struct State {
  std::mutex mu;  ///< guards `buffers` (the list, not their contents)
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::atomic<int64_t> origin_ns{0};
  std::atomic<int64_t> stop_ns{0};
  std::atomic<int64_t> stored{0};
  std::atomic<int64_t> dropped{0};
  std::atomic<int64_t> cap{2'000'000};
};

State& state() {
  static State s;
  return s;
}

ThreadBuffer& thread_buffer() {
  // Buffers outlive their threads (the registry holds them) so a report still sees them.
  thread_local std::shared_ptr<ThreadBuffer> buf = [] {
    auto b = std::make_shared<ThreadBuffer>();
    b->events.reserve(1 << 14);
    State& s = state();
    std::lock_guard lock(s.mu);
    b->thread = static_cast<uint32_t>(s.buffers.size());
    s.buffers.push_back(b);
    return b;
  }();
  return *buf;
}

}  // namespace

Profiler& Profiler::instance() {
  static Profiler p;
  return p;
}

void Profiler::start() {
  State& s = state();
  detail::g_profiler_on.store(false, std::memory_order_relaxed);
  {
    std::lock_guard lock(s.mu);
    for (auto& b : s.buffers) {
      b->events.clear();
      b->child_ns.clear();
      b->open.clear();
      b->totals.clear();
    }
  }
  s.stored = 0;
  s.dropped = 0;
  s.stop_ns = 0;
  s.origin_ns = now_ns();
  dispatch_chain::remove(op_timer().get());
  dispatch_chain::add(op_timer(), InterceptorOrder::Profiler);
  detail::g_profiler_on.store(true, std::memory_order_release);
}

void Profiler::stop() {
  if (!enabled()) return;
  detail::g_profiler_on.store(false, std::memory_order_release);
  dispatch_chain::remove(op_timer().get());
  state().stop_ns = now_ns();
}

void Profiler::set_event_cap(int64_t cap) { state().cap = std::max<int64_t>(cap, 0); }

ProfileReport Profiler::report() const {
  State& s = state();
  ProfileReport r;
  const int64_t end = s.stop_ns.load() != 0 ? s.stop_ns.load() : now_ns();
  r.wall_ns = s.origin_ns.load() != 0 ? end - s.origin_ns.load() : 0;
  r.dropped_events = s.dropped.load();
  // Rows merge by the names' text: the same name may sit at different addresses.
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, Totals> merged;
  std::lock_guard lock(s.mu);
  for (const auto& b : s.buffers) {
    r.events.insert(r.events.end(), b->events.begin(), b->events.end());
    for (const auto& [key, t] : b->totals) {
      Totals& m = merged[{key.name, key.category, key.detail}];
      m.calls += t.calls;
      m.total_ns += t.total_ns;
      m.self_ns += t.self_ns;
    }
  }
  for (const auto& [key, t] : merged)
    r.rows.push_back(ProfileRow{std::string(std::get<0>(key)), std::string(std::get<1>(key)),
                                std::string(std::get<2>(key)), t.calls, t.total_ns, t.self_ns});
  std::stable_sort(r.rows.begin(), r.rows.end(),
                   [](const ProfileRow& a, const ProfileRow& b) { return a.total_ns > b.total_ns; });
  return r;
}

void ProfileScope::begin(const char* name, const char* category) noexcept {
  try {
    ThreadBuffer& b = thread_buffer();
    b.open.reserve(b.child_ns.size() + 1);  // the push below cannot throw then
    b.child_ns.push_back(0);
    b.open.push_back(this);
  } catch (...) {
    return;  // out of memory while profiling: this scope goes unrecorded
  }
  name_ = name;
  category_ = category;
  detail_ = "";
  active_ = true;
  start_ns_ = now_ns();
}

void ProfileScope::end() noexcept {
  if (!active_) return;
  active_ = false;
  const int64_t stop = now_ns();
  const int64_t duration = stop - start_ns_;
  ThreadBuffer& b = thread_buffer();
  const int64_t children = b.child_ns.empty() ? 0 : b.child_ns.back();
  if (!b.child_ns.empty()) b.child_ns.pop_back();
  if (!b.open.empty()) b.open.pop_back();
  if (!b.child_ns.empty()) b.child_ns.back() += duration;
  State& s = state();
  try {
    Totals& t = b.totals[NameKey{name_, category_, detail_}];
    ++t.calls;
    t.total_ns += duration;
    t.self_ns += duration - children;
    if (s.stored.fetch_add(1, std::memory_order_relaxed) < s.cap.load(std::memory_order_relaxed)) {
      b.events.push_back(ProfileEvent{name_, category_, detail_, b.thread,
                                      start_ns_ - s.origin_ns.load(std::memory_order_relaxed), duration,
                                      duration - children});
    } else {
      s.dropped.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
    s.dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void ProfileScope::next(const char* name) noexcept {
  const char* category = category_;
  end();
  if (Profiler::enabled()) begin(name, category);
}

void ProfileScope::set_detail_slow(const char* detail) noexcept {
  try {
    ThreadBuffer& b = thread_buffer();
    if (!b.open.empty()) b.open.back()->detail_ = detail;
  } catch (...) {  // out of memory for a first-time thread buffer: no detail
  }
}

const char* ProfileScope::intern(const std::string& name) {
  ThreadBuffer& b = thread_buffer();
  return b.interned.insert(name).first->c_str();
}

}  // namespace ingot

// Ops by backend: a short list of (backend, count) behind a mutex; a handful of backends at most.
#include "ingot/runtime/op_counts.h"

#include <fmt/format.h>

#include <mutex>

#include "ingot/runtime/backend.h"

namespace ingot {
namespace {

struct Counts {
  std::mutex mu;
  std::vector<std::pair<const Backend*, int64_t>> by_backend;
};

Counts& counts() {
  static auto* c = new Counts();  // never destroyed: ops may run during static destruction
  return *c;
}

}  // namespace

void count_op(const Backend& backend) {
  Counts& c = counts();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& [b, n] : c.by_backend)
    if (b == &backend) {
      ++n;
      return;
    }
  c.by_backend.emplace_back(&backend, 1);
}

std::vector<std::pair<std::string, int64_t>> ops_by_backend() {
  Counts& c = counts();
  std::lock_guard<std::mutex> lock(c.mu);
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [b, n] : c.by_backend)
    if (n > 0) out.emplace_back(b->name(), n);
  return out;
}

std::string ops_by_backend_json() {
  std::string s = "{";
  for (const auto& [name, n] : ops_by_backend()) s += fmt::format("{}\"{}\":{}", s.size() > 1 ? "," : "", name, n);
  return s + "}";
}

void reset_op_counts() {
  Counts& c = counts();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& entry : c.by_backend) entry.second = 0;
}

}  // namespace ingot

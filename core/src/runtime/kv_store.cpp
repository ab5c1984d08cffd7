// InProcessKvStore: a map under a mutex, with a condition variable for readers that wait.
#include "ingot/runtime/kv_store.h"

#include <fmt/format.h>

#include "ingot/base/error.h"

namespace ingot {

void InProcessKvStore::set(const std::string& key, std::string value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = std::move(value);
  }
  changed_.notify_all();
}

std::string InProcessKvStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto present = [&] { return values_.count(key) != 0; };
  if (timeout.count() < 0) {
    changed_.wait(lock, present);
  } else if (!changed_.wait_for(lock, timeout, present)) {
    throw TimeoutError(
        fmt::format("key-value store: key '{}' was not set within {} ms (did every rank start, "
                    "and call the same collectives in the same order?)",
                    key, timeout.count()));
  }
  return values_.at(key);
}

std::optional<std::string> InProcessKvStore::try_get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

size_t InProcessKvStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_.size();
}

}  // namespace ingot

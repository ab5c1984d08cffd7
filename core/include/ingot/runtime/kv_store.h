// KvStore: the key-value store a group of ranks bootstraps over (communicator ids, addresses),
// offered to plugins through the host API. InProcessKvStore serves ranks that are threads of one
// process; a store over TCP, for ranks in several processes, implements the same interface.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace ingot {

class KvStore {
 public:
  virtual ~KvStore() = default;
  /// Stores `value` under `key` (replacing an earlier value) and wakes every waiting get.
  virtual void set(const std::string& key, std::string value) = 0;
  /// The value of `key`, waiting up to `timeout` for another rank to set it; throws
  /// TimeoutError naming the key when time runs out (a negative timeout waits without limit).
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  /// The value of `key` if it is set now.
  virtual std::optional<std::string> try_get(const std::string& key) = 0;
};

/// A KvStore in this process's memory, safe to share between threads.
class InProcessKvStore final : public KvStore {
 public:
  void set(const std::string& key, std::string value) override;
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::optional<std::string> try_get(const std::string& key) override;
  /// Number of keys set so far.
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

}  // namespace ingot

// KvStoreAdapter: the host's key-value store (sdk::KvStore) seen as a gloo::rendezvous::Store, so
// gloo's Context::connectFullMesh exchanges its TCP addresses over it; every key is prefixed
// (e.g. "gloo/0/") so groups and other users of the same store never collide.
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

#include "ingot/plugin/sdk.h"

namespace ingot::gloo_ddp {

class KvStoreAdapter final : public gloo::rendezvous::Store {
 public:
  /// Reads and writes `store` under `prefix`; a get or wait gives up after `timeout`.
  KvStoreAdapter(const ingot::sdk::KvStore& store, std::string prefix, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  /// The value of key, waiting for it up to the timeout.
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::string fetch(const std::string& key, std::chrono::milliseconds timeout) const;

  ingot::sdk::KvStore store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ingot::gloo_ddp

// KvStoreAdapter: gloo's rendezvous store interface over the host's key-value store. The host's
// get already waits for a key; wait() is a get whose value is dropped.
#include "kv_store_adapter.h"

#include <utility>

namespace ingot::gloo_ddp {

KvStoreAdapter::KvStoreAdapter(const ingot::sdk::KvStore& store, std::string prefix,
                               std::chrono::milliseconds timeout)
    : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}

void KvStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  store_.set(prefix_ + key, data.data(), data.size());
}

std::vector<char> KvStoreAdapter::get(const std::string& key) {
  const std::string value = fetch(key, timeout_);
  return std::vector<char>(value.begin(), value.end());
}

void KvStoreAdapter::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

// gloo passes either its built-in 30 s or the context's timeout; the communicator's timeout
// (INGOT_COMM_TIMEOUT_S) is the one that applies, so that ranks may start minutes apart.
void KvStoreAdapter::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& /*timeout*/) {
  for (const std::string& key : keys) fetch(key, timeout_);
}

std::string KvStoreAdapter::fetch(const std::string& key, std::chrono::milliseconds timeout) const {
  return store_.get(prefix_ + key, timeout.count());
}

}  // namespace ingot::gloo_ddp

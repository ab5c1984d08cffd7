// SDK communicator side: KvStore (the host's key-value store, for bootstrap), CommunicatorImpl
// (one rank's collectives) and make_communicator, whose trampolines fill an ingot_communicator.
// Header-only, C++17.
#pragma once

#include <string>
#include <vector>

#include "ingot/plugin/sdk_core.h"

namespace ingot::sdk {

/// The host's key-value store behind a handle core passed to create (through the host API).
class KvStore {
 public:
  explicit KvStore(void* handle, const ingot_host_api* host = host_api()) : handle_(handle), host_(host) {
    if (host_ == nullptr || host_->struct_size < sizeof(ingot_host_api) || host_->kv_set == nullptr ||
        host_->kv_get == nullptr)
      throw Failure(INGOT_ERR_RUNTIME, "the host offers no key-value store");
  }

  void set(const std::string& key, const void* data, size_t size) const {
    check_host(host_->kv_set(host_->host, handle_, key.c_str(), data, size), "key-value store: set " + key);
  }
  void set(const std::string& key, const std::string& value) const { set(key, value.data(), value.size()); }

  /// The value of `key`, waiting up to timeout_ms for it (< 0: without limit); throws Failure
  /// with INGOT_ERR_TIMEOUT when time runs out.
  std::string get(const std::string& key, int64_t timeout_ms) const {
    std::string value(64, '\0');
    size_t size = 0;
    check_host(host_->kv_get(host_->host, handle_, key.c_str(), timeout_ms, value.data(), value.size(), &size),
               "key-value store: get " + key);
    if (size > value.size()) {  // larger than the first guess: it exists now, read it whole
      value.resize(size);
      check_host(host_->kv_get(host_->host, handle_, key.c_str(), 0, value.data(), value.size(), &size),
                 "key-value store: get " + key);
    }
    value.resize(size);
    return value;
  }

  void* handle() const { return handle_; }

 private:
  void* handle_;
  const ingot_host_api* host_;
};

/// What create hands a new communicator.
struct CommunicatorInit {
  int32_t rank;
  int32_t world_size;
  KvStore store;
  int32_t device_kind;
  int32_t device_index;
};

/// One rank's communicator. Descriptors are contiguous (the SDK checks it before the call).
class CommunicatorImpl {
 public:
  virtual ~CommunicatorImpl() = default;
  virtual void all_reduce(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) = 0;
  virtual void broadcast(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t root, void* stream) = 0;
  virtual void all_gather(const ingot_tensor_desc& in, const ingot_tensor_desc& out, void* stream) = 0;
  virtual void reduce_scatter(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) = 0;
  virtual void barrier(void* stream) = 0;
  /// Point to point (ABI 2.3). A communicator that cannot send keeps these defaults.
  virtual void send(const ingot_tensor_desc& /*in*/, int32_t /*peer*/, void* /*stream*/) {
    throw Failure(INGOT_ERR_UNSUPPORTED, "this communicator has no point-to-point send");
  }
  virtual void recv(const ingot_tensor_desc& /*out*/, int32_t /*peer*/, void* /*stream*/) {
    throw Failure(INGOT_ERR_UNSUPPORTED, "this communicator has no point-to-point recv");
  }
};

namespace detail {

inline CommunicatorImpl& comm_of(void* comm) {
  if (comm == nullptr) throw Failure(INGOT_ERR_INVALID_ARGUMENT, "communicator handle is NULL");
  return *static_cast<CommunicatorImpl*>(comm);
}

inline const ingot_tensor_desc& dense(const ingot_tensor_desc* d, const char* what) {
  if (d == nullptr) throw Failure(INGOT_ERR_INVALID_ARGUMENT, std::string(what) + " descriptor is NULL");
  if (!is_contiguous(*d)) throw Failure(INGOT_ERR_INVALID_ARGUMENT, std::string(what) + " is not contiguous");
  return *d;
}

}  // namespace detail

/// The communicator table of plugin class `Impl` (a CommunicatorImpl constructible from
/// CommunicatorInit); the table lives for the process.
template <class Impl>
const ingot_communicator* make_communicator(const char* name, int32_t device_kind) {
  using detail::comm_of;
  using detail::dense;
  auto* t = new ingot_communicator{};
  t->struct_size = sizeof(ingot_communicator);
  t->abi_minor = INGOT_ABI_MINOR;
  t->self = nullptr;
  t->name = name;
  t->device_kind = device_kind;
  t->create = [](void*, int32_t rank, int32_t world, void* kv, int32_t kind, int32_t index, void** comm) noexcept {
    return guarded([&] {
      if (world < 1 || rank < 0 || rank >= world)
        throw Failure(INGOT_ERR_INVALID_ARGUMENT,
                      "rank " + std::to_string(rank) + " of a world of " + std::to_string(world));
      CommunicatorImpl* impl = new Impl(CommunicatorInit{rank, world, KvStore(kv), kind, index});
      *comm = impl;
    });
  };
  t->all_reduce = [](void*, void* comm, const ingot_tensor_desc* in, const ingot_tensor_desc* out, int32_t op,
                     void* stream) noexcept {
    return guarded([&] { comm_of(comm).all_reduce(dense(in, "input"), dense(out, "output"), op, stream); });
  };
  t->broadcast = [](void*, void* comm, const ingot_tensor_desc* in, const ingot_tensor_desc* out, int32_t root,
                    void* stream) noexcept {
    return guarded([&] { comm_of(comm).broadcast(dense(in, "input"), dense(out, "output"), root, stream); });
  };
  t->all_gather = [](void*, void* comm, const ingot_tensor_desc* in, const ingot_tensor_desc* out,
                     void* stream) noexcept {
    return guarded([&] { comm_of(comm).all_gather(dense(in, "input"), dense(out, "output"), stream); });
  };
  t->reduce_scatter = [](void*, void* comm, const ingot_tensor_desc* in, const ingot_tensor_desc* out, int32_t op,
                         void* stream) noexcept {
    return guarded([&] { comm_of(comm).reduce_scatter(dense(in, "input"), dense(out, "output"), op, stream); });
  };
  t->barrier = [](void*, void* comm, void* stream) noexcept { return guarded([&] { comm_of(comm).barrier(stream); }); };
  t->destroy = [](void*, void* comm) noexcept { quietly([&] { delete static_cast<CommunicatorImpl*>(comm); }); };
  t->send = [](void*, void* comm, const ingot_tensor_desc* in, int32_t peer, void* stream) noexcept {
    return guarded([&] { comm_of(comm).send(dense(in, "input"), peer, stream); });
  };
  t->recv = [](void*, void* comm, const ingot_tensor_desc* out, int32_t peer, void* stream) noexcept {
    return guarded([&] { comm_of(comm).recv(dense(out, "output"), peer, stream); });
  };
  return t;
}

}  // namespace ingot::sdk

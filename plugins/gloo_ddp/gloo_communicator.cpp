// GlooCommunicator: rendezvous over the host's store, then gloo's allreduce (with this plugin's
// reduction functions), broadcast, allgather and barrier; reduce_scatter as an allreduce into a
// scratch copy of which this rank keeps its chunk; send / recv with unbound buffers whose slot
// carries a per-peer sequence number, so messages between two ranks arrive in order.
#include "gloo_communicator.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "errors.h"
#include "kv_store_adapter.h"
#include "no_sigpipe.h"
#include "reductions.h"
#include "tcp_device.h"

namespace ingot::gloo_ddp {
namespace {

using ingot::sdk::Failure;

// Point-to-point slots: a prefix byte gloo's collectives never use (they use 0x01 .. 0x08), then
// the sequence number of the message between the two ranks.
constexpr uint64_t kP2pSlotPrefix = 0x70ull << 56;

// The index of rank `rank`'s next gloo group in this process (threads of one process may each be
// a rank of one group, so the count is per rank).
int64_t next_group(int32_t rank) {
  static std::mutex mu;
  static std::map<int32_t, int64_t> groups;
  std::lock_guard<std::mutex> lock(mu);
  return groups[rank]++;
}

size_t bytes_of(const ingot_tensor_desc& d) {
  return static_cast<size_t>(ingot::sdk::numel(d) * ingot::sdk::dtype_size(d.dtype));
}

// gloo's typed options only use the element type's size.
template <class Options>
void set_output(Options& opts, void* data, size_t n, int64_t element_size) {
  switch (element_size) {
    case 1:
      return opts.template setOutput<uint8_t>(static_cast<uint8_t*>(data), n);
    case 2:
      return opts.template setOutput<uint16_t>(static_cast<uint16_t*>(data), n);
    case 4:
      return opts.template setOutput<uint32_t>(static_cast<uint32_t*>(data), n);
    default:
      return opts.template setOutput<uint64_t>(static_cast<uint64_t*>(data), n);
  }
}

}  // namespace

std::chrono::milliseconds comm_timeout() {
  const char* v = std::getenv("INGOT_COMM_TIMEOUT_S");
  if (v == nullptr || *v == '\0') return std::chrono::milliseconds(300000);
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(s > 0))
    throw Failure(INGOT_ERR_INVALID_ARGUMENT,
                  std::string("INGOT_COMM_TIMEOUT_S='") + v + "' is not a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000.0 + 0.5));
}

GlooCommunicator::GlooCommunicator(const ingot::sdk::CommunicatorInit& init)
    : rank_(init.rank), world_(init.world_size), timeout_(comm_timeout()) {
  if (init.device_kind != INGOT_DEVICE_CPU)
    throw Failure(INGOT_ERR_UNSUPPORTED, "gloo exchanges host (cpu) tensors only; use nccl for cuda tensors");
  const NoSigpipe no_sigpipe;  // gloo's event-loop thread, started here, inherits the blocked SIGPIPE
  std::string where;
  device_ = make_tcp_device(where);
  KvStoreAdapter store(init.store, "gloo/" + std::to_string(next_group(rank_)) + "/", timeout_);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank_, world_);
  context->setTimeout(timeout_);
  translate_errors("rendezvous of rank " + std::to_string(rank_) + " on " + where,
                   [&] { context->connectFullMesh(store, device_); });
  context_ = std::move(context);
  sends_ = std::make_unique<SendQueue>(timeout_);
}

GlooCommunicator::~GlooCommunicator() {
  const NoSigpipe no_sigpipe;
  sends_.reset();  // delivers what is queued (each up to the timeout) before the pairs close
  context_.reset();
}

template <class Fn>
void GlooCommunicator::run(const std::string& what, Fn&& fn) {
  sends_->rethrow();
  const NoSigpipe no_sigpipe;
  translate_errors(what, std::forward<Fn>(fn));
}

void GlooCommunicator::reduce_in_place(const char* what, void* data, size_t n, int32_t dtype, int32_t op) {
  auto fn = reduce_function(dtype, op);  // refuses an unsupported dtype before any traffic
  if (n > 0 && world_ > 1) {
    run(what, [&] {
      gloo::AllreduceOptions opts(context_);
      set_output(opts, data, n, ingot::sdk::dtype_size(dtype));
      opts.setReduceFunction(fn);
      opts.setTag(next_tag());
      gloo::allreduce(opts);
    });
  }
  if (op == INGOT_REDUCE_AVG) divide(dtype, data, n, world_);
}

void GlooCommunicator::all_reduce(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void*) {
  require_reducible(in.dtype);
  void* dst = ingot::sdk::data_ptr(out);
  const void* src = ingot::sdk::data_ptr(in);
  if (src != dst) std::memmove(dst, src, bytes_of(in));
  reduce_in_place("all_reduce", dst, static_cast<size_t>(ingot::sdk::numel(out)), out.dtype, op);
}

void GlooCommunicator::broadcast(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t root, void*) {
  void* dst = ingot::sdk::data_ptr(out);
  const size_t bytes = bytes_of(out);
  if (rank_ == root && ingot::sdk::data_ptr(in) != dst) std::memmove(dst, ingot::sdk::data_ptr(in), bytes);
  if (bytes == 0 || world_ == 1) return;
  run("broadcast", [&] {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput<uint8_t>(static_cast<uint8_t*>(dst), bytes);
    opts.setRoot(root);
    opts.setTag(next_tag());
    gloo::broadcast(opts);
  });
}

void GlooCommunicator::all_gather(const ingot_tensor_desc& in, const ingot_tensor_desc& out, void*) {
  const size_t chunk = bytes_of(in);
  char* dst = ingot::sdk::data_ptr<char>(out);
  const char* src = ingot::sdk::data_ptr<const char>(in);
  char* mine = dst + chunk * static_cast<size_t>(rank_);
  // This rank's chunk goes to its place in the output first (through a copy when the input
  // overlaps the output elsewhere), then gloo gathers in place.
  if (src != mine) {
    const bool overlaps = src < dst + chunk * static_cast<size_t>(world_) && dst < src + chunk;
    if (overlaps) {
      const std::vector<char> copy(src, src + chunk);
      std::memcpy(mine, copy.data(), chunk);
    } else {
      std::memcpy(mine, src, chunk);
    }
  }
  if (chunk == 0 || world_ == 1) return;
  run("all_gather", [&] {
    gloo::AllgatherOptions opts(context_);
    opts.setOutput<uint8_t>(reinterpret_cast<uint8_t*>(dst), chunk * static_cast<size_t>(world_));
    opts.setTag(next_tag());
    gloo::allgather(opts);
  });
}

void GlooCommunicator::reduce_scatter(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op,
                                      void*) {
  require_reducible(in.dtype);
  const size_t n = static_cast<size_t>(ingot::sdk::numel(out));
  const size_t chunk = bytes_of(out);
  std::vector<char> scratch(ingot::sdk::data_ptr<const char>(in), ingot::sdk::data_ptr<const char>(in) + bytes_of(in));
  reduce_in_place("reduce_scatter", scratch.data(), n * static_cast<size_t>(world_), in.dtype,
                  op == INGOT_REDUCE_AVG ? INGOT_REDUCE_SUM : op);
  char* dst = ingot::sdk::data_ptr<char>(out);
  std::memcpy(dst, scratch.data() + chunk * static_cast<size_t>(rank_), chunk);
  if (op == INGOT_REDUCE_AVG) divide(out.dtype, dst, n, world_);
}

void GlooCommunicator::barrier(void*) {
  if (world_ == 1) return;
  run("barrier", [&] {
    gloo::BarrierOptions opts(context_);
    opts.setTag(next_tag());
    gloo::barrier(opts);
  });
}

void GlooCommunicator::send(const ingot_tensor_desc& in, int32_t peer, void*) {
  const uint64_t slot = kP2pSlotPrefix | sent_[peer]++;
  const size_t bytes = bytes_of(in);
  if (bytes == 0) return;  // the receiver skips it too (same size)
  std::vector<char> data(ingot::sdk::data_ptr<const char>(in), ingot::sdk::data_ptr<const char>(in) + bytes);
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  run("send to rank " + std::to_string(peer), [&] {
    buffer = context_->createUnboundBuffer(data.data(), data.size());
    buffer->send(peer, slot);
  });
  sends_->push(peer, std::move(data), std::move(buffer));
}

void GlooCommunicator::recv(const ingot_tensor_desc& out, int32_t peer, void*) {
  const uint64_t slot = kP2pSlotPrefix | received_[peer]++;
  const size_t bytes = bytes_of(out);
  if (bytes == 0) return;
  run("recv from rank " + std::to_string(peer), [&] {
    auto buffer = context_->createUnboundBuffer(ingot::sdk::data_ptr(out), bytes);
    buffer->recv(peer, slot);
    if (!buffer->waitRecv(timeout_)) throw Failure(INGOT_ERR_RUNTIME, "gloo recv was aborted");
  });
}

}  // namespace ingot::gloo_ddp

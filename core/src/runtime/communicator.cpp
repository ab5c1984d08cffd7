// Communicator: create / destroy through the component's table, tensor checks before each
// collective, and errors that name the communicator, its plugin, the rank and the collective.
#include "ingot/runtime/communicator.h"

#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/kv_store.h"
#include "ingot/runtime/op_recorder.h"
#include "runtime/host_api.h"

namespace ingot {

Communicator::Communicator(const CommunicatorComponent& component, int rank, int world_size, KvStore& store,
                           Device device)
    : component_(&component), rank_(rank), world_size_(world_size), device_(device) {
  INGOT_CHECK(world_size >= 1 && rank >= 0 && rank < world_size,
              "communicator {}: rank {} is outside a world of {} (ranks are 0 .. world_size - 1)", component.name, rank,
              world_size);
  INGOT_CHECK(device.kind == component.device_kind,
              "communicator {} (plugin {}) exchanges tensors on {} devices, not on {}", component.name,
              component.plugin, Device{component.device_kind, 0}.str(), device.str());
  const ingot_communicator* t = component.table;
  throw_if_error(t->create(t->self, rank, world_size, kv_store_handle(store), static_cast<int32_t>(device.kind),
                           device.index, &handle_),
                 where("create"));
  INGOT_CHECK_AS(handle_ != nullptr, PluginError, "{}: the plugin returned no handle", where("create"));
  // Device collectives are queued on the backend's compute stream, in order with its ops.
  if (!device.is_cpu()) stream_ = native_stream(device);
}

Communicator::Communicator(const std::string& name, int rank, int world_size, KvStore& store, Device device)
    : Communicator(CommunicatorRegistry::instance().get(name), rank, world_size, store, device) {}

Communicator::~Communicator() {
  if (handle_ != nullptr) component_->table->destroy(component_->table->self, handle_);
}

Communicator::Communicator(Communicator&& other) noexcept
    : component_(other.component_),
      handle_(std::exchange(other.handle_, nullptr)),
      rank_(other.rank_),
      world_size_(other.world_size_),
      device_(other.device_),
      stream_(other.stream_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) component_->table->destroy(component_->table->self, handle_);
    component_ = other.component_;
    handle_ = std::exchange(other.handle_, nullptr);
    rank_ = other.rank_;
    world_size_ = other.world_size_;
    device_ = other.device_;
    stream_ = other.stream_;
  }
  return *this;
}

const std::string& Communicator::name() const { return component_->name; }

std::string Communicator::where(const char* what) const {
  return fmt::format("communicator {} (plugin {}), rank {} of {} on {}: {}", component_->name, component_->plugin,
                     rank_, world_size_, device_.str(), what);
}

void Communicator::check(const char* what, const Tensor& t) const {
  // A replay runs backend calls only: a collective inside a captured step (SyncBatchNorm's
  // statistics) keeps the step eager. The gradient reducer's run in hooks or on their own thread,
  // outside any recording.
  if (OpRecorder* r = op_recorder()) r->unrecordable("a collective of a communicator (e.g. SyncBatchNorm's)");
  INGOT_CHECK(handle_ != nullptr, "{}: used after being moved from", where(what));
  INGOT_CHECK(t.defined(), "{}: undefined tensor", where(what));
  INGOT_CHECK(t.device() == device_, "{}: a tensor on {}; this communicator exchanges tensors on {}", where(what),
              t.device().str(), device_.str());
  INGOT_CHECK(t.is_contiguous() && t.storage() != nullptr, "{}: tensors must be contiguous (call contiguous() first)",
              where(what));
}

namespace {
void check_same_dtype(const std::string& where, const Tensor& a, const Tensor& b) {
  INGOT_CHECK(a.dtype() == b.dtype(), "{}: input is {}, output is {}; both must have one dtype", where,
              dtype_name(a.dtype()), dtype_name(b.dtype()));
}
}  // namespace

void Communicator::all_reduce(const Tensor& input, const Tensor& output, ReduceOp op) const {
  check("all_reduce", input), check("all_reduce", output);
  check_same_dtype(where("all_reduce"), input, output);
  INGOT_CHECK_SHAPE(input.numel() == output.numel(), "{}: input {} and output {} differ in size", where("all_reduce"),
                    input.shape().str(), output.shape().str());
  const ingot_tensor_desc in = make_desc(input), out = make_desc(output);
  const ingot_communicator* t = component_->table;
  throw_if_error(t->all_reduce(t->self, handle_, &in, &out, static_cast<int32_t>(op), stream_), where("all_reduce"));
}

void Communicator::broadcast(const Tensor& input, const Tensor& output, int root) const {
  check("broadcast", input), check("broadcast", output);
  check_same_dtype(where("broadcast"), input, output);
  INGOT_CHECK(root >= 0 && root < world_size_, "{}: root {} is not a rank", where("broadcast"), root);
  INGOT_CHECK_SHAPE(input.numel() == output.numel(), "{}: input {} and output {} differ in size", where("broadcast"),
                    input.shape().str(), output.shape().str());
  const ingot_tensor_desc in = make_desc(input), out = make_desc(output);
  const ingot_communicator* t = component_->table;
  throw_if_error(t->broadcast(t->self, handle_, &in, &out, root, stream_), where("broadcast"));
}

void Communicator::all_gather(const Tensor& input, const Tensor& output) const {
  check("all_gather", input), check("all_gather", output);
  check_same_dtype(where("all_gather"), input, output);
  INGOT_CHECK_SHAPE(output.numel() == input.numel() * world_size_,
                    "{}: output {} must hold world_size ({}) x input {} elements", where("all_gather"),
                    output.shape().str(), world_size_, input.shape().str());
  const ingot_tensor_desc in = make_desc(input), out = make_desc(output);
  const ingot_communicator* t = component_->table;
  throw_if_error(t->all_gather(t->self, handle_, &in, &out, stream_), where("all_gather"));
}

void Communicator::reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) const {
  check("reduce_scatter", input), check("reduce_scatter", output);
  check_same_dtype(where("reduce_scatter"), input, output);
  INGOT_CHECK_SHAPE(input.numel() == output.numel() * world_size_,
                    "{}: input {} must hold world_size ({}) x output {} elements", where("reduce_scatter"),
                    input.shape().str(), world_size_, output.shape().str());
  const ingot_tensor_desc in = make_desc(input), out = make_desc(output);
  const ingot_communicator* t = component_->table;
  throw_if_error(t->reduce_scatter(t->self, handle_, &in, &out, static_cast<int32_t>(op), stream_),
                 where("reduce_scatter"));
}

void Communicator::barrier() const {
  if (OpRecorder* r = op_recorder()) r->unrecordable("a collective of a communicator (a barrier)");
  INGOT_CHECK(handle_ != nullptr, "{}: used after being moved from", where("barrier"));
  const ingot_communicator* t = component_->table;
  throw_if_error(t->barrier(t->self, handle_, stream_), where("barrier"));
}

bool Communicator::can_send() const {
  const ingot_communicator* t = component_->table;
  return t->struct_size >= offsetof(ingot_communicator, recv) + sizeof(t->recv) && t->send != nullptr &&
         t->recv != nullptr;
}

void Communicator::send(const Tensor& input, int peer) const {
  check("send", input);
  INGOT_CHECK(peer >= 0 && peer < world_size_ && peer != rank_, "{}: peer {} is not another rank", where("send"), peer);
  INGOT_CHECK_AS(can_send(), PluginError, "{}: the plugin has no point-to-point send (ABI 2.3)", where("send"));
  const ingot_tensor_desc in = make_desc(input);
  const ingot_communicator* t = component_->table;
  throw_if_error(t->send(t->self, handle_, &in, peer, stream_), where("send"));
}

void Communicator::recv(const Tensor& output, int peer) const {
  check("recv", output);
  INGOT_CHECK(peer >= 0 && peer < world_size_ && peer != rank_, "{}: peer {} is not another rank", where("recv"), peer);
  INGOT_CHECK_AS(can_send(), PluginError, "{}: the plugin has no point-to-point recv (ABI 2.3)", where("recv"));
  const ingot_tensor_desc out = make_desc(output);
  const ingot_communicator* t = component_->table;
  throw_if_error(t->recv(t->self, handle_, &out, peer, stream_), where("recv"));
}

}  // namespace ingot

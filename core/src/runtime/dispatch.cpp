// Dispatch: descriptors, backend selection, output layout and allocation, execution. run_op
// sends each op down the dispatch chain; the chain's last step is run_on_backend here.
#include "ingot/runtime/dispatch.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "dispatch_terminal.h"
#include "ingot/base/allocator.h"
#include "ingot/runtime/logging.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/op_recorder.h"
#include "ingot/runtime/profiler.h"
#include "ingot/runtime/registry.h"
#include "ingot/runtime/threads.h"

namespace ingot {
namespace {

/// The host's guarded allocator (retry after emptying the cache, memory tracking).
Allocator& host_memory() {
  static Allocator& host = BackendRegistry::instance().allocator(Device::cpu());
  return host;
}

/// Workspace blocks handed out during one backend call, returned when it ends.
struct Workspace {
  std::vector<std::pair<void*, size_t>> blocks;
  ~Workspace() { release(); }
  void release() {
    for (auto& [p, n] : blocks) host_memory().deallocate(p, n);
    blocks.clear();
  }
};

thread_local Workspace t_workspace;
thread_local OpRecorder* t_recorder = nullptr;

ingot_status* workspace_alloc(void* host, size_t bytes, void** ptr) {
  auto* ws = static_cast<Workspace*>(host);
  *ptr = host_memory().allocate(bytes);  // throws only on exhaustion, caught below
  ws->blocks.emplace_back(*ptr, bytes);
  return nullptr;
}

ingot_status* workspace_alloc_guarded(void* host, size_t bytes, void** ptr) {
  try {
    return workspace_alloc(host, bytes, ptr);
  } catch (const std::exception&) {
    *ptr = nullptr;
    static ingot_status oom{sizeof(ingot_status), INGOT_ABI_MINOR, INGOT_ERR_OUT_OF_MEMORY,
                            "workspace allocation failed", nullptr};
    return &oom;
  }
}

/// Fills a strided, data-less descriptor for an output spec.
ingot_tensor_desc spec_desc(const OutputSpec& spec, Device device) {
  ingot_tensor_desc d{};
  d.struct_size = sizeof(d);
  d.abi_minor = INGOT_ABI_MINOR;
  d.dtype = static_cast<int32_t>(spec.dtype);
  d.ndim = spec.shape.size();
  const Shape strides = contiguous_strides(spec.shape);
  for (int i = 0; i < d.ndim; ++i) d.shape[i] = spec.shape[i], d.strides[i] = strides[i];
  d.device_kind = static_cast<int32_t>(device.kind);
  d.device_index = device.index;
  d.layout = INGOT_LAYOUT_STRIDED;
  d.nbytes = storage_bytes(spec.shape, dtype_size(spec.dtype));
  return d;
}

std::string describe(OpKind op, const std::vector<Tensor>& inputs) {
  std::string s = fmt::format("{}(", op_info(op).name);
  for (size_t i = 0; i < inputs.size(); ++i)
    s += fmt::format("{}{} {}{}", i ? ", " : "", dtype_name(inputs[i].dtype()), inputs[i].shape().str(),
                     inputs[i].is_opaque() ? " opaque" : "");
  return s + ")";
}

void check_arity(OpKind op, size_t n_in, size_t n_out) {
  const OpInfo& info = op_info(op);
  INGOT_CHECK(info.n_in < 0 || static_cast<size_t>(info.n_in) == n_in, "{}: expects {} inputs, got {}", info.name,
              info.n_in, n_in);
  INGOT_CHECK(static_cast<size_t>(info.n_out) == n_out, "{}: expects {} outputs, got {}", info.name, info.n_out,
              n_out);
}

Device device_of(const std::vector<Tensor>& inputs, Device fallback) {
  if (inputs.empty()) return fallback;
  const Device d = inputs.front().device();
  for (const auto& t : inputs)
    INGOT_CHECK(t.device() == d, "inputs on different devices: {} and {}", d.str(), t.device().str());
  return d;
}

std::vector<ingot_tensor_desc> descs_of(const std::vector<Tensor>& ts) {
  std::vector<ingot_tensor_desc> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(make_desc(t));
  return out;
}

bool any_opaque(const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (t.defined() && t.is_opaque()) return true;
  return false;
}

std::vector<Tensor> strided_all(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(t.strided());
  return out;
}

const Backend* pick(OpKind op, Device device, const std::vector<ingot_tensor_desc>& in,
                    const std::vector<ingot_tensor_desc>& out, const void* attrs) {
  for (const Backend* b : BackendRegistry::instance().candidates(device.kind))
    if (b->supports(op, in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()), attrs))
      return b;
  return nullptr;
}

/// The backend for `op`; when none reads an opaque input's layout, reorders the inputs (updating
/// `inputs` and `in`) and asks again. nullptr when no backend runs the op.
const Backend* try_pick_or_reorder(OpKind op, Device device, std::vector<Tensor>& inputs,
                                   std::vector<ingot_tensor_desc>& in, const std::vector<ingot_tensor_desc>& out,
                                   const void* attrs) {
  const Backend* b = pick(op, device, in, out, attrs);
  if (b == nullptr && any_opaque(inputs)) {
    inputs = strided_all(inputs);
    in = descs_of(inputs);
    b = pick(op, device, in, out, attrs);
  }
  return b;
}

/// Like try_pick_or_reorder; throws when no backend runs the op.
const Backend& pick_or_reorder(OpKind op, Device device, std::vector<Tensor>& inputs,
                               std::vector<ingot_tensor_desc>& in, const std::vector<ingot_tensor_desc>& out,
                               const void* attrs) {
  const Backend* b = try_pick_or_reorder(op, device, inputs, in, out, attrs);
  INGOT_CHECK(b != nullptr, "no backend on {} runs {}", device.str(), describe(op, inputs));
  return *b;
}

/// The host copy of a device tensor, made without a device op. A strided view (a gradient
/// expanded by a broadcast) is copied with its whole storage (`whole`) and viewed the same way.
struct HostMirror {
  Tensor host;
  bool whole = false;
};

HostMirror host_copy(const Tensor& t) {
  if (t.is_opaque() || t.is_contiguous()) return {t.detach().to(Device::cpu()), false};
  auto whole = std::make_shared<TensorImpl>();
  whole->storage = t.storage();
  whole->dtype = t.dtype();
  whole->shape = Shape{static_cast<int64_t>(t.storage()->nbytes() / dtype_size(t.dtype()))};
  whole->strides = Shape{1};
  const Tensor host_whole = Tensor(std::move(whole)).to(Device::cpu());
  auto view = std::make_shared<TensorImpl>();
  view->storage = host_whole.storage();
  view->dtype = t.dtype();
  view->shape = t.shape();
  view->strides = t.strides();
  view->offset = t.offset();
  return {Tensor(std::move(view)), true};
}

/// Writes a host mirror back into the device tensor it was made from.
void write_back(const HostMirror& m, const Tensor& device_tensor) {
  const Device device = device_tensor.device();
  INGOT_CHECK(!device_tensor.is_opaque(), "{}: cannot write a host result back into a tensor in a backend's own layout",
              device.str());
  const Backend& b = BackendRegistry::instance().device_backend(device);  // the one holding its memory
  const size_t elem = dtype_size(device_tensor.dtype());
  char* dst = static_cast<char*>(device_tensor.storage()->data());
  const char* src = static_cast<const char*>(m.host.storage()->data());
  size_t bytes = device_tensor.storage()->nbytes();
  if (!m.whole) {
    dst += device_tensor.offset() * elem;
    src += m.host.offset() * elem;
    bytes = static_cast<size_t>(device_tensor.numel()) * elem;
  }
  b.copy(device.index, dst, device.kind, src, DeviceKind::CPU, bytes, exec_context());
}

void warn_fallback(OpKind op, const std::vector<Tensor>& inputs, Device device) {
  static std::mutex mu;
  static std::set<std::pair<int, std::string>> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (warned.emplace(static_cast<int>(op), device.str()).second)
    log_warn("{}: no backend runs {}; running it on the CPU (the data is copied both ways: slow)", device.str(),
             describe(op, inputs));
}

/// An op that no backend of an accelerator runs (a kernel missing for that dtype or layout) runs
/// on the host: inputs copied to the CPU, outputs copied back, one warning per op. The op is
/// recorded once by the chain above, on the device tensors; the copies here are not recorded.
std::vector<Tensor> run_on_host(const OpCall& call) {
  const OpKind op = call.op;
  const Device device = call.device;
  const std::vector<Tensor>& inputs = *call.inputs;
  if (t_recorder != nullptr) t_recorder->unrecordable("an op no backend of the device runs, run on the host");
  warn_fallback(op, inputs, device);
  std::vector<Tensor> host;
  host.reserve(inputs.size());
  for (const Tensor& t : inputs) host.push_back(t.defined() ? host_copy(t).host : t);
  std::vector<Tensor> result = detail::run_on_backend({op, &host, call.outputs, call.attrs, Device::cpu()});
  std::optional<AllocationLabel> label;  // the device copies are the op's outputs
  if (MemoryTracker::enabled()) label.emplace(op_info(op).name, "output", nullptr, DType::F32);
  for (Tensor& t : result) t = t.to(device);
  return result;
}

void execute(const Backend& b, OpKind op, const std::vector<ingot_tensor_desc>& in,
             const std::vector<ingot_tensor_desc>& out, const void* attrs) {
  const ingot_exec_context& ctx = exec_context();
  ProfileScope::set_current_detail(b.name().c_str());
  count_op(b);
  struct Release {
    ~Release() { t_workspace.release(); }
  } release;
  // What the backend allocates during the call (workspaces, temporaries) is named for the op.
  std::optional<AllocationLabel> label;
  if (MemoryTracker::enabled()) label.emplace(op_info(op).name, "workspace", nullptr, DType::F32);
  b.execute(op, in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()), attrs, ctx);
}

}  // namespace

ingot_tensor_desc make_desc(const Tensor& t) {
  ingot_tensor_desc d{};
  d.struct_size = sizeof(d);
  d.abi_minor = INGOT_ABI_MINOR;
  if (!t.defined()) return d;  // an absent optional input: ndim 0, no data
  d.dtype = static_cast<int32_t>(t.dtype());
  d.ndim = t.dim();
  for (int i = 0; i < d.ndim; ++i) d.shape[i] = t.shape()[i], d.strides[i] = t.strides()[i];
  d.byte_offset = t.offset() * dtype_size(t.dtype());
  d.device_kind = static_cast<int32_t>(t.device().kind);
  d.device_index = t.device().index;
  d.data = t.storage()->data();
  d.nbytes = static_cast<int64_t>(t.storage()->nbytes());
  if (t.is_opaque()) {
    d.layout = INGOT_LAYOUT_OPAQUE;
    d.layout_handle = t.layout()->handle();
  }
  return d;
}

const ingot_exec_context& exec_context() {
  thread_local ingot_exec_context ctx{};
  ctx.struct_size = sizeof(ctx);
  ctx.abi_minor = INGOT_ABI_MINOR;
  ctx.num_threads = num_threads();
  ctx.host = &t_workspace;
  ctx.workspace = &workspace_alloc_guarded;
  return ctx;
}

const Backend& select_backend(OpKind op, const std::vector<Tensor>& inputs, const std::vector<OutputSpec>& outputs,
                              const void* attrs, Device device) {
  device = device_of(inputs, device);
  std::vector<ingot_tensor_desc> out;
  for (const auto& s : outputs) out.push_back(spec_desc(s, device));
  std::vector<Tensor> in_tensors = inputs;
  std::vector<ingot_tensor_desc> in = descs_of(in_tensors);
  return pick_or_reorder(op, device, in_tensors, in, out, attrs);
}

std::vector<Tensor> run_op(OpKind op, const std::vector<Tensor>& inputs, const std::vector<OutputSpec>& outputs,
                           const void* attrs, Device device) {
  check_arity(op, inputs.size(), outputs.size());
  return dispatch_chain::run({op, &inputs, &outputs, attrs, device_of(inputs, device)});
}

namespace detail {

std::vector<Tensor> run_on_backend(const OpCall& call) {
  const OpKind op = call.op;
  const std::vector<OutputSpec>& outputs = *call.outputs;
  const void* attrs = call.attrs;
  const Device device = device_of(*call.inputs, call.device);
  std::vector<ingot_tensor_desc> out;
  out.reserve(outputs.size());
  for (const auto& s : outputs) out.push_back(spec_desc(s, device));

  std::vector<Tensor> in_tensors = *call.inputs;
  std::vector<ingot_tensor_desc> in = descs_of(in_tensors);
  const Backend* b = try_pick_or_reorder(op, device, in_tensors, in, out, attrs);
  // (only where a backend holds the device's memory: otherwise the data could not come back)
  if (b == nullptr && !device.is_cpu() && !BackendRegistry::instance().candidates(device.kind).empty())
    return run_on_host({op, call.inputs, call.outputs, attrs, device});
  INGOT_CHECK(b != nullptr, "no backend on {} runs {}", device.str(), describe(op, in_tensors));

  Allocator& alloc = BackendRegistry::instance().allocator(device);
  std::vector<Tensor> result;
  result.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    b->choose_output_layout(op, in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()),
                            static_cast<int>(i), attrs);
    auto impl = std::make_shared<TensorImpl>();
    {
      std::optional<AllocationLabel> label;
      if (MemoryTracker::enabled()) label.emplace(op_info(op).name, "output", &outputs[i].shape, outputs[i].dtype);
      impl->storage = std::make_shared<Storage>(static_cast<size_t>(out[i].nbytes), device, alloc);
    }
    impl->dtype = outputs[i].dtype;
    impl->shape = outputs[i].shape;
    impl->strides = contiguous_strides(outputs[i].shape);
    if (out[i].layout == INGOT_LAYOUT_OPAQUE) impl->layout = std::make_shared<OpaqueLayout>(b, out[i].layout_handle);
    out[i].data = impl->storage->data();
    result.emplace_back(std::move(impl));
  }
  execute(*b, op, in, out, attrs);
  if (t_recorder != nullptr) t_recorder->record({*b, op, in_tensors, result, in, out, attrs, false});
  return result;
}

}  // namespace detail

void run_op_into(OpKind op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 const void* attrs) {
  const ProfileScope profile([op] { return op_info(op).name; }, "op");
  check_arity(op, inputs.size(), outputs.size());
  const Device device = device_of(inputs, outputs.empty() ? Device::cpu() : outputs.front().device());
  std::vector<Tensor> out_tensors = strided_all(outputs);
  std::vector<ingot_tensor_desc> out = descs_of(out_tensors);
  std::vector<Tensor> in_tensors = inputs;
  std::vector<ingot_tensor_desc> in = descs_of(in_tensors);
  const Backend* b = try_pick_or_reorder(op, device, in_tensors, in, out, attrs);
  if (b == nullptr && !device.is_cpu() && !BackendRegistry::instance().candidates(device.kind).empty()) {
    // As run_on_host: the op runs into host mirrors of the outputs, which are written back. An op
    // without outputs (the optimizer updates) changes its inputs in place: they are written back.
    if (t_recorder != nullptr) t_recorder->unrecordable("an in-place op no backend of the device runs, run on the host");
    warn_fallback(op, inputs, device);
    std::vector<HostMirror> in_mirrors;
    std::vector<Tensor> host_in;
    for (const Tensor& t : inputs) {
      in_mirrors.push_back(t.defined() ? host_copy(t) : HostMirror{t, false});
      host_in.push_back(in_mirrors.back().host);
    }
    std::vector<HostMirror> mirrors;
    std::vector<Tensor> host_out;
    for (const Tensor& t : out_tensors) {
      mirrors.push_back(host_copy(t));
      host_out.push_back(mirrors.back().host);
    }
    run_op_into(op, host_in, host_out, attrs);
    for (size_t i = 0; i < mirrors.size(); ++i) write_back(mirrors[i], out_tensors[i]);
    if (out_tensors.empty())
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].defined()) write_back(in_mirrors[i], inputs[i]);
    return;
  }
  INGOT_CHECK(b != nullptr, "no backend on {} runs {}", device.str(), describe(op, in_tensors));
  execute(*b, op, in, out, attrs);
  if (t_recorder != nullptr) t_recorder->record({*b, op, in_tensors, out_tensors, in, out, attrs, true});
}

void run_op_on(const Backend& backend, OpKind op, const std::vector<Tensor>& inputs,
               const std::vector<Tensor>& outputs, const void* attrs) {
  const ProfileScope profile([op] { return op_info(op).name; }, "op");
  check_arity(op, inputs.size(), outputs.size());
  const std::vector<ingot_tensor_desc> in = descs_of(inputs), out = descs_of(outputs);
  execute(backend, op, in, out, attrs);
  if (t_recorder != nullptr) t_recorder->record({backend, op, inputs, outputs, in, out, attrs, true});
}

void run_descs_on(const Backend& backend, OpKind op, const std::vector<ingot_tensor_desc>& in,
                  const std::vector<ingot_tensor_desc>& out, const void* attrs) {
  execute(backend, op, in, out, attrs);
}

OpRecorder* set_op_recorder(OpRecorder* recorder) { return std::exchange(t_recorder, recorder); }

OpRecorder* op_recorder() { return t_recorder; }

}  // namespace ingot

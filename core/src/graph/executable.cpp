// Executable: descriptors built once, patched and run at each replay.
#include "ingot/graph/executable.h"

#include <chrono>
#include <cstring>

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/profiler.h"
#include "ingot/runtime/registry.h"

namespace ingot::graph {

namespace {

Tensor tensor_of(const TensorRef& r, std::shared_ptr<Storage> storage) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->dtype = static_cast<DType>(r.desc.dtype);
  for (int i = 0; i < r.desc.ndim; ++i) {
    impl->shape.push_back(r.desc.shape[i]);
    impl->strides.push_back(r.desc.strides[i]);
  }
  impl->offset = r.desc.byte_offset / static_cast<int64_t>(dtype_size(impl->dtype));
  impl->layout = r.layout;
  return Tensor(std::move(impl));
}

}  // namespace

Executable::Executable(Graph graph) : graph_(std::move(graph)) {
  Graph& g = graph_;
  size_t arena_bytes = 0;
  for (const Value& v : g.values)
    if (v.arena_offset >= 0) arena_bytes = std::max(arena_bytes, static_cast<size_t>(v.arena_offset) + v.nbytes);
  // Internal values the plan left out (the pass switched off) get blocks of their own; values no
  // node touches any more (a pass removed their nodes) get none.
  std::vector<char> touched(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (const auto* refs : {&n.inputs, &n.outputs})
      for (const TensorRef& r : *refs)
        if (r.defined()) touched[r.value] = 1;
  std::vector<std::shared_ptr<Storage>> own(g.values.size());
  Device device = Device::cpu();
  for (size_t v = 0; v < g.values.size(); ++v) {
    Value& val = g.values[v];
    if (val.kind == ValueKind::Internal) device = val.device;
    if (val.kind == ValueKind::Internal && val.escapes) escaping_.push_back(static_cast<int>(v));
    if (val.kind == ValueKind::Internal && !val.escapes && val.arena_offset < 0 && touched[v])
      own[v] = std::make_shared<Storage>(val.nbytes, val.device, BackendRegistry::instance().allocator(val.device));
    if (val.kind == ValueKind::Constant && val.written) {
      auto pristine = std::make_shared<Storage>(val.nbytes, val.device, BackendRegistry::instance().allocator(val.device));
      std::memcpy(pristine->data(), val.storage->data(), val.nbytes);
      restore_.emplace_back(std::move(pristine), static_cast<int>(v));
    }
  }
  if (arena_bytes > 0)
    arena_ = std::make_shared<Storage>(arena_bytes, device, BackendRegistry::instance().allocator(device));
  auto fixed_pointer = [&](int v) -> void* {
    const Value& val = g.values[v];
    if (val.kind == ValueKind::State || val.kind == ValueKind::Constant) return val.storage->data();
    if (val.kind == ValueKind::Internal && !val.escapes)
      return val.arena_offset >= 0 ? static_cast<char*>(arena_->data()) + val.arena_offset : own[v]->data();
    return nullptr;  // bound or fresh at each replay
  };
  in_.resize(g.nodes.size());
  out_.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const auto& [refs, descs, output] :
         {std::tuple{&n.inputs, &in_[i], false}, std::tuple{&n.outputs, &out_[i], true}}) {
      for (size_t s = 0; s < refs->size(); ++s) {
        const TensorRef& r = (*refs)[s];
        descs->push_back(r.desc);
        if (!r.defined()) continue;
        descs->back().data = fixed_pointer(r.value);
        if (descs->back().data == nullptr) patches_.push_back({i, output, s, r.value});
      }
    }
  }
  // Own blocks are referenced by raw pointer only: keep them with the graph.
  for (size_t v = 0; v < own.size(); ++v)
    if (own[v] != nullptr) g.values[v].storage = own[v];
}

std::vector<Tensor> Executable::run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& params,
                                    std::vector<double>* node_seconds) {
  Graph& g = graph_;
  std::vector<std::shared_ptr<Storage>> fresh(g.values.size());
  for (int v : escaping_) {
    const Value& val = g.values[v];
    fresh[v] = std::make_shared<Storage>(val.nbytes, val.device, BackendRegistry::instance().allocator(val.device));
  }
  for (const Patch& p : patches_) {
    const Value& val = g.values[p.value];
    void* data = nullptr;
    if (val.kind == ValueKind::Input) {
      const Tensor& t = inputs.at(static_cast<size_t>(val.input_index));
      INGOT_CHECK(t.defined() && t.storage()->nbytes() >= val.nbytes,
                  "graph replay: input {} does not match the captured step (a guard missed it)", val.input_index);
      data = t.storage()->data();
    } else {
      data = fresh[p.value]->data();
    }
    (p.output ? out_ : in_)[p.node][p.slot].data = data;
  }
  for (const auto& [pristine, v] : restore_) std::memcpy(g.values[v].storage->data(), pristine->data(), pristine->nbytes());
  // Random nodes draw what the step would draw now: the generator's offset plus their place.
  std::vector<uint64_t> base(g.rng.size());
  for (size_t s = 0; s < g.rng.size(); ++s) base[s] = g.rng[s].gen->offset();
  for (Node& n : g.nodes) {
    if (!n.rng) continue;
    for (size_t s = 0; s < g.rng.size(); ++s)
      if (g.rng[s].gen == n.rng->gen) {
        const uint64_t pair[2] = {n.rng->gen->seed(), base[s] + n.rng->rel};
        std::memcpy(n.attrs.data() + n.rng->seed_at, pair, sizeof pair);
      }
  }
  for (size_t s = 0; s < g.rng.size(); ++s)
    g.rng[s].gen->set_state({g.rng[s].gen->seed(), base[s] + (g.rng[s].end - g.rng[s].start)});

  if (node_seconds != nullptr) node_seconds->assign(g.nodes.size(), 0.0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const auto t0 = node_seconds != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (n.reorder) {
      const ProfileScope profile("reorder", "op");
      n.backend->to_strided(in_[i][0], out_[i][0], exec_context());
    } else {
      const ProfileScope profile(op_info(n.op).name, "op");
      run_descs_on(*n.backend, n.op, in_[i], out_[i], n.attrs.empty() ? nullptr : n.attrs.data());
    }
    if (node_seconds != nullptr)
      (*node_seconds)[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  auto result_tensor = [&](const TensorRef& r) -> Tensor {
    const Value& val = g.values[r.value];
    if (val.kind == ValueKind::Input) return tensor_of(r, inputs.at(static_cast<size_t>(val.input_index)).storage());
    if (val.kind == ValueKind::Internal) {
      INGOT_CHECK(val.escapes, "graph replay: a result of the step lives in the arena");
      return tensor_of(r, fresh[r.value]);
    }
    // State or a constant: the caller gets a copy it may keep and change.
    return tensor_of(r, val.storage).clone();
  };
  std::vector<Tensor> results;
  for (const TensorRef& r : g.results) results.push_back(r.defined() ? result_tensor(r) : Tensor());
  for (const auto& [k, r] : g.grads) params.at(k).set_grad(result_tensor(r));
  return results;
}

}  // namespace ingot::graph

// The weight packing pass: choose_input_layout asked, from_strided run once, a constant kept.
#include "ingot/graph/prepack.h"

#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"

namespace ingot::graph {

int prepack_weights(Graph& g) {
  int packed = 0;
  for (Node& n : g.nodes) {
    if (n.reorder || n.in_place || n.backend == nullptr || n.op != INGOT_OP_MATMUL || n.inputs.size() < 2) continue;
    TensorRef& w = n.inputs[1];
    if (!w.defined() || w.desc.layout != INGOT_LAYOUT_STRIDED) continue;
    const Value& state = g.values[w.value];
    if (state.kind != ValueKind::State || state.written || !state.device.is_cpu()) continue;
    std::vector<ingot_tensor_desc> in, out;
    for (const TensorRef& r : n.inputs) in.push_back(r.desc);
    for (const TensorRef& r : n.outputs) out.push_back(r.desc);
    const void* attrs = n.attrs.empty() ? nullptr : n.attrs.data();
    ingot_tensor_desc layout{};
    if (!n.backend->choose_input_layout(n.op, in.data(), static_cast<int>(in.size()), out.data(),
                                        static_cast<int>(out.size()), 1, attrs, &layout))
      continue;
    auto handle = std::make_shared<OpaqueLayout>(n.backend, layout.layout_handle);
    Value v;
    v.kind = ValueKind::Constant;
    v.nbytes = static_cast<size_t>(layout.nbytes);
    v.device = state.device;
    v.storage = Tensor::empty({layout.nbytes}, DType::U8, state.device).storage();
    ingot_tensor_desc src = w.desc;
    src.data = state.storage->data();
    layout.data = v.storage->data();
    layout.byte_offset = 0;
    n.backend->from_strided(src, layout, exec_context());
    layout.data = nullptr;
    g.values.push_back(std::move(v));
    w.value = static_cast<int>(g.values.size()) - 1;
    w.desc = layout;
    w.layout = std::move(handle);
    ++packed;
  }
  return packed;
}

}  // namespace ingot::graph

// The pooled-gradient pass: relu_bwd moved before max_pool2d_bwd where the windows do not overlap.
#include "ingot/graph/pool_grad.h"

#include <cstring>

#include "ingot/graph/pass_util.h"
#include "ingot/plugin/sdk_core.h"

namespace ingot::graph {

namespace {

/// Windows that never share an input position.
bool disjoint_windows(const Node& pool) {
  if (pool.attrs.size() < sizeof(ingot_attr_pool2d)) return false;
  ingot_attr_pool2d a;
  std::memcpy(&a, pool.attrs.data(), sizeof a);
  return a.stride[0] >= a.kernel[0] && a.stride[1] >= a.kernel[1];
}

/// Same dtype, shape, strides and layout (the data may live elsewhere).
bool same_layout(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (a.dtype != b.dtype || a.ndim != b.ndim || a.layout != b.layout || a.layout_handle != b.layout_handle) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
  return true;
}

}  // namespace

int move_relu_grads_before_pools(Graph& g) {
  const std::vector<int> n_reads = read_counts(g);
  std::vector<int> maker(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const TensorRef& r : g.nodes[i].outputs)
      if (maker[r.value] < 0) maker[r.value] = static_cast<int>(i);
  std::vector<char> removed(g.nodes.size(), 0);
  std::vector<std::pair<size_t, Node>> inserted;  // (before node, node)
  int moved = 0;
  for (size_t j = 0; j < g.nodes.size(); ++j) {
    const Node& relu = g.nodes[j];
    if (!plain_call(relu) || relu.op != INGOT_OP_RELU_BWD || relu.inputs.size() != 2) continue;
    const TensorRef &dy = relu.inputs[0], &y = relu.inputs[1];
    const int b_at = maker[dy.value];
    if (b_at < 0 || n_reads[dy.value] != 1 || dy.desc.byte_offset != 0) continue;
    const Node& bwd = g.nodes[static_cast<size_t>(b_at)];
    if (!plain_call(bwd) || bwd.op != INGOT_OP_MAX_POOL2D_BWD || bwd.backend != relu.backend || bwd.inputs.size() != 3 ||
        bwd.outputs[0].value != dy.value || bwd.inputs[1].value != y.value || !disjoint_windows(bwd))
      continue;
    const int f_at = maker[bwd.inputs[2].value];
    if (f_at < 0) continue;
    const Node& pool = g.nodes[static_cast<size_t>(f_at)];
    if (pool.op != INGOT_OP_MAX_POOL2D || pool.outputs.size() != 2 || pool.inputs[0].value != y.value ||
        pool.outputs[1].value != bwd.inputs[2].value)
      continue;
    const TensorRef& grad = bwd.inputs[0];
    // the pooled output, or a copy of it (a reorder to strided) in the gradient's layout
    TensorRef pooled = pool.outputs[0];
    for (const Node& n : g.nodes)
      if (n.reorder && n.inputs[0].value == pooled.value && maker[n.outputs[0].value] < b_at &&
          same_layout(n.outputs[0].desc, grad.desc)) {
        pooled = n.outputs[0];
        break;
      }
    // relu_bwd(g, p) into a new value shaped like g, from its first byte
    Node masked;
    masked.op = INGOT_OP_RELU_BWD;
    masked.backend = relu.backend;
    masked.attrs = relu.attrs;
    TensorRef out = grad;
    out.desc.byte_offset = 0;
    if (out.desc.layout == INGOT_LAYOUT_STRIDED) {
      if (!sdk::is_contiguous(out.desc)) continue;
      out.desc.nbytes = sdk::numel(out.desc) * sdk::dtype_size(out.desc.dtype);
    } else if (grad.desc.byte_offset != 0) {
      continue;
    }
    Value v;
    v.kind = ValueKind::Internal;
    v.nbytes = static_cast<size_t>(out.desc.nbytes);
    v.device = g.values[grad.value].device;
    out.value = static_cast<int>(g.values.size());
    masked.inputs = {grad, pooled};
    masked.outputs = {out};
    // max_pool2d_bwd(relu_bwd(g, p), y, ws) into what relu_bwd wrote
    Node spread = bwd;
    spread.inputs[0] = out;
    spread.outputs = relu.outputs;
    g.values.push_back(v);
    if (!backend_runs(masked) || !backend_runs(spread)) {
      g.values.pop_back();
      continue;
    }
    inserted.emplace_back(static_cast<size_t>(b_at), std::move(masked));
    g.nodes[static_cast<size_t>(b_at)] = std::move(spread);
    removed[j] = 1;
    ++moved;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (auto& [at, n] : inserted)
      if (at == i) kept.push_back(std::move(n));
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(kept);
  return moved;
}

}  // namespace ingot::graph

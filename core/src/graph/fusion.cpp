// The fusion pass: producer / consumer pairs matched over single-use values.
#include "ingot/graph/fusion.h"

#include <cstring>

#include "ingot/graph/pass_util.h"

namespace ingot::graph {

namespace {

bool same_view(const TensorRef& a, const TensorRef& b) {
  const ingot_tensor_desc &x = a.desc, &y = b.desc;
  if (a.value != b.value || x.dtype != y.dtype || x.ndim != y.ndim || x.byte_offset != y.byte_offset ||
      x.layout != y.layout || x.layout_handle != y.layout_handle)
    return false;
  for (int d = 0; d < x.ndim; ++d)
    if (x.shape[d] != y.shape[d] || x.strides[d] != y.strides[d]) return false;
  return true;
}

bool same_shape(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d]) return false;
  return true;
}

/// Whether a node strictly between `from` and `to` writes one of `values` in place.
bool written_between(const Graph& g, size_t from, size_t to, std::initializer_list<int> values) {
  for (size_t k = from + 1; k < to; ++k) {
    const Node& n = g.nodes[k];
    for (const TensorRef& r : n.outputs)
      for (int v : values)
        if (n.in_place && r.value == v) return true;
  }
  return false;
}

}  // namespace

int fuse_elementwise(Graph& g) {
  const std::vector<int> n_reads = read_counts(g);
  std::vector<char> removed(g.nodes.size(), 0);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& a = g.nodes[i];
    if (removed[i] || !plain_call(a) || (a.op != INGOT_OP_BATCH_NORM && a.op != INGOT_OP_ADD)) continue;
    const TensorRef& mid = a.outputs[0];
    if (n_reads[mid.value] != 1) continue;
    size_t j = i + 1;
    auto reads_mid = [&](const Node& n) {
      for (const TensorRef& r : n.inputs)
        if (r.value == mid.value) return true;
      return false;
    };
    while (j < g.nodes.size() && (removed[j] || !reads_mid(g.nodes[j]))) ++j;
    if (j == g.nodes.size()) continue;
    const Node& b = g.nodes[j];
    if (!plain_call(b) || b.backend != a.backend) continue;
    Node f;
    f.backend = a.backend;
    size_t at = i;  // where the fused node goes; the other one goes away
    if (b.op == INGOT_OP_RELU && same_view(b.inputs[0], mid)) {
      f.op = a.op == INGOT_OP_BATCH_NORM ? INGOT_OP_BATCH_NORM_RELU : INGOT_OP_ADD_RELU;
      f.inputs = a.inputs;
      f.outputs = a.outputs;
      f.outputs[0] = b.outputs[0];
      f.attrs = a.attrs;
    } else if (a.op == INGOT_OP_ADD && b.op == INGOT_OP_RELU_BWD && same_view(b.inputs[0], mid) &&
               same_shape(a.inputs[0].desc, mid.desc) && same_shape(a.inputs[1].desc, mid.desc) &&
               !written_between(g, i, j, {a.inputs[0].value, a.inputs[1].value})) {
      // at the gradient's place: relu's output (b's second input) may be made after the add
      f.op = INGOT_OP_ADD_RELU_BWD;
      f.inputs = {a.inputs[0], a.inputs[1], b.inputs[1]};
      f.outputs = b.outputs;
      at = j;
    } else {
      continue;
    }
    if (!backend_runs(f)) continue;
    removed[at == i ? j : i] = 1;
    g.nodes[at] = std::move(f);
    ++fused;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  return fused;
}

}  // namespace ingot::graph

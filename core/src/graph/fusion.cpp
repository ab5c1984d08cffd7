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

/// The activation a matmul or a convolution applies as its epilogue for `op`; NONE for other ops.
int32_t epilogue_of(OpKind op) {
  return op == INGOT_OP_RELU        ? INGOT_ACT_RELU
         : op == INGOT_OP_GELU      ? INGOT_ACT_GELU
         : op == INGOT_OP_GELU_TANH ? INGOT_ACT_GELU_TANH
                                    : INGOT_ACT_NONE;
}

/// A copy of a matmul's or convolution's attributes with `activation` set; empty when the node
/// already has one (or its attributes are not the struct this core builds).
template <class Attr>
std::vector<unsigned char> with_activation(const std::vector<unsigned char>& attrs, int32_t activation) {
  if (attrs.size() != sizeof(Attr)) return {};
  Attr a;
  std::memcpy(&a, attrs.data(), sizeof a);
  if (a.activation != INGOT_ACT_NONE) return {};
  a.activation = activation;
  std::vector<unsigned char> out(sizeof a);
  std::memcpy(out.data(), &a, sizeof a);
  return out;
}

bool has_epilogue(OpKind op) { return op == INGOT_OP_MATMUL || op == INGOT_OP_CONV2D; }

}  // namespace

int fuse_elementwise(Graph& g) {
  const std::vector<int> n_reads = read_counts(g);
  std::vector<char> removed(g.nodes.size(), 0);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& a = g.nodes[i];
    if (removed[i] || !plain_call(a) || (a.op != INGOT_OP_BATCH_NORM && a.op != INGOT_OP_ADD && !has_epilogue(a.op)))
      continue;
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
    if (has_epilogue(a.op)) {
      // an f32 result only: oneDNN applies a post-op to the f32 sums before a bf16 output is
      // rounded, where the separate activation reads the rounded values
      if (epilogue_of(b.op) == INGOT_ACT_NONE || !same_view(b.inputs[0], mid) || mid.desc.dtype != INGOT_F32) continue;
      f.op = a.op;
      f.attrs = a.op == INGOT_OP_MATMUL ? with_activation<ingot_attr_matmul>(a.attrs, epilogue_of(b.op))
                                        : with_activation<ingot_attr_conv2d>(a.attrs, epilogue_of(b.op));
      if (f.attrs.empty()) continue;
      f.inputs = a.inputs;
      f.outputs = a.outputs;
      f.outputs[0] = b.outputs[0];
    } else if (b.op == INGOT_OP_RELU && same_view(b.inputs[0], mid)) {
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

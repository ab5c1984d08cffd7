// Helpers shared by the rewriting passes.
#include "ingot/graph/pass_util.h"

#include "ingot/runtime/backend.h"

namespace ingot::graph {

std::vector<int> read_counts(const Graph& g) {
  std::vector<int> n(g.values.size(), 0);
  for (const Node& node : g.nodes) {
    for (const TensorRef& r : node.inputs)
      if (r.defined()) ++n[r.value];
    if (node.in_place)
      for (const TensorRef& r : node.outputs) ++n[r.value];
  }
  for (const TensorRef& r : g.results)
    if (r.defined()) ++n[r.value];
  for (const auto& [k, r] : g.grads) ++n[r.value];
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (val.kind != ValueKind::Internal || val.escapes || val.written) ++n[v];
  }
  return n;
}

std::vector<char> kept_outside(const Graph& g) {
  std::vector<char> kept(g.values.size(), 0);
  for (const TensorRef& r : g.results)
    if (r.defined()) kept[r.value] = 1;
  for (const auto& [k, r] : g.grads) kept[r.value] = 1;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind != ValueKind::Internal || g.values[v].escapes) kept[v] = 1;
  return kept;
}

bool plain_call(const Node& n) { return !n.reorder && !n.in_place && !n.rng && n.backend != nullptr; }

bool backend_runs(const Node& n) {
  std::vector<ingot_tensor_desc> in, out;
  for (const TensorRef& r : n.inputs) in.push_back(r.desc);
  for (const TensorRef& r : n.outputs) out.push_back(r.desc);
  return n.backend->supports(n.op, in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()),
                             n.attrs.empty() ? nullptr : n.attrs.data());
}

}  // namespace ingot::graph

// The recompute pass: BATCH_NORM_RELU outputs made again for the backward pass.
#include "ingot/graph/recompute.h"

#include <algorithm>
#include <cstring>

namespace ingot::graph {

namespace {

/// Nodes between two reads of a value below which holding it costs less than recomputing it.
constexpr size_t kMinGap = 8;

bool training(const Node& n) {
  if (n.attrs.size() < sizeof(ingot_attr_batch_norm)) return false;
  ingot_attr_batch_norm a;
  std::memcpy(&a, n.attrs.data(), sizeof a);
  return a.training != 0;
}

/// Whether something outside the step sees value `v` (a result or a gradient).
bool seen_outside(const Graph& g, int v) {
  for (const TensorRef& r : g.results)
    if (r.value == v) return true;
  for (const auto& [k, r] : g.grads)
    if (r.value == v) return true;
  return false;
}

/// Whether a node in (from, to) writes one of `values` in place.
bool written_between(const Graph& g, size_t from, size_t to, const std::vector<int>& values) {
  for (size_t k = from + 1; k < to; ++k)
    if (g.nodes[k].in_place)
      for (const TensorRef& r : g.nodes[k].outputs)
        if (std::find(values.begin(), values.end(), r.value) != values.end()) return true;
  return false;
}

/// A new internal value shaped like `v` (a scratch block when `scratch`).
int copy_value(Graph& g, int v, bool scratch) {
  Value nv;
  nv.kind = ValueKind::Internal;
  nv.nbytes = g.values[v].nbytes;
  nv.device = g.values[v].device;
  nv.written = scratch;
  g.values.push_back(nv);
  return static_cast<int>(g.values.size()) - 1;
}

}  // namespace

int recompute_activations(Graph& g) {
  int added = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.reorder || n.in_place || n.rng || n.op != INGOT_OP_BATCH_NORM_RELU || !training(n)) continue;
    const int v = n.outputs[0].value;
    const Value& val = g.values[v];
    if (val.kind != ValueKind::Internal || val.escapes || val.written || seen_outside(g, v)) continue;
    std::vector<size_t> reads;
    for (size_t k = i + 1; k < g.nodes.size(); ++k)
      for (const TensorRef& r : g.nodes[k].inputs)
        if (r.value == v && (reads.empty() || reads.back() != k)) reads.push_back(k);
    if (reads.size() < 2) continue;
    size_t split = 0;  // the read after the longest stretch without one
    for (size_t r = 1; r < reads.size(); ++r)
      if (split == 0 || reads[r] - reads[r - 1] > reads[split] - reads[split - 1]) split = r;
    if (reads[split] - reads[split - 1] < kMinGap) continue;
    const size_t at = reads[split];
    std::vector<int> inputs;
    for (int s = 0; s < 3; ++s)
      if (n.inputs[static_cast<size_t>(s)].defined()) inputs.push_back(n.inputs[static_cast<size_t>(s)].value);
    if (written_between(g, i, at, inputs)) continue;
    Node again = n;
    const int nv = copy_value(g, v, false);
    again.outputs[0].value = nv;
    for (size_t s = 1; s < again.outputs.size(); ++s)  // saved statistics: scratch
      if (again.outputs[s].defined()) again.outputs[s].value = copy_value(g, again.outputs[s].value, true);
    for (size_t s = 3; s < again.inputs.size(); ++s)  // running statistics, updated in place: scratch
      if (again.inputs[s].defined()) again.inputs[s].value = copy_value(g, again.inputs[s].value, true);
    for (size_t k = at; k < g.nodes.size(); ++k)
      for (TensorRef& r : g.nodes[k].inputs)
        if (r.value == v) r.value = nv;
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(at), std::move(again));
    ++added;
  }
  return added;
}

}  // namespace ingot::graph

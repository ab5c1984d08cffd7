// The in-place pass: outputs written over inputs that die at their node.
#include "ingot/graph/in_place.h"

#include <algorithm>

#include "ingot/graph/pass_util.h"
#include "ingot/runtime/backend.h"

namespace ingot::graph {

namespace {

/// A block of the arena: made by a node, not seen outside the step, not written in place.
std::vector<char> arena_values(const Graph& g) {
  std::vector<char> ok = kept_outside(g);
  for (size_t v = 0; v < g.values.size(); ++v)
    ok[v] = !ok[v] && !g.values[v].written && g.values[v].storage == nullptr;
  return ok;
}

/// The whole value, from its first byte.
bool whole(const TensorRef& r, const Value& v) {
  return r.desc.byte_offset == 0 && r.desc.nbytes == static_cast<int64_t>(v.nbytes);
}

}  // namespace

int share_in_place(Graph& g) {
  const std::vector<char> arena = arena_values(g);
  std::vector<int> last(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const TensorRef& r : g.nodes[i].inputs)
      if (r.defined()) last[r.value] = static_cast<int>(i);
    for (const TensorRef& r : g.nodes[i].outputs) last[r.value] = static_cast<int>(i);
  }
  std::vector<char> made(g.values.size(), 0);
  int shared = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    const bool candidate = !n.reorder && !n.in_place && n.backend != nullptr;
    std::vector<char> taken(n.inputs.size(), 0);
    for (size_t j = 0; candidate && j < n.outputs.size(); ++j) {
      const int o = n.outputs[j].value;
      if (!arena[o] || made[o] || g.values[o].shares >= 0 || !whole(n.outputs[j], g.values[o])) continue;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const TensorRef& in = n.inputs[k];
        if (!in.defined() || taken[k] || !arena[in.value] || last[in.value] != static_cast<int>(i)) continue;
        if (g.values[in.value].nbytes != g.values[o].nbytes || !whole(in, g.values[in.value])) continue;
        const auto reads = std::count_if(n.inputs.begin(), n.inputs.end(),
                                         [&](const TensorRef& r) { return r.value == in.value; });
        const bool also_output = std::any_of(n.outputs.begin(), n.outputs.end(),
                                             [&](const TensorRef& r) { return r.value == in.value; });
        if (reads != 1 || also_output) continue;
        std::vector<ingot_tensor_desc> ins, outs;
        for (const TensorRef& r : n.inputs) ins.push_back(r.desc);
        for (const TensorRef& r : n.outputs) outs.push_back(r.desc);
        if (!n.backend->runs_in_place(n.op, ins.data(), static_cast<int>(ins.size()), outs.data(),
                                      static_cast<int>(outs.size()), static_cast<int>(j), static_cast<int>(k),
                                      n.attrs.empty() ? nullptr : n.attrs.data()))
          continue;
        g.values[o].shares = in.value;
        taken[k] = 1;
        ++shared;
        break;
      }
    }
    for (const TensorRef& r : n.outputs) made[r.value] = 1;
  }
  return shared;
}

}  // namespace ingot::graph

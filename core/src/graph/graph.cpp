// Graph helpers: names, descriptions and the comparison of two captures of a step.
#include "ingot/graph/graph.h"

#include <fmt/format.h>

#include <cstring>

namespace ingot::graph {

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Input: return "input";
    case ValueKind::State: return "state";
    case ValueKind::Constant: return "constant";
    case ValueKind::Internal: return "internal";
  }
  return "?";
}

std::string Node::name() const { return reorder ? "reorder" : op_info(op).name; }

std::string describe(const ingot_tensor_desc& d) {
  std::string s = fmt::format("{}[", dtype_name(static_cast<DType>(d.dtype)));
  for (int i = 0; i < d.ndim; ++i) s += fmt::format("{}{}", i ? ", " : "", d.shape[i]);
  s += "]";
  if (d.layout == INGOT_LAYOUT_OPAQUE) s += " opaque";
  return s;
}

namespace {

bool same_desc(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (a.dtype != b.dtype || a.ndim != b.ndim || a.byte_offset != b.byte_offset || a.layout != b.layout ||
      a.device_kind != b.device_kind || a.device_index != b.device_index || a.nbytes != b.nbytes)
    return false;
  for (int i = 0; i < a.ndim; ++i)
    if (a.shape[i] != b.shape[i] || (a.layout != INGOT_LAYOUT_OPAQUE && a.strides[i] != b.strides[i])) return false;
  return true;
}

bool same_refs(const std::vector<TensorRef>& a, const std::vector<TensorRef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].value != b[i].value || (a[i].defined() && !same_desc(a[i].desc, b[i].desc))) return false;
  return true;
}

/// The attributes with a random node's (seed, offset) zeroed: those change every step.
std::vector<unsigned char> stable_attrs(const Node& n) {
  std::vector<unsigned char> a = n.attrs;
  if (n.rng && a.size() >= n.rng->seed_at + 16) std::memset(a.data() + n.rng->seed_at, 0, 16);
  return a;
}

}  // namespace

bool same_graph(const Graph& a, const Graph& b, std::string* why) {
  auto differ = [why](std::string what) {
    if (why != nullptr) *why = std::move(what);
    return false;
  };
  if (a.nodes.size() != b.nodes.size()) return differ(fmt::format("{} nodes, then {}", a.nodes.size(), b.nodes.size()));
  if (a.values.size() != b.values.size())
    return differ(fmt::format("{} values, then {}", a.values.size(), b.values.size()));
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    const std::string where = fmt::format("node {} ({})", i, x.name());
    if (x.reorder != y.reorder || x.op != y.op) return differ(fmt::format("{} became {}", where, y.name()));
    if (x.backend != y.backend) return differ(fmt::format("{} ran on another backend", where));
    if (x.in_place != y.in_place || !same_refs(x.inputs, y.inputs) || !same_refs(x.outputs, y.outputs))
      return differ(fmt::format("{} has other tensors", where));
    if (stable_attrs(x) != stable_attrs(y)) return differ(fmt::format("{} has other attributes", where));
    if (x.rng.has_value() != y.rng.has_value() || (x.rng && (x.rng->gen != y.rng->gen || x.rng->rel != y.rng->rel)))
      return differ(fmt::format("{} draws other random numbers", where));
  }
  // The first node that reads or writes value v, to name it.
  auto user = [&](size_t v) -> std::string {
    for (size_t i = 0; i < a.nodes.size(); ++i)
      for (const auto* refs : {&a.nodes[i].inputs, &a.nodes[i].outputs})
        for (const TensorRef& r : *refs)
          if (r.value == static_cast<int>(v)) return fmt::format(" (read by node {}, {})", i, a.nodes[i].name());
    return "";
  };
  for (size_t v = 0; v < a.values.size(); ++v) {
    const Value &x = a.values[v], &y = b.values[v];
    const std::string where = fmt::format("value %{}{}", v, user(v));
    if (x.kind != y.kind || x.nbytes != y.nbytes || x.input_index != y.input_index || x.escapes != y.escapes)
      return differ(fmt::format("{} is a {} {}-byte value, then a {} {}-byte one", where, kind_name(x.kind), x.nbytes,
                                kind_name(y.kind), y.nbytes));
    if (x.kind == ValueKind::State && x.storage != y.storage) return differ(fmt::format("{}: other state", where));
    const bool uploaded = !x.upload.empty() || !y.upload.empty();  // device memory: compare the host bytes
    if (x.kind == ValueKind::Constant && (uploaded ? x.upload != y.upload
                                                   : std::memcmp(x.storage->data(), y.storage->data(), x.nbytes) != 0))
      return differ(fmt::format("{}: a constant the host code made changed between two steps", where));
  }
  if (!same_refs(a.results, b.results)) return differ("the step returns other tensors");
  if (a.grads.size() != b.grads.size()) return differ("other parameters got gradients");
  for (size_t i = 0; i < a.grads.size(); ++i)
    if (a.grads[i].first != b.grads[i].first || !same_refs({a.grads[i].second}, {b.grads[i].second}))
      return differ("other parameters got gradients");
  return true;
}

}  // namespace ingot::graph

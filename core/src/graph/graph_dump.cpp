// Text and dot forms of a graph.
#include "ingot/graph/graph_dump.h"

#include <fmt/format.h>

#include "ingot/graph/conv_algorithm.h"
#include "ingot/io/atomic_write.h"
#include "ingot/runtime/backend.h"

namespace ingot::graph {

namespace {

std::string refs(const std::vector<TensorRef>& rs) {
  std::string s;
  for (size_t i = 0; i < rs.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", rs[i].defined() ? fmt::format("%{}", rs[i].value) : "_");
  return s;
}

std::string value_line(const Graph& g, size_t v) {
  const Value& val = g.values[v];
  std::string s = fmt::format("%{} {} {} B", v, kind_name(val.kind), val.nbytes);
  if (val.kind == ValueKind::Input) s += fmt::format(" (input {})", val.input_index);
  if (val.escapes) s += " escapes";
  if (val.written) s += " written";
  if (val.arena_offset >= 0) s += fmt::format(" arena@{}", val.arena_offset);
  if (val.shares >= 0) s += fmt::format(" (in place of %{})", val.shares);
  return s;
}

}  // namespace

std::string graph_text(const Graph& g, const std::vector<double>& node_seconds) {
  double total = 0;
  for (double t : node_seconds) total += t;
  std::string s = fmt::format("# {} nodes, {} values", g.nodes.size(), g.values.size());
  if (!node_seconds.empty()) s += fmt::format(", {:.3f} ms per replay", total * 1e3);
  s += "\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::string out;
    for (const TensorRef& o : n.outputs) out += fmt::format("{}%{}: {}", out.empty() ? "" : ", ", o.value, describe(o.desc));
    s += fmt::format("{:4}  {}{} = {}({}) [{}]", i, n.in_place ? "into " : "", out, n.name(), refs(n.inputs),
                     n.backend != nullptr ? n.backend->name() : "?");
    if (n.rng) s += fmt::format(" rng+{}", n.rng->rel);
    if (allows_winograd(n)) s += " winograd";
    if (i < node_seconds.size()) s += fmt::format("  {:.1f} us", node_seconds[i] * 1e6);
    s += "\n";
  }
  s += "# values\n";
  for (size_t v = 0; v < g.values.size(); ++v) s += value_line(g, v) + "\n";
  s += fmt::format("# results: {}\n", refs(g.results));
  std::string grads;
  for (const auto& [k, r] : g.grads) grads += fmt::format("{}param {} <- %{}", grads.empty() ? "" : ", ", k, r.value);
  s += fmt::format("# gradients: {}\n", grads);
  return s;
}

std::string graph_dot(const Graph& g, const std::vector<double>& node_seconds) {
  std::string s = "digraph step {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
  std::vector<int> maker(g.values.size(), -1);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind != ValueKind::Internal)
      s += fmt::format("  v{} [shape=ellipse, label=\"%{} {}\"];\n", v, v, kind_name(g.values[v].kind));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::string label = fmt::format("{}: {}{}", i, n.name(), allows_winograd(n) ? " (winograd)" : "");
    if (!n.outputs.empty()) label += "\\n" + describe(n.outputs.front().desc);
    if (i < node_seconds.size()) label += fmt::format("\\n{:.1f} us", node_seconds[i] * 1e6);
    s += fmt::format("  n{} [shape=box, label=\"{}\"];\n", i, label);
    for (const TensorRef& in : n.inputs) {
      if (!in.defined()) continue;
      if (maker[in.value] >= 0)
        s += fmt::format("  n{} -> n{};\n", maker[in.value], i);
      else if (g.values[in.value].kind != ValueKind::Internal)
        s += fmt::format("  v{} -> n{};\n", in.value, i);
    }
    for (const TensorRef& o : n.outputs) {
      if (n.in_place && g.values[o.value].kind != ValueKind::Internal) s += fmt::format("  n{} -> v{} [style=dashed];\n", i, o.value);
      maker[o.value] = static_cast<int>(i);
    }
  }
  return s + "}\n";
}

void write_graph(const std::filesystem::path& dir, const std::string& name, const Graph& graph,
                 const std::vector<double>& node_seconds) {
  std::filesystem::create_directories(dir);
  io::atomic_write(dir / (name + ".txt"), graph_text(graph, node_seconds));
  io::atomic_write(dir / (name + ".dot"), graph_dot(graph, node_seconds));
}

}  // namespace ingot::graph

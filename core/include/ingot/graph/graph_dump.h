// --dump-graph: a graph as text (one line per node, then the values) and as Graphviz dot.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// The graph as text; `node_seconds` (one per node, or empty) adds each node's time.
std::string graph_text(const Graph& graph, const std::vector<double>& node_seconds = {});
/// The graph as a Graphviz digraph.
std::string graph_dot(const Graph& graph, const std::vector<double>& node_seconds = {});
/// Writes `<dir>/<name>.txt` and `<dir>/<name>.dot` (the folder is created).
void write_graph(const std::filesystem::path& dir, const std::string& name, const Graph& graph,
                 const std::vector<double>& node_seconds = {});

}  // namespace ingot::graph

// The command-line origins of config values: a process-wide list of (node, assignment), compared by
// node identity (yaml-cpp's Node::is), which assignment into a tree preserves and Clone does not.
#include "ingot/config/value_origin.h"

#include <mutex>
#include <utility>
#include <vector>

namespace ingot::config {
namespace {

struct Origins {
  std::mutex mu;
  std::vector<std::pair<YAML::Node, std::string>> nodes;
};

Origins& origins() {
  static Origins o;
  return o;
}

void mark(const YAML::Node& node, const std::string& assignment, std::vector<std::pair<YAML::Node, std::string>>& out) {
  out.emplace_back(node, assignment);
  if (node.IsSequence()) {
    for (const YAML::Node& child : node) mark(child, assignment, out);
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      mark(it->first, assignment, out);
      mark(it->second, assignment, out);
    }
  }
}

}  // namespace

void mark_command_line(const YAML::Node& value, const std::string& assignment) {
  // A run has a few assignments; a process that parses configs without end (a fuzzer) keeps only
  // the newest, so the list (and what it keeps alive) stays bounded.
  constexpr size_t kMaxNodes = 4096;
  Origins& o = origins();
  const std::lock_guard<std::mutex> lock(o.mu);
  if (o.nodes.size() > kMaxNodes) o.nodes.erase(o.nodes.begin(), o.nodes.begin() + kMaxNodes / 2);
  mark(value, assignment, o.nodes);
}

std::optional<std::string> command_line_origin(const YAML::Node& node) {
  if (!node.IsDefined()) return std::nullopt;
  Origins& o = origins();
  const std::lock_guard<std::mutex> lock(o.mu);
  for (auto it = o.nodes.rbegin(); it != o.nodes.rend(); ++it)  // (the latest assignment wins)
    if (it->first.is(node)) return it->second;
  return std::nullopt;
}

}  // namespace ingot::config

// The prune report: a table of the layers before and after, the layers left out, one summary.
#include "prune_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <set>

namespace ingot::prune {

std::vector<std::string> report_layers(const Pruner& pruner) {
  std::set<std::string> wanted;
  for (const Target& t : pruner.targets()) {
    wanted.insert(t.name);
    if (t.link) {
      wanted.insert(t.link->norms.begin(), t.link->norms.end());
      wanted.insert(t.link->consumer);
    }
  }
  std::vector<std::string> out;
  for (const auto& named : pruner.root().named_modules())
    if (wanted.count(named.first) != 0) out.push_back(named.first);
  return out;
}

std::vector<LayerRow> snapshot(nn::Module& root, const std::vector<std::string>& layers) {
  std::vector<LayerRow> rows;
  for (const std::string& name : layers) {
    const nn::ModulePtr m = root.get_submodule(name);
    if (!m || m->named_parameters(false).empty()) continue;
    const Tensor w = m->named_parameters(false).front().second;
    const std::vector<float> v = w.to_vector<float>();
    LayerRow r{name, m->type_name(), w.shape(), m->num_parameters(), 0, w.numel()};
    r.zeros = static_cast<int64_t>(std::count(v.begin(), v.end(), 0.0f));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string method_phrase(const PruneConfig& cfg) {
  const std::string amount = cfg.amount.str();
  switch (cfg.method) {
    case Method::GlobalUnstructured: return fmt::format("global L1 {}", amount);
    case Method::RandomUnstructured: return fmt::format("random {} per layer", amount);
    case Method::LnStructured: return fmt::format("L{} structured {}", cfg.n, amount);
    default: return fmt::format("L1 {} per layer", amount);
  }
}

namespace {

double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

const LayerRow* find(const std::vector<LayerRow>& rows, const std::string& name) {
  for (const LayerRow& r : rows)
    if (r.layer == name) return &r;
  return nullptr;
}

/// "2 convs and 1 linear shrunk" from the producers (layers that lost outputs).
std::string shrunk_phrase(const std::vector<ShapeChange>& changes) {
  int64_t convs = 0, linears = 0;
  for (const ShapeChange& c : changes)
    if (c.before.size() > 0 && c.after.size() > 0 && c.after[0] < c.before[0]) {
      convs += c.type == "Conv2d";
      linears += c.type == "Linear";
    }
  std::vector<std::string> parts;
  if (convs > 0) parts.push_back(fmt::format("{} conv{}", convs, convs == 1 ? "" : "s"));
  if (linears > 0) parts.push_back(fmt::format("{} linear{}", linears, linears == 1 ? "" : "s"));
  return parts.empty() ? "nothing shrunk" : fmt::format("{} shrunk", fmt::join(parts, " and "));
}

}  // namespace

std::string write_report(std::ostream& out, const std::string& who, const PruneConfig& cfg,
                         const std::vector<LayerRow>& before, const std::vector<LayerRow>& after,
                         const std::vector<std::pair<std::string, std::string>>& skipped,
                         const std::vector<ShapeChange>& changes) {
  out << fmt::format("{}: {:<22} {:<12} {:<34} {:<20} {}\n", who, "layer", "type", "weight shape", "parameters",
                     "sparsity");
  int64_t params_before = 0, params_after = 0, zeros = 0, weights = 0;
  for (const LayerRow& b : before) {
    const LayerRow* a = find(after, b.layer);
    const LayerRow& now = a != nullptr ? *a : b;
    params_before += b.params;
    params_after += now.params;
    if (b.type != "BatchNorm2d") zeros += now.zeros, weights += now.weights;
    const std::string shape = now.shape == b.shape ? b.shape.str() : fmt::format("{} -> {}", b.shape.str(), now.shape.str());
    out << fmt::format("{}: {:<22} {:<12} {:<34} {:<20} {:.1f}% -> {:.1f}%\n", who, b.layer, b.type, shape,
                       fmt::format("{} -> {}", b.params, now.params), pct(b.zeros, b.weights),
                       pct(now.zeros, now.weights));
  }
  for (const auto& [layer, why] : skipped) out << fmt::format("{}: {} keeps its outputs: {}\n", who, layer, why);
  std::string summary;
  if (is_structured(cfg.method) && !changes.empty()) {
    summary = fmt::format("{}: {}; parameters of these layers {} -> {} ({:.1f}% fewer)", method_phrase(cfg),
                          shrunk_phrase(changes), params_before, params_after, pct(params_before - params_after,
                                                                                    params_before));
  } else if (is_structured(cfg.method)) {
    summary = fmt::format("{}: {} of {} weights masked in whole filters ({:.1f}%); not shrunk (make_permanent: false)",
                          method_phrase(cfg), zeros, weights, pct(zeros, weights));
  } else {
    summary = fmt::format("{}: {} of {} weights in {} layers are zero ({:.1f}%); unstructured: dense kernels, the same "
                          "file size, no speed-up",
                          method_phrase(cfg), zeros, weights, before.size(), pct(zeros, weights));
  }
  out << fmt::format("{}: {}\n", who, summary);
  return summary;
}

std::string stage_note(const PruneConfig& cfg, const std::vector<ShapeChange>& changes, const std::string& extra) {
  const std::string head = (cfg.schedule ? "gradual " : "") + method_phrase(cfg) + extra;
  if (!is_structured(cfg.method)) return head + " (unstructured: dense kernels, no speed-up)";
  if (changes.empty()) return head + " (masked, not shrunk)";
  return head + ": " + shrunk_phrase(changes);
}

}  // namespace ingot::prune

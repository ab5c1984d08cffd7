// What pruning did, per layer (weight shape, parameters, sparsity before -> after) and in one
// line, and the note for the pipeline's per-stage table. Unstructured sparsity keeps dense
// kernels and the same file size, and the report says so: no speed-up is ever claimed for it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ingot/nn/module.h"
#include "pruner.h"

namespace ingot::prune {

/// One layer at one moment.
struct LayerRow {
  std::string layer, type;
  Shape shape;          ///< of its weight
  int64_t params = 0;   ///< all its parameters
  int64_t zeros = 0;    ///< of its weight
  int64_t weights = 0;  ///< its weight's elements
};

/// The layers a report covers: the pruned ones, and for ln_structured the norms and the
/// consumers that shrink with them, in named_modules order.
std::vector<std::string> report_layers(const Pruner& pruner);

/// The rows of `layers` in `root` now (a layer no longer there is left out).
std::vector<LayerRow> snapshot(nn::Module& root, const std::vector<std::string>& layers);

/// "global L1 80%", "L2 structured 50%", "L1 80% per layer", "random 80% per layer".
std::string method_phrase(const PruneConfig& cfg);

/// Writes "<who>: " lines to `out`: the layers before -> after, the skipped layers and why, and a
/// summary line, which it returns (without the prefix).
std::string write_report(std::ostream& out, const std::string& who, const PruneConfig& cfg,
                         const std::vector<LayerRow>& before, const std::vector<LayerRow>& after,
                         const std::vector<std::pair<std::string, std::string>>& skipped,
                         const std::vector<ShapeChange>& changes);

/// The note of the stage's row in the per-stage table: "global L1 80% (unstructured: dense
/// kernels, no speed-up)", "L1 structured 50%: 2 convs and 1 linear shrunk"; `extra` (", 2
/// epochs fine-tuning") goes after the method.
std::string stage_note(const PruneConfig& cfg, const std::vector<ShapeChange>& changes, const std::string& extra);

}  // namespace ingot::prune

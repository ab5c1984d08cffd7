// Pruner: the masks of one pruning job on a model — which layers, their masks (host and device),
// pruning to an amount (again: among what is left, as torch's PruningContainer) or to a sparsity
// (the gradual schedule), masks re-applied to weights and gradients while training, and
// make_permanent (torch's prune.remove; ln_structured: the layers rebuilt smaller). For
// ln_structured a removed filter's bias and the BatchNorm2d channels after it are masked too, so
// that the masked model computes what the shrunk one will.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "channel_plan.h"
#include "ingot/nn/module.h"
#include "ingot/ops/random.h"
#include "masks.h"
#include "prune_config.h"
#include "shrink.h"

namespace ingot::prune {

/// One pruned layer (Conv2d or Linear) and its mask.
struct Target {
  std::string name;  ///< state_dict prefix
  std::string type;  ///< "Conv2d" / "Linear"
  Tensor weight;
  int64_t rows = 0;  ///< weight.size(0): filters / neurons
  Mask mask;         ///< host, 1 = kept
  Tensor mask_dev;   ///< on the weight's device and dtype
  /// ln_structured: the link to shrink with; its bias and norms' weight and bias are masked per row.
  std::optional<ChannelLink> link;
  std::vector<Tensor> row_tensors;
  Tensor row_mask_dev;
};

class Pruner {
 public:
  /// Resolves the layers of `cfg` in `root`; throws ConfigError (cfg.where) for an unknown name, a
  /// layer that is no Conv2d / Linear, or (ln_structured) one whose channels cannot be removed.
  /// random_unstructured draws from `seed`.
  Pruner(nn::Module& root, const PruneConfig& cfg, uint64_t seed);

  /// Prunes `amount` (of the weights still kept; filters for ln_structured), then applies the masks.
  void prune(const Amount& amount);
  /// Prunes more until `sparsity` of each layer's weights (of all chosen weights together for
  /// global_unstructured, of each layer's filters for ln_structured) is masked; never unprunes.
  void prune_to(double sparsity);
  /// Masks from the zeros the weights already hold (a run resumed during a gradual schedule).
  void masks_from_weights();

  /// weight *= mask (and the masked rows' bias and BatchNorm channels).
  void apply_masks() const;
  /// grad *= mask, for the same tensors, so that the optimizer sees no gradient there.
  void mask_gradients() const;
  /// Applies the masks and drops them; for ln_structured also rebuilds the layers smaller
  /// (returned). The pruner is empty afterwards.
  std::vector<ShapeChange> make_permanent();

  const std::vector<Target>& targets() const { return targets_; }
  /// Layers the method's default left out (ln_structured), with the reason.
  const std::vector<std::pair<std::string, std::string>>& skipped() const { return skipped_; }
  /// The masked fraction of the chosen weights (filters count whole).
  double sparsity() const;
  nn::Module& root() const { return root_; }

 private:
  void prune_layer(Target& t, const std::vector<float>& w, const Amount& amount);
  void upload(Target& t) const;

  nn::Module& root_;
  PruneConfig cfg_;
  ChannelPlan plan_;
  std::vector<Target> targets_;
  std::vector<std::pair<std::string, std::string>> skipped_;
  Generator gen_;
};

/// The Conv2d and Linear layers of `root` (exact types), by state_dict prefix.
std::vector<std::pair<std::string, nn::Module*>> prunable_layers(nn::Module& root);

}  // namespace ingot::prune

// Evaluation: the model in eval mode, without recording gradients, over a whole loader — mean
// loss, accuracy and the confusion matrix.
#pragma once

#include <cmath>
#include <cstdint>

#include "ingot/graph/compiled_step.h"
#include "ingot/data/data_loader.h"
#include "ingot/nn/loss_registry.h"
#include "ingot/nn/module.h"
#include "ingot/train/confusion_matrix.h"
#include "ingot/train/train_config.h"

namespace ingot::train {

struct EvalResult {
  double loss = 0.0;  ///< the loss summed over the samples (tokens), divided by their count
  double accuracy = 0.0;
  int64_t samples = 0;  ///< samples, or target tokens when `tokens`
  double seconds = 0.0;
  ConfusionMatrix confusion{1};  ///< of the classes; not kept for a vocabulary (`tokens`)
  /// A target per position (a language model): accuracy is the next-token one, or the masked-token
  /// one when `masked` (a masked language model's: only chosen positions have a target).
  bool tokens = false;
  bool masked = false;
  double perplexity() const { return std::exp(loss); }
};

/// Runs every batch of `loader` (one pass, in order) through `model`; restores the model's
/// training mode afterwards. `class_names` label the confusion matrix (may be empty); `loss` is
/// the training loss (cross_entropy when none is given). `amp` (train.amp) runs the forward
/// passes under the same autocast policy as training, each weight cast once for the whole pass.
/// `compile` (train.compile): the forward passes as replayed graphs (a dump goes to its
/// dump_dir/eval).
EvalResult evaluate(nn::Module& model, data::DataLoader& loader, std::vector<std::string> class_names = {},
                    const nn::Loss* loss = nullptr, const AmpConfig* amp = nullptr,
                    const graph::CompileOptions* compile = nullptr);

}  // namespace ingot::train

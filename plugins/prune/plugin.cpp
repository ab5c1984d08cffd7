// The prune extension plugin's entry points: the `prune` stage and the `gradual_prune` callback.
#include <iostream>

#include "ingot/base/error.h"
#include "ingot/extension/extension.h"
#include "mask_callback.h"
#include "prune_config.h"
#include "prune_stage.h"

INGOT_EXTENSION("prune", "0.1.0", "pruning as torch.nn.utils.prune: stage prune, callback gradual_prune")

extern "C" INGOT_EXTENSION_EXPORT void ingot_extension_register(ingot::Registry& registry) {
  using ingot::prune::parse_prune_config;
  registry.stages.add({"prune", ingot::prune::prune_stage_schema(),
                       [](const YAML::Node& node, const std::string& file) -> std::unique_ptr<ingot::train::PipelineStage> {
                         return std::make_unique<ingot::prune::PruneStage>(parse_prune_config(node, file, "prune"));
                       },
                       "l1 / global / random unstructured or ln_structured pruning (filters removed), optional "
                       "zhu_gupta schedule and fine_tune"});
  registry.callbacks.add(
      {"gradual_prune", ingot::prune::gradual_prune_schema(),
       [](const YAML::Node& node, const std::string& file) -> std::unique_ptr<ingot::train::TrainCallback> {
         ingot::prune::PruneConfig cfg = parse_prune_config(node, file, "train.callbacks.gradual_prune");
         if (!cfg.schedule)
           throw ingot::ConfigError(fmt::format("{}: gradual_prune needs a schedule: {{type: zhu_gupta, steps: N, "
                                                "frequency: M}} (for one-shot pruning use the prune stage)",
                                                cfg.where));
         return std::make_unique<ingot::prune::GradualPrune>(std::move(cfg), std::cout);
       },
       "prunes during training on the zhu_gupta schedule; masks made permanent when the stage ends"});
}

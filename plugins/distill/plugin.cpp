// The distill extension plugin's entry points: the `distill` pipeline stage (knowledge
// distillation of a student from a frozen teacher).
#include "distill_stage.h"
#include "ingot/extension/extension.h"

INGOT_EXTENSION("distill", "0.1.0", "knowledge distillation: the distill stage (student from a frozen teacher)")

extern "C" INGOT_EXTENSION_EXPORT void ingot_extension_register(ingot::Registry& registry) {
  registry.stages.add(
      {"distill", ingot::distill::distill_schema(),
       [](const YAML::Node& node, const std::string& file) -> std::unique_ptr<ingot::train::PipelineStage> {
         // (the registry validated the keys; the path is for messages only)
         return std::make_unique<ingot::distill::DistillStage>(
             ingot::distill::parse_distill_config(node, file, "distill"));
       },
       "knowledge distillation: trains student: from a frozen teacher (current, runs/NAME, FILE)"});
}

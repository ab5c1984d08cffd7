// The process's registries, gathered for extension plugins.
#include "ingot/extension/registry.h"

namespace ingot {

Registry Registry::process() {
  return Registry{nn::layer_registry(), nn::loss_registry(), optim::optimizer_registry(), optim::schedule_registry(),
                  train::stage_registry(),
                  train::callback_registry(), data::dataset_registry(), io::onnx::exporter_registry()};
}

}  // namespace ingot

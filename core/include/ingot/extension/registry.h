// Registry: every registry an extension plugin can add types to, handed to its
// ingot_extension_register. Built-in types are registered into the same registries.
#pragma once

#include "ingot/data/dataset_registry.h"
#include "ingot/io/onnx_export.h"
#include "ingot/nn/layer_registry.h"
#include "ingot/nn/loss_registry.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/train/callback_registry.h"
#include "ingot/train/stage.h"

namespace ingot {

struct Registry {
  nn::LayerRegistry& layers;              ///< model.layers entries
  nn::LossRegistry& losses;               ///< train.loss
  optim::OptimizerRegistry& optimizers;   ///< train.optimizer
  optim::ScheduleRegistry& schedules;     ///< train.scheduler (and the parts of a sequential one)
  train::StageRegistry& stages;           ///< stages:
  train::CallbackRegistry& callbacks;     ///< train.callbacks
  data::DatasetRegistry& datasets;        ///< data.dataset (with its data.<name> section)
  io::onnx::ExporterRegistry& onnx_exporters;  ///< `ingot export`: how a layer type is written in ONNX

  /// The process's registries.
  static Registry process();
};

}  // namespace ingot

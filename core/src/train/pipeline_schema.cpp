// The schema of a whole pipeline config: each section's keys are declared by its owner (data,
// model, train) and the registries they read (built each time: extensions may add types).
#include "ingot/train/pipeline_schema.h"

#include "ingot/data/data_config.h"
#include "ingot/nn/model_builder.h"
#include "ingot/parallel/parallel_config.h"
#include "ingot/train/logging_config.h"
#include "ingot/train/stage_report.h"
#include "ingot/train/train_config.h"

namespace ingot::train {
namespace {

using config::Field;
using config::FieldType;
using config::Schema;

Schema smoke_schema() {
  Schema conv;
  conv.integer("batch", 1, 4096)
      .integer("channels", 1, 4096)
      .integer("out_channels", 1, 4096)
      .integer("size", 1, 4096)
      .integer("kernel", 1, 64)
      .integer("stride", 1, 64)
      .integer("padding", 0, 64);
  Schema smoke;
  smoke.integer("matmul_size", 1, 16384).integer("repeats", 1, 10000).section("conv", std::move(conv));
  return smoke;
}

}  // namespace

Schema pipeline_schema() {
  Schema root;
  root.string("name", /*required=*/true)
      .string("backend")  // auto | cpu | cuda | <backend or plugin name>: checked by select_backends
      .integer("seed", 0)
      .integer("threads", 1, 4096)
      .section("smoke", smoke_schema())
      .section("data", data::data_schema())
      .section("model", nn::model_schema())
      .section("train", train::train_schema())
      .section("report", train::report_schema())  // the per-stage table (compression.md)
      .section("parallel", parallel::parallel_schema())  // several processes: ddp or pipeline
      .section("logging", train::logging_schema())       // metrics.csv, TensorBoard event files
      .any("init_from");  // weights loaded before training: a safetensors path or {path, strict, ...}
  Field stages;
  stages.key = "stages";
  stages.type = FieldType::List;
  stages.help = "stage types (train, evaluate, save, ...) or {type: ..., keys}, run in order";
  root.add(stages);
  return root;
}

}  // namespace ingot::train

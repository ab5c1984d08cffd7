// A small training run for the trainer's tests: an MLP (16 -> 8 -> 3) on synthetic 4x4 images,
// SGD without momentum (or with it, or AdamW, when a test says), the cross-entropy loss, and
// train_loop over one epoch with the callbacks given. Each test sets what it varies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/base/grad_mode.h"
#include "ingot/data/synthetic.h"
#include "ingot/nn/presets.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/sgd.h"
#include "ingot/train/trainer.h"

namespace ingot::test {

struct SmallTraining {
  int64_t samples = 32;
  int64_t batch = 8;
  uint64_t data_seed = 1;
  uint64_t init_seed = 7;  ///< the dropout generator gets init_seed + 1
  double lr = 0.1;
  double momentum = 0.0;  ///< SGD's
  bool adamw = false;     ///< AdamW (weight decay 0.01) instead of SGD
  std::string schedule = "{type: constant}";
  train::TrainConfig config = [] {
    train::TrainConfig c;
    c.loss = nn::make_loss(YAML::Node(), "test");
    return c;
  }();
  std::vector<train::TrainCallback*> callbacks;
  amp::GradScaler* scaler = nullptr;  ///< train.amp.loss_scale's scaler, when a test uses one

  struct Result;
  /// Resume from where another run ended (its weights, optimizer state and position).
  std::shared_ptr<const Result> start;

  struct Result {
    train::TrainStatus status = train::TrainStatus::Finished;
    train::TrainPosition position;
    std::vector<Tensor> weights;  ///< copies of the parameters at the end
    optim::OptimizerState optimizer;
  };

  /// Trains to the plan's end; a NonFiniteError from the loop propagates.
  Result run() const {
    Generator init(init_seed), dropout(init_seed + 1);
    const auto model = nn::make_mlp({{16, 8, 3}, "relu", 0.0}, &init, &dropout);
    data::LoaderOptions lo;
    lo.batch_size = batch;
    data::SyntheticSpec spec;
    spec.size = samples;
    spec.height = spec.width = 4;
    spec.classes = 3;
    data::DataLoader loader(data::synthetic_dataset(spec, data_seed), lo);
    optim::SgdOptions so;
    so.lr = lr;
    so.momentum = momentum;
    optim::AdamWOptions ao;
    ao.lr = lr;
    std::unique_ptr<optim::Optimizer> made;
    if (adamw) {
      made = std::make_unique<optim::AdamW>(model->parameters(), ao);
    } else {
      made = std::make_unique<optim::SGD>(model->parameters(), so);
    }
    optim::Optimizer& opt = *made;
    const train::TrainPlan plan = train::make_train_plan(config, loader.num_batches());
    const auto sched = optim::make_schedule(YAML::Load(schedule), "test", plan.total_steps);
    train::TrainContext ctx{model.get(), &opt, sched.get(), &loader, &dropout};
    ctx.callbacks = callbacks;
    ctx.scaler = scaler;
    Result r;
    if (start) {
      const NoGradGuard no_grad;
      const auto params = model->parameters();
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(start->weights[i]);
      opt.load_state_dict(start->optimizer);
      r.position = start->position;
      dropout.set_state(r.position.rng);
    }
    r.status = train::train_loop(ctx, config, plan, r.position, nullptr);
    r.optimizer = opt.state_dict();
    for (const Tensor& p : model->parameters()) r.weights.push_back(p.detach().clone());
    return r;
  }
};

}  // namespace ingot::test

// The prune stage: prune, fine-tune with the masks kept (or rising on the schedule), make
// permanent, report.
#include "prune_stage.h"

#include <fmt/format.h>

#include <memory>

#include "ingot/base/error.h"
#include "ingot/train/fine_tune.h"
#include "mask_callback.h"
#include "prune_report.h"
#include "pruner.h"
#include "shrink.h"

namespace ingot::prune {

PruneStage::PruneStage(PruneConfig cfg) : cfg_(std::move(cfg)) {
  if (cfg_.schedule && !cfg_.fine_tune.IsMap())
    throw ConfigError(
        fmt::format("{}: a schedule raises the sparsity over fine-tuning steps: add fine_tune: "
                    "{{epochs: N}} (or remove schedule for one-shot pruning)",
                    cfg_.where));
}

bool PruneStage::prepare_saved(nn::ModulePtr& model, const io::SafetensorsFile& weights) const {
  // Which channels were kept does not matter: the file's values replace them all.
  const ChannelPlan plan = plan_channels(*model);
  std::vector<ChannelLink> links;
  std::vector<std::vector<uint8_t>> keep;
  for (const ChannelLink& link : plan.links) {
    const auto saved = weights.tensors.find(link.producer + ".weight");
    const nn::ModulePtr producer = model->get_submodule(link.producer);
    if (saved == weights.tensors.end() || producer == nullptr) continue;
    const int64_t now = producer->named_parameters().front().second.size(0), kept = saved->second.size(0);
    if (kept >= now || kept < 1) continue;
    std::vector<uint8_t> k(static_cast<size_t>(now), 0);
    std::fill(k.begin(), k.begin() + kept, 1);
    links.push_back(link);
    keep.push_back(std::move(k));
  }
  if (!links.empty()) (void)shrink_channels(*model, links, keep);
  return false;
}

bool PruneStage::run(train::StageContext& s) {
  nn::Module& model = s.model();
  auto pruner = std::make_shared<Pruner>(model, cfg_, s.seed());
  const std::vector<std::string> layers = report_layers(*pruner);
  const std::vector<LayerRow> before = snapshot(model, layers);
  const std::vector<std::pair<std::string, std::string>> skipped = pruner->skipped();
  auto masks = std::make_unique<MaskCallback>(pruner, cfg_.schedule, cfg_.amount.fraction);
  if (cfg_.schedule) {
    s.out() << fmt::format("prune: {} on {} layers, rising as zhu_gupta from {:g}% over steps {}..{} (every {})\n",
                           method_phrase(cfg_), pruner->targets().size(), 100.0 * cfg_.schedule->initial,
                           cfg_.schedule->begin, cfg_.schedule->end(), cfg_.schedule->frequency);
  } else {
    pruner->prune(cfg_.amount);
    s.out() << fmt::format("prune: {} on {} layers: {:.1f}% of their weights masked\n", method_phrase(cfg_),
                           pruner->targets().size(), 100.0 * pruner->sparsity());
  }
  std::string extra;
  if (cfg_.fine_tune.IsMap()) {
    const train::TrainConfig tc = train::fine_tune_config(s, cfg_.fine_tune);
    if (train::fine_tune(s, model, tc, {masks.get()}, "prune") == train::TrainStatus::Interrupted) return false;
    extra = tc.steps > 0 ? fmt::format(", {} steps fine-tuning", tc.steps)
                         : fmt::format(", {} epoch{} fine-tuning", tc.epochs, tc.epochs == 1 ? "" : "s");
  }
  if (!masks->reached_final()) {
    s.out() << fmt::format(
        "prune: the schedule ends after step {} but fine-tuning stopped before it: the final {} is "
        "applied now, without fine-tuning after it\n",
        cfg_.schedule->end(), cfg_.amount.str());
    masks->finish();
  }
  std::vector<ShapeChange> changes;
  if (cfg_.make_permanent) {
    changes = pruner->make_permanent();
  } else {
    // The masks stay: later training of this model (another stage's fine-tuning) keeps them.
    s.add_callback(std::make_unique<MaskCallback>(pruner, std::nullopt, 0.0));
  }
  write_report(s.out(), "prune", cfg_, before, snapshot(s.model(), layers), skipped, changes);
  s.set_note(stage_note(cfg_, changes, extra));
  return true;
}

}  // namespace ingot::prune

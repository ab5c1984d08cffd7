// Evaluation pass over a loader.

#include "ingot/train/evaluate.h"

#include <chrono>
#include <optional>

#include "ingot/amp/autocast.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/loss.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "ingot/train/device_feeder.h"

namespace ingot::train {

EvalResult evaluate(nn::Module& model, data::DataLoader& loader, std::vector<std::string> class_names,
                    const nn::Loss* loss, const AmpConfig* amp, const graph::CompileOptions* compile) {
  const nn::Loss fallback = loss == nullptr ? nn::make_loss(YAML::Node(), "") : nn::Loss{};
  const nn::Loss& loss_fn = loss == nullptr ? fallback : *loss;
  const auto t0 = std::chrono::steady_clock::now();
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  const bool autocast = amp != nullptr && amp->enabled;
  const amp::AutocastRegion region(autocast ? amp->dtype : DType::BF16, model.parameters(), autocast);
  EvalResult r;
  r.tokens = !loader.dataset().target_shape().empty();
  r.masked = loader.dataset().masking().has_value();
  const int64_t classes = loader.dataset().num_classes();
  if (!r.tokens) r.confusion = ConfusionMatrix(classes, std::move(class_names));
  double loss_sum = 0.0;
  int64_t correct = 0;
  std::optional<graph::CompiledStep> compiled;
  if (compile != nullptr) {
    graph::CompileOptions o = *compile;
    if (!o.dump_dir.empty()) o.dump_dir /= "eval";
    compiled.emplace(o, std::vector<Tensor>{}, model.buffers());
  }
  loader.begin_epoch(0);
  DeviceFeeder feeder(loader, model.device(), 2);
  while (auto batch = feeder.next()) {
    const auto forward = [&] { return std::vector<Tensor>{model(batch->inputs)}; };
    const Tensor logits = compiled ? compiled->run({batch->inputs}, {{"train", 0}}, forward).front() : forward().front();
    loss_sum += loss_fn.fn(logits, batch->targets, nn::Reduction::Sum).item();
    if (r.tokens)  // logits [B, T, V]: the rows of every position
      correct += nn::accuracy_count(logits.reshape(Shape{-1, classes}), batch->targets.reshape(Shape{-1}));
    else
      r.confusion.add(logits, batch->targets);
    // (positions without a target, a masked language model's unmasked tokens, count for neither)
    r.samples += r.tokens ? static_cast<int64_t>(sum(ne(batch->targets, Scalar(int64_t{-100})).to(DType::I64)).item())
                          : batch->targets.numel();
  }
  model.train(was_training);
  r.loss = r.samples > 0 ? loss_sum / static_cast<double>(r.samples) : 0.0;
  r.accuracy = r.tokens ? (r.samples > 0 ? static_cast<double>(correct) / static_cast<double>(r.samples) : 0.0)
                        : r.confusion.accuracy();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace ingot::train

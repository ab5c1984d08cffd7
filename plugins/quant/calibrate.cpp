// Calibration with module hooks: the hooks only watch (they return no replacement tensor).
#include "calibrate.h"

#include <optional>
#include <utility>

#include "ingot/base/grad_mode.h"

namespace ingot::quant {
namespace {

/// Removes the registered hooks and restores the training mode when the scope ends.
class HookScope {
 public:
  explicit HookScope(nn::Module& model) : model_(model), training_(model.is_training()) {}
  ~HookScope() {
    for (const auto& [m, id] : hooks_) m->remove_hook(id);
    model_.train(training_);
  }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;
  void add(nn::Module* m, uint64_t id) { hooks_.emplace_back(m, id); }

 private:
  nn::Module& model_;
  bool training_;
  std::vector<std::pair<nn::Module*, uint64_t>> hooks_;
};

}  // namespace

int64_t calibrate(nn::Module& model, std::vector<Unit>& units, data::DataLoader& loader, int64_t batches,
                  const ObserverSpec& spec, bool reduce_range) {
  HookScope scope(model);
  model.eval();
  for (Unit& u : units) {
    u.input_observer = make_observer(spec);
    u.output_observer = make_observer(spec);
    nn::Module* layer = model.get_submodule(u.path).get();
    Observer* in = u.input_observer.get();
    scope.add(layer, layer->register_forward_pre_hook([in](nn::Module&, const Tensor& x) -> std::optional<Tensor> {
      in->observe(x);
      return std::nullopt;
    }));
    const std::string& last = !u.relu.empty() ? u.relu : !u.bn.empty() ? u.bn : u.path;
    nn::Module* tail = model.get_submodule(last).get();
    Observer* out = u.output_observer.get();
    scope.add(tail,
              tail->register_forward_hook([out](nn::Module&, const Tensor&, const Tensor& y) -> std::optional<Tensor> {
                out->observe(y);
                return std::nullopt;
              }));
  }
  NoGradGuard no_grad;
  const Device device = model.device();
  int64_t ran = 0;
  loader.begin_epoch(0);
  while (ran < batches) {
    std::optional<data::Batch> b = loader.next();
    if (!b) break;
    model(b->inputs.to(device));
    ++ran;
  }
  loader.stop();
  const auto [qmin, qmax] = activation_range(reduce_range);
  for (Unit& u : units) {
    u.input_q = activation_qparams(u.input_observer->qparams(qmin, qmax), device);
    u.output_q = activation_qparams(u.output_observer->qparams(qmin, qmax), device);
  }
  return ran;
}

}  // namespace ingot::quant

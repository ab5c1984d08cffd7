// AnomalyDetector: a dispatch-chain interceptor that reads every floating output back to the
// host, plus forward hooks that keep the stack of layers being run.
#include "ingot/train/anomaly_detector.h"

#include <fmt/format.h>

#include <cmath>
#include <mutex>
#include <thread>

#include "ingot/autograd/engine.h"
#include "ingot/autograd/node.h"
#include "ingot/base/grad_mode.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/dispatch_chain.h"

namespace ingot::train {

/// Shared by the interceptor and the hooks; touched by the watched thread only, except first().
struct AnomalyState {
  std::thread::id thread = std::this_thread::get_id();
  std::vector<const std::pair<std::string, nn::Module*>*> layers;  ///< the layers being run, innermost last
  std::vector<std::pair<std::string, nn::Module*>> named;          ///< every layer of the model
  mutable std::mutex mu;
  std::string first;
};

namespace {

/// "NaN", "inf" or "-inf" for the first non-finite element, "" when all are finite (or the
/// tensor holds no floating values).
std::string nonfinite_kind(const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype()) || t.numel() == 0) return "";
  const std::vector<double> values = t.detach().to_vector<double>();
  for (double v : values)
    if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf";
  return "";
}

thread_local bool t_checking = false;  // the detector's own reads also run ops: not watched

class AnomalyInterceptor final : public OpInterceptor {
 public:
  explicit AnomalyInterceptor(std::shared_ptr<AnomalyState> state) : state_(std::move(state)) {}
  const char* name() const override { return "anomaly"; }

  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    std::vector<Tensor> outputs = next(call);
    if (t_checking || std::this_thread::get_id() != state_->thread) return outputs;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (!state_->first.empty()) return outputs;  // only the first of a step is of interest
    }
    t_checking = true;
    try {
      check(call, outputs);
    } catch (...) {
      t_checking = false;
      throw;
    }
    t_checking = false;
    return outputs;
  }

 private:
  void check(const OpCall& call, const std::vector<Tensor>& outputs) {
    NoGradGuard no_grad;
    std::string kind;
    size_t which = 0;
    for (; which < outputs.size() && kind.empty(); ++which) kind = nonfinite_kind(outputs[which]);
    if (kind.empty()) return;
    std::string inputs = "from finite inputs";
    for (size_t i = 0; i < call.inputs->size(); ++i)
      if (const std::string k = nonfinite_kind((*call.inputs)[i]); !k.empty()) {
        inputs =
            fmt::format("from input {} that already held {} (a weight, the data, or an op outside the step)", i + 1, k);
        break;
      }
    std::string where;
    if (const autograd::Node* node = autograd::running_node()) {
      where = fmt::format("backward, in {}", node->name());
    } else if (!state_->layers.empty()) {
      const auto& [name, module] = *state_->layers.back();
      where = fmt::format("forward, in layer '{}' {}", name.empty() ? "<model>" : name, module->type_name());
    } else {
      where = "outside the model's layers (loss, optimizer or a callback)";
    }
    const std::string output = outputs.size() > 1 ? fmt::format(" output {}", which) : "";
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->first = fmt::format("op {} ({}) made {}{} {}", op_info(call.op).name, where, kind, output, inputs);
  }

  std::shared_ptr<AnomalyState> state_;
};

}  // namespace

AnomalyDetector::AnomalyDetector(nn::Module& model) : state_(std::make_shared<AnomalyState>()) {
  state_->named = model.named_modules();
  for (const auto& entry : state_->named) {
    nn::Module* m = entry.second;
    const auto* named = &entry;
    const std::weak_ptr<AnomalyState> weak = state_;
    const uint64_t pre =
        m->register_forward_pre_hook([weak, named](nn::Module&, const Tensor&) -> std::optional<Tensor> {
          if (auto s = weak.lock(); s && std::this_thread::get_id() == s->thread) s->layers.push_back(named);
          return std::nullopt;
        });
    const uint64_t post =
        m->register_forward_hook([weak, named](nn::Module&, const Tensor&, const Tensor&) -> std::optional<Tensor> {
          if (auto s = weak.lock();
              s && std::this_thread::get_id() == s->thread && !s->layers.empty() && s->layers.back() == named)
            s->layers.pop_back();
          return std::nullopt;
        });
    hooks_.emplace_back(m, pre);
    hooks_.emplace_back(m, post);
  }
  interceptor_ = std::make_shared<AnomalyInterceptor>(state_);
  dispatch_chain::add(interceptor_, InterceptorOrder::Observer);
}

AnomalyDetector::~AnomalyDetector() {
  dispatch_chain::remove(interceptor_.get());
  for (const auto& [module, id] : hooks_) module->remove_hook(id);
}

void AnomalyDetector::clear() {
  state_->layers.clear();  // a forward that threw may have left its layers
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->first.clear();
}

std::string AnomalyDetector::first() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->first;
}

}  // namespace ingot::train

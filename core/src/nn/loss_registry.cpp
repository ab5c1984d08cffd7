// The built-in losses, registered like an extension plugin's: each declares its keys (torch's
// names and defaults) and builds a Loss.
#include "ingot/nn/loss_registry.h"

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"

namespace ingot::nn {
namespace {

/// Reads `reduction` (default `fallback`) and records it in `resolved`.
Reduction reduction_of(const YAML::Node& node, Reduction fallback, YAML::Node& resolved) {
  const Reduction r = node["reduction"] ? parse_reduction(node["reduction"].as<std::string>()) : fallback;
  resolved["reduction"] = reduction_name(r);
  return r;
}

/// The target as the output's shape: class indices become one-hot rows when `one_hot` is set.
Tensor dense_target(const Tensor& output, const Tensor& target, bool one_hot_target) {
  // Class probabilities (data.mix) are dense already.
  if (!one_hot_target || (is_floating(target.dtype()) && target.shape() == output.shape())) return target;
  INGOT_CHECK_SHAPE(output.dim() == 2, "loss with one_hot: the output must be [N, classes], got {}", output.shape().str());
  return one_hot(target, output.size(1), output.dtype());
}

config::Schema reduction_schema(std::vector<std::string> choices = {"none", "mean", "sum"}) {
  config::Schema s;
  s.string("reduction", false, std::move(choices));
  return s;
}

void add_builtins(LossRegistry& r) {
  {
    config::Schema s = reduction_schema();
    s.number("label_smoothing", 0.0, 1.0).integer("ignore_index").integer("class_dim", -1, 1);
    r.add({"cross_entropy", std::move(s),
           [](const YAML::Node& node, const std::string&) {
             Loss l{"cross_entropy"};
             l.resolved["type"] = l.type;
             l.reduction = reduction_of(node, Reduction::Mean, l.resolved);
             CrossEntropyOptions o;
             if (node["label_smoothing"]) o.label_smoothing = node["label_smoothing"].as<double>();
             if (node["ignore_index"]) o.ignore_index = node["ignore_index"].as<int64_t>();
             const int64_t class_dim = node["class_dim"] ? node["class_dim"].as<int64_t>() : 1;
             INGOT_CHECK_AS(class_dim == 1 || class_dim == -1, ConfigError,
                            "train.loss.class_dim is {}; it is 1 (logits [N, C, ...], torch's) or -1 (a sequence "
                            "model's [B, T, V] logits against [B, T] targets)",
                            class_dim);
             o.classes_last = class_dim == -1;
             l.resolved["label_smoothing"] = o.label_smoothing;
             l.resolved["ignore_index"] = o.ignore_index;
             l.resolved["class_dim"] = class_dim;
             l.fn = [o](const Tensor& out, const Tensor& t, Reduction red) {
               CrossEntropyOptions with = o;
               with.reduction = red;
               return cross_entropy(out, t, with);
             };
             return l;
           },
           "torch.nn.CrossEntropyLoss: logits [N, C] (class_dim 1) or [B, T, V] (class_dim -1) against class "
           "indices or class probabilities (data.mix)"});
  }
  {
    config::Schema s = reduction_schema();
    s.integer("ignore_index");
    r.add({"nll", std::move(s),
           [](const YAML::Node& node, const std::string&) {
             Loss l{"nll"};
             l.resolved["type"] = l.type;
             l.reduction = reduction_of(node, Reduction::Mean, l.resolved);
             CrossEntropyOptions o;
             if (node["ignore_index"]) o.ignore_index = node["ignore_index"].as<int64_t>();
             l.resolved["ignore_index"] = o.ignore_index;
             l.fn = [o](const Tensor& out, const Tensor& t, Reduction red) {
               CrossEntropyOptions with = o;
               with.reduction = red;
               return nll_loss(out, t, with);
             };
             return l;
           },
           "torch.nn.NLLLoss: log-probabilities [N, C] against class indices"});
  }
  // Element-wise losses compare the output with a target of its shape; one_hot: true turns a
  // classification dataset's labels into such targets.
  const auto elementwise = [&r](const std::string& type, const std::string& help,
                                std::function<Tensor(const Tensor&, const Tensor&, Reduction)> fn) {
    config::Schema s = reduction_schema();
    s.boolean("one_hot");
    r.add({type, std::move(s),
           [type, fn](const YAML::Node& node, const std::string&) {
             Loss l{type};
             l.resolved["type"] = type;
             l.reduction = reduction_of(node, Reduction::Mean, l.resolved);
             const bool hot = node["one_hot"] && node["one_hot"].as<bool>();
             l.resolved["one_hot"] = hot;
             l.fn = [fn, hot](const Tensor& out, const Tensor& t, Reduction red) {
               return fn(out, dense_target(out, t, hot), red);
             };
             return l;
           },
           help});
  };
  elementwise("mse", "torch.nn.MSELoss", [](const Tensor& a, const Tensor& b, Reduction red) { return mse_loss(a, b, red); });
  elementwise("l1", "torch.nn.L1Loss", [](const Tensor& a, const Tensor& b, Reduction red) { return l1_loss(a, b, red); });
  elementwise("bce_with_logits", "torch.nn.BCEWithLogitsLoss",
              [](const Tensor& a, const Tensor& b, Reduction red) {
                return binary_cross_entropy_with_logits(a, b, {red, Tensor(), Tensor()});
              });
  {
    config::Schema s = reduction_schema({"none", "mean", "sum", "batchmean"});
    s.boolean("log_target").boolean("one_hot");
    r.add({"kl_div", std::move(s),
           [](const YAML::Node& node, const std::string&) {
             Loss l{"kl_div"};
             l.resolved["type"] = l.type;
             l.reduction = reduction_of(node, Reduction::BatchMean, l.resolved);
             KlDivOptions o;
             o.log_target = node["log_target"] && node["log_target"].as<bool>();
             const bool hot = node["one_hot"] && node["one_hot"].as<bool>();
             l.resolved["log_target"] = o.log_target;
             l.resolved["one_hot"] = hot;
             l.fn = [o, hot](const Tensor& out, const Tensor& t, Reduction red) {
               KlDivOptions with = o;
               with.reduction = red;
               return kl_div(out, dense_target(out, t, hot), with);
             };
             return l;
           },
           "torch.nn.KLDivLoss: log-probabilities against probabilities (default reduction batchmean)"});
  }
}

}  // namespace

LossRegistry& loss_registry() {
  static LossRegistry* registry = [] {
    auto* r = new LossRegistry("loss");
    add_builtins(*r);
    return r;
  }();
  return *registry;
}

Loss make_loss(const YAML::Node& node, const std::string& file) {
  if (!node || node.IsNull()) return loss_registry().make(YAML::Node("cross_entropy"), file, "train.loss");
  return loss_registry().make(node, file, "train.loss");
}

Tensor one_hot(const Tensor& target, int64_t classes, DType dtype) {
  INGOT_CHECK_AS(is_integral(target.dtype()) && target.dim() == 1, DTypeError,
                 "one_hot: expected class indices [N] of an integer dtype, got {} {}", dtype_name(target.dtype()),
                 target.shape().str());
  NoGradGuard no_grad;
  const int64_t n = target.size(0);
  const Tensor rows = zeros(Shape{n, classes}, dtype, target.device());
  return scatter_add(rows, 1, target.to(DType::I64).unsqueeze(1), ones(Shape{n, 1}, dtype, target.device()));
}

}  // namespace ingot::nn

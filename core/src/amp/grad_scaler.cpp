// GradScaler: the scale lives on the host as a float32 value; unscaling and the inf/NaN check run
// as ops on the gradients' device, with one value read back per step.
#include "ingot/amp/grad_scaler.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"

namespace ingot::amp {

namespace {

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

void check_options(const GradScalerOptions& o) {
  if (!o.enabled) return;
  const auto init = static_cast<float>(o.init_scale);
  INGOT_CHECK_AS(std::isfinite(init) && init > 0.0f, ConfigError,
                 "GradScaler: init_scale is {}, expected a positive finite float32 value (torch's default 65536)",
                 o.init_scale);
  INGOT_CHECK_AS(o.growth_factor > 1.0 && std::isfinite(o.growth_factor), ConfigError,
                 "GradScaler: growth_factor is {}, expected > 1 (torch's default 2)", o.growth_factor);
  INGOT_CHECK_AS(o.backoff_factor > 0.0 && o.backoff_factor < 1.0, ConfigError,
                 "GradScaler: backoff_factor is {}, expected in (0, 1) (torch's default 0.5)", o.backoff_factor);
  INGOT_CHECK_AS(o.growth_interval >= 1, ConfigError,
                 "GradScaler: growth_interval is {}, expected >= 1 (torch's default 2000)", o.growth_interval);
  INGOT_CHECK_AS(o.hysteresis >= 1, ConfigError,
                 "GradScaler: hysteresis is {}, expected >= 1 (1 backs off at every overflow, like torch)",
                 o.hysteresis);
  INGOT_CHECK_AS(o.min_scale >= 0.0 && o.min_scale <= o.init_scale, ConfigError,
                 "GradScaler: min_scale is {}, expected in [0, init_scale = {}] (0 = no floor)", o.min_scale,
                 o.init_scale);
}

template <class T>
T parse_key(const std::map<std::string, std::string>& state, const char* key) {
  const auto it = state.find(key);
  if (it == state.end())
    throw InputError(fmt::format("GradScaler state: '{}' is missing (the checkpoint's scaler/{} metadata)", key, key));
  T value{};
  const std::string& s = it->second;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size())
    throw InputError(fmt::format("GradScaler state: '{}' is not a number: '{}'", key, s));
  return value;
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options)
    : options_(options), scale_(static_cast<float>(options.init_scale)), hysteresis_left_(options.hysteresis) {
  check_options(options_);
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!options_.enabled) return loss;
  INGOT_CHECK_AS(loss.defined() && is_floating(loss.dtype()), DTypeError,
                 "GradScaler::scale: the loss is {}, expected a floating tensor",
                 loss.defined() ? dtype_name(loss.dtype()) : "undefined");
  // torch multiplies by a float32 scale tensor: half losses promote to float32. The scale is a
  // float32 value, exact as a double scalar.
  const Tensor l = is_half(loss.dtype()) ? loss.to(DType::F32) : loss;
  return mul(l, scale_tensor(l.device()));
}

const Tensor& GradScaler::scale_tensor(Device device) const {
  if (!cache_.tensor.defined() || cache_.tensor.device() != device) {
    NoGradGuard no_grad;
    cache_.tensor = Tensor::scalar(static_cast<double>(scale_), DType::F32).to(device);
    cache_.value = scale_;
  } else if (cache_.value != scale_) {
    NoGradGuard no_grad;
    cache_.tensor.fill_(static_cast<double>(scale_));
    cache_.value = scale_;
  }
  return cache_.tensor;
}

bool GradScaler::unscale_(const std::vector<Tensor>& params) {
  if (!options_.enabled) return true;
  INGOT_CHECK(!unscaled_,
              "GradScaler::unscale_: already called since the last update() (torch: \"unscale_() has already been "
              "called on this optimizer since the last update()\"): unscale once per step, then call update()");
  NoGradGuard no_grad;
  // torch: inv_scale = scale.double().reciprocal().float().
  const auto inv = static_cast<float>(1.0 / static_cast<double>(scale_));
  // Sum over every gradient of g * 0: 0 while all are finite, NaN as soon as one holds inf or NaN
  // (inf * 0 = NaN). A sum of squares would overflow to inf on large finite values instead.
  Tensor probe;
  for (const Tensor& p : params) {
    if (!p.defined()) continue;
    const Tensor g = p.grad();
    if (!g.defined() || g.numel() == 0) continue;
    INGOT_CHECK_AS(is_floating(g.dtype()), DTypeError, "GradScaler::unscale_: a gradient is {}, expected floating",
                   dtype_name(g.dtype()));
    // torch's kernel computes in opmath (float32 for half types) and rounds once to the gradient's
    // dtype; a half multiply on some backend could round the product twice or the scalar first.
    const Tensor work = is_half(g.dtype()) ? g.to(DType::F32) : g;
    Tensor part = sum(mul(work, 0.0)).to(DType::F32);  // before the in-place multiply: torch checks the input
    if (probe.defined()) part = add(probe, part.to(probe.device()));
    probe = part;
    if (inv != 1.0f) g.copy_(mul(work, static_cast<double>(inv)));
  }
  unscaled_ = true;
  return !probe.defined() || std::isfinite(probe.item());
}

bool GradScaler::update(bool found_inf) {
  if (!options_.enabled) return true;
  unscaled_ = false;
  if (found_inf) {
    ++skipped_steps_;
    growth_tracker_ = 0;
    if (hysteresis_left_ > 1) {
      --hysteresis_left_;
      return true;
    }
    const auto floor = static_cast<float>(options_.min_scale);
    if (options_.min_scale > 0.0 && scale_ <= floor) return false;
    // float * double in double, rounded to float32 (torch's kernel).
    scale_ = std::max(static_cast<float>(static_cast<double>(scale_) * options_.backoff_factor), floor);
    if (cache_.tensor.defined()) scale_tensor(cache_.tensor.device());
    return true;
  }
  if (++growth_tracker_ >= options_.growth_interval) {
    const auto grown = static_cast<float>(static_cast<double>(scale_) * options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;  // torch: never grow past float32's range to inf
    growth_tracker_ = 0;
    hysteresis_left_ = options_.hysteresis;
  }
  if (cache_.tensor.defined()) scale_tensor(cache_.tensor.device());
  return true;
}

std::map<std::string, std::string> GradScaler::state_dict() const {
  if (!options_.enabled) return {};
  // fmt's "{}" prints the shortest text that reads back as the same double.
  return {{"scale", fmt::format("{}", static_cast<double>(scale_))},
          {"growth_tracker", std::to_string(growth_tracker_)},
          {"hysteresis_left", std::to_string(hysteresis_left_)},
          {"skipped_steps", std::to_string(skipped_steps_)}};
}

void GradScaler::load_state_dict(const std::map<std::string, std::string>& state) {
  if (!options_.enabled) return;
  if (state.empty())
    throw InputError(
        "GradScaler state is empty (saved with loss scaling off?): resume with the configuration it was saved with");
  const auto scale = parse_key<double>(state, "scale");
  const auto growth = parse_key<int64_t>(state, "growth_tracker");
  const auto hysteresis = parse_key<int64_t>(state, "hysteresis_left");
  const auto skipped = parse_key<int64_t>(state, "skipped_steps");
  const auto scale_f = static_cast<float>(scale);
  if (!(std::isfinite(scale_f) && scale_f >= 0.0f && static_cast<double>(scale_f) == scale))
    throw InputError(
        fmt::format("GradScaler state: 'scale' is {}, expected a finite non-negative float32 value", scale));
  if (growth < 0) throw InputError(fmt::format("GradScaler state: 'growth_tracker' is {}, expected >= 0", growth));
  if (hysteresis < 1)
    throw InputError(fmt::format("GradScaler state: 'hysteresis_left' is {}, expected >= 1", hysteresis));
  if (skipped < 0) throw InputError(fmt::format("GradScaler state: 'skipped_steps' is {}, expected >= 0", skipped));
  scale_ = scale_f;
  if (cache_.tensor.defined()) scale_tensor(cache_.tensor.device());
  growth_tracker_ = growth;
  // A smaller configured hysteresis caps what is left (the refill would give no more).
  hysteresis_left_ = std::min(hysteresis, options_.hysteresis);
  skipped_steps_ = skipped;
  unscaled_ = false;
}

}  // namespace ingot::amp

// Observers: what static quantization learns about an activation from the calibration batches —
// the range its u8 parameters cover. minmax and moving_average are torch's MinMaxObserver and
// MovingAverageMinMaxObserver; histogram keeps a histogram over the batches and picks the range by
// torch's HistogramObserver search (least L2 quantization error); percentile clips the range to a
// percentile of the values from the same histogram.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingot/tensor/tensor.h"
#include "qparams_choice.h"

namespace ingot::quant {

class Observer {
 public:
  virtual ~Observer() = default;
  /// Records one batch's values (any device, f32).
  virtual void observe(const Tensor& x) = 0;
  /// The range to quantize, [min, max]; (0, 0) before anything was observed.
  virtual std::pair<float, float> range() const = 0;
  /// Whether observe() ran at least once.
  bool seen() const { return batches_ > 0; }
  int64_t batches() const { return batches_; }
  /// The u8 affine parameters of range() over [qmin, qmax]; torch's default (scale 1, zero point
  /// 0) when nothing was observed.
  AffineParams qparams(int32_t qmin, int32_t qmax) const;

 protected:
  int64_t batches_ = 0;
};

/// The running minimum and maximum (torch.ao.quantization.MinMaxObserver).
class MinMaxObserver final : public Observer {
 public:
  void observe(const Tensor& x) override;
  std::pair<float, float> range() const override { return {min_, max_}; }

 private:
  float min_ = 0.0f, max_ = 0.0f;
};

/// min += c (batch min - min), the same for max; the first batch sets both
/// (MovingAverageMinMaxObserver, averaging_constant c = 0.01 by default).
class MovingAverageObserver final : public Observer {
 public:
  explicit MovingAverageObserver(float averaging_constant = 0.01f) : c_(averaging_constant) {}
  void observe(const Tensor& x) override;
  std::pair<float, float> range() const override { return {min_, max_}; }

 private:
  float c_;
  float min_ = 0.0f, max_ = 0.0f;
};

/// A histogram of `bins` equal bins over the values seen so far; when a batch extends the range,
/// the old counts are spread over the widened bins by overlap. range(): the L2 search (percentile
/// <= 0) or the values' percentiles (100 - p) and p (percentile in (50, 100]).
class HistogramObserver final : public Observer {
 public:
  explicit HistogramObserver(double percentile = 0.0, int64_t bins = 2048);
  void observe(const Tensor& x) override;
  std::pair<float, float> range() const override;

  const std::vector<double>& counts() const { return counts_; }
  /// Replaces the state by a histogram of `counts` over [lo, hi] (as if one batch made it).
  void load(double lo, double hi, std::vector<double> counts);

 private:
  void widen(double lo, double hi);
  /// The value below which a fraction q of the counts lies (linear within a bin).
  double quantile(double q) const;
  /// torch's HistogramObserver._non_linear_param_search over this histogram.
  std::pair<double, double> l2_search() const;
  /// The L2 error of quantizing the histogram with the range of bins [first, last] into 256 levels.
  double l2_error(int64_t first, int64_t last) const;

  double percentile_;
  double lo_ = 0.0, hi_ = 0.0;
  std::vector<double> counts_;
};

/// Which observer a stage uses: "minmax" | "moving_average" | "histogram" | "percentile".
struct ObserverSpec {
  std::string kind = "minmax";
  double percentile = 99.99;  ///< for "percentile"
};
std::unique_ptr<Observer> make_observer(const ObserverSpec& spec);
/// The observer kinds, for config validation.
const std::vector<std::string>& observer_kinds();

}  // namespace ingot::quant

// Observers. minmax and moving_average reduce on the tensor's device and read back two numbers;
// the histogram observers copy each batch to the host.
#include "observer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ingot/base/error.h"
#include "ingot/ops/reduce.h"

namespace ingot::quant {
namespace {

std::pair<float, float> min_max(const Tensor& x) {
  return {static_cast<float>(ingot::min(x).item()), static_cast<float>(ingot::max(x).item())};
}

/// (end^3 - begin^3) / 3 times the density: the L2 error of values spread uniformly over
/// [begin, end] around a level at 0.
double cube_norm(double begin, double end, double density) {
  return density * (end * end * end - begin * begin * begin) / 3.0;
}

}  // namespace

AffineParams Observer::qparams(int32_t qmin, int32_t qmax) const {
  if (!seen()) return {1.0f, 0};
  const auto [lo, hi] = range();
  return affine_qparams(lo, hi, qmin, qmax);
}

void MinMaxObserver::observe(const Tensor& x) {
  if (x.numel() == 0) return;
  const auto [lo, hi] = min_max(x);
  min_ = batches_ == 0 ? lo : std::min(min_, lo);
  max_ = batches_ == 0 ? hi : std::max(max_, hi);
  ++batches_;
}

void MovingAverageObserver::observe(const Tensor& x) {
  if (x.numel() == 0) return;
  const auto [lo, hi] = min_max(x);
  if (batches_ == 0) {
    min_ = lo;
    max_ = hi;
  } else {
    min_ = min_ + c_ * (lo - min_);
    max_ = max_ + c_ * (hi - max_);
  }
  ++batches_;
}

HistogramObserver::HistogramObserver(double percentile, int64_t bins)
    : percentile_(percentile), counts_(static_cast<size_t>(bins), 0.0) {
  INGOT_CHECK(bins >= 2, "HistogramObserver: {} bins (at least 2)", bins);
  INGOT_CHECK(percentile <= 0.0 || (percentile > 50.0 && percentile <= 100.0),
              "HistogramObserver: percentile {} must be in (50, 100] (or 0 for the L2 search)", percentile);
}

void HistogramObserver::observe(const Tensor& x) {
  if (x.numel() == 0) return;
  const std::vector<float> v = x.detach().to_vector<float>();
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  if (batches_ == 0) {
    lo_ = *lo_it;
    hi_ = *hi_it;
  } else {
    widen(std::min<double>(lo_, *lo_it), std::max<double>(hi_, *hi_it));
  }
  const auto bins = static_cast<int64_t>(counts_.size());
  const double width = (hi_ - lo_) / static_cast<double>(bins);
  for (const float f : v) {
    const int64_t b = width > 0.0 ? static_cast<int64_t>((f - lo_) / width) : 0;
    counts_[static_cast<size_t>(std::clamp<int64_t>(b, 0, bins - 1))] += 1.0;
  }
  ++batches_;
}

void HistogramObserver::load(double lo, double hi, std::vector<double> counts) {
  INGOT_CHECK(lo <= hi && counts.size() >= 2, "HistogramObserver::load: {} bins over [{}, {}]", counts.size(), lo, hi);
  lo_ = lo;
  hi_ = hi;
  counts_ = std::move(counts);
  batches_ = 1;
}

void HistogramObserver::widen(double lo, double hi) {
  if (lo == lo_ && hi == hi_) return;
  const auto bins = static_cast<int64_t>(counts_.size());
  std::vector<double> out(counts_.size(), 0.0);
  const double old_w = (hi_ - lo_) / static_cast<double>(bins);
  const double new_w = (hi - lo) / static_cast<double>(bins);
  for (int64_t i = 0; i < bins; ++i) {
    const double c = counts_[static_cast<size_t>(i)];
    if (c == 0.0) continue;
    const double a = lo_ + static_cast<double>(i) * old_w;
    const double b = a + old_w;
    auto first = static_cast<int64_t>((a - lo) / new_w);
    first = std::clamp<int64_t>(first, 0, bins - 1);
    if (old_w == 0.0) {
      out[static_cast<size_t>(first)] += c;
      continue;
    }
    // The old bin's mass is uniform over [a, b): each new bin gets its share of the overlap.
    for (int64_t j = first; j < bins; ++j) {
      const double ja = lo + static_cast<double>(j) * new_w;
      if (ja >= b) break;
      const double overlap = std::min(b, ja + new_w) - std::max(a, ja);
      if (overlap > 0.0) out[static_cast<size_t>(j)] += c * overlap / old_w;
    }
  }
  counts_ = std::move(out);
  lo_ = lo;
  hi_ = hi;
}

double HistogramObserver::quantile(double q) const {
  double total = 0.0;
  for (const double c : counts_) total += c;
  const double target = q * total;
  const double width = (hi_ - lo_) / static_cast<double>(counts_.size());
  double below = 0.0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    const double c = counts_[i];
    if (c > 0.0 && below + c >= target) {
      const double frac = std::clamp((target - below) / c, 0.0, 1.0);
      return lo_ + (static_cast<double>(i) + frac) * width;
    }
    below += c;
  }
  return hi_;
}

double HistogramObserver::l2_error(int64_t first, int64_t last) const {
  constexpr double kLevels = 256.0;  // torch: 2 ** bits of the u8 dtype, reduce_range or not
  const auto bins = static_cast<int64_t>(counts_.size());
  const double width = (hi_ - lo_) / static_cast<double>(bins);
  const double dst = width * static_cast<double>(last - first + 1) / kLevels;
  if (dst == 0.0) return 0.0;
  double norm = 0.0;
  for (int64_t i = 0; i < bins; ++i) {
    const double density = counts_[static_cast<size_t>(i)] / width;
    if (density == 0.0) continue;
    const double begin = static_cast<double>(i - first) * width;
    const double end = begin + width;
    const double dst_begin = std::clamp(std::floor(begin / dst), 0.0, kLevels - 1.0);
    const double dst_end = std::clamp(std::floor(end / dst), 0.0, kLevels - 1.0);
    // the part of the source bin in its first level, the whole levels between, the last level
    norm += cube_norm(begin - (dst_begin + 0.5) * dst, dst / 2.0, density);
    norm += (dst_end - dst_begin - 1.0) * cube_norm(-dst / 2.0, dst / 2.0, density);
    norm += cube_norm(-dst / 2.0, end - (dst_end * dst + dst / 2.0), density);
  }
  return norm;
}

std::pair<double, double> HistogramObserver::l2_search() const {
  const auto bins = static_cast<int64_t>(counts_.size());
  std::vector<double> csum(counts_.size());
  double total = 0.0;
  for (size_t i = 0; i < counts_.size(); ++i) csum[i] = total += counts_[i];
  constexpr double kStep = 1e-5;
  double alpha = 0.0, beta = 1.0, best = std::numeric_limits<double>::infinity();
  int64_t first = 0, last = bins - 1;
  while (alpha < beta) {
    const double next_alpha = alpha + kStep, next_beta = beta - kStep;
    // The first bin in [first, last) whose cumulative count reaches next_alpha (else last), and
    // the last one in (first, last] whose count stays within next_beta (else first): csum is sorted.
    const auto l = std::lower_bound(csum.begin() + first, csum.begin() + last, next_alpha * total) - csum.begin();
    auto r = std::upper_bound(csum.begin() + first + 1, csum.begin() + last + 1, next_beta * total) - csum.begin() - 1;
    r = std::max<int64_t>(r, first);
    int64_t next_first = first, next_last = last;
    if (l - first > last - r) {
      next_first = l;
      alpha = next_alpha;
    } else {
      next_last = r;
      beta = next_beta;
    }
    if (next_first == first && next_last == last) continue;
    const double norm = l2_error(next_first, next_last);
    if (norm > best) break;
    best = norm;
    first = next_first;
    last = next_last;
  }
  const double width = (hi_ - lo_) / static_cast<double>(bins);
  return {lo_ + width * static_cast<double>(first), lo_ + width * static_cast<double>(last + 1)};
}

std::pair<float, float> HistogramObserver::range() const {
  if (batches_ == 0) return {0.0f, 0.0f};
  if (lo_ == hi_) return {static_cast<float>(lo_), static_cast<float>(hi_)};
  if (percentile_ > 0.0) {
    const double p = percentile_ / 100.0;
    return {static_cast<float>(quantile(1.0 - p)), static_cast<float>(quantile(p))};
  }
  const auto [lo, hi] = l2_search();
  return {static_cast<float>(lo), static_cast<float>(hi)};
}

std::unique_ptr<Observer> make_observer(const ObserverSpec& spec) {
  if (spec.kind == "minmax") return std::make_unique<MinMaxObserver>();
  if (spec.kind == "moving_average") return std::make_unique<MovingAverageObserver>();
  if (spec.kind == "histogram") return std::make_unique<HistogramObserver>();
  if (spec.kind == "percentile") {
    INGOT_CHECK_AS(spec.percentile > 50.0 && spec.percentile <= 100.0, ConfigError,
                   "quantize: percentile {} must be in (50, 100]", spec.percentile);
    return std::make_unique<HistogramObserver>(spec.percentile);
  }
  throw ConfigError(
      fmt::format("quantize: unknown observer '{}' (minmax | moving_average | histogram | percentile)", spec.kind));
}

const std::vector<std::string>& observer_kinds() {
  static const std::vector<std::string> kinds{"minmax", "moving_average", "histogram", "percentile"};
  return kinds;
}

}  // namespace ingot::quant

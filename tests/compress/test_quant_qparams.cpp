// The quant plugin's parameter choice against torch.ao.quantization 1.13 (tests/golden/make_quant.py):
// fbgemm's ChooseQuantizationParams, the observers' affine parameters, symmetric per-channel weight
// parameters and int8 weights, all compared exactly; and the histogram observers' behaviour.
#include <catch2/catch.hpp>

#include <cfloat>
#include <filesystem>
#include <string>

#include "ingot/io/safetensors.h"
#include "quant_golden.h"
#include "observer.h"
#include "qparams_choice.h"

namespace ingot::quant {
namespace {

using test_util::golden;
Tensor tensor(const std::string& name) { return test_util::golden_tensor(name); }

template <class T>
std::vector<T> values(const std::string& name) {
  return tensor(name).to_vector<T>();
}

}  // namespace

TEST_CASE("choose_quantization_params matches torch's fbgemm rule exactly", "[quant]") {
  const std::vector<float> mm = values<float>("choose.minmax");
  for (const int rr : {0, 1}) {
    const std::vector<float> scale = values<float>("choose.scale.rr" + std::to_string(rr));
    const std::vector<int32_t> zp = values<int32_t>("choose.zp.rr" + std::to_string(rr));
    for (size_t i = 0; i < scale.size(); ++i) {
      INFO("case " << i << ": [" << mm[2 * i] << ", " << mm[2 * i + 1] << "] reduce_range " << rr);
      const AffineParams p = choose_quantization_params(mm[2 * i], mm[2 * i + 1], 0, 255, rr == 1);
      CHECK(p.scale == scale[i]);
      CHECK(p.zero_point == zp[i]);
    }
  }
}

TEST_CASE("minmax and moving_average observers give torch's parameters exactly", "[quant]") {
  struct Case {
    std::string name;
    std::unique_ptr<Observer> obs;
    bool reduce_range;
  };
  std::vector<Case> cases;
  cases.push_back({"minmax", std::make_unique<MinMaxObserver>(), false});
  cases.push_back({"minmax_rr", std::make_unique<MinMaxObserver>(), true});
  cases.push_back({"moving_average", std::make_unique<MovingAverageObserver>(0.01f), false});
  for (Case& c : cases) {
    for (int b = 0; b < 4; ++b) c.obs->observe(tensor("obs.batch" + std::to_string(b)));
    const auto [qmin, qmax] = activation_range(c.reduce_range);
    const AffineParams p = c.obs->qparams(qmin, qmax);
    INFO(c.name);
    CHECK(p.scale == values<float>("obs." + c.name + ".scale")[0]);
    CHECK(p.zero_point == values<int32_t>("obs." + c.name + ".zp")[0]);
  }
}

TEST_CASE("affine parameters of degenerate ranges follow torch", "[quant]") {
  // all zeros: scale is float32 eps, zero point qmin; all positive: zero point qmin
  const AffineParams z = affine_qparams(0.0f, 0.0f, 0, 255);
  CHECK(z.scale == FLT_EPSILON);
  CHECK(z.zero_point == 0);
  const AffineParams pos = affine_qparams(1.0f, 3.0f, 0, 127);
  CHECK(pos.scale == 3.0f / 127.0f);
  CHECK(pos.zero_point == 0);
  const AffineParams neg = affine_qparams(-2.0f, -1.0f, 0, 255);
  CHECK(neg.zero_point == 255);
  CHECK(symmetric_scale(-0.5f, 0.25f, -128, 127) == 0.5f / 127.5f);
  // An observer that saw nothing gives torch's default.
  MinMaxObserver unused;
  CHECK(unused.qparams(0, 255).scale == 1.0f);
}

TEST_CASE("per-channel symmetric weight parameters and int8 weights match torch exactly", "[quant]") {
  const Tensor w = tensor("perchannel.weight");
  const QParams q = weight_qparams(w, true);
  CHECK(q.dtype == DType::I8);
  CHECK(q.scale.to_vector<float>() == values<float>("perchannel.scale"));
  CHECK(q.zero_point.to_vector<int32_t>() == values<int32_t>("perchannel.zp"));
  CHECK(quantize(w, q).to_vector<int8_t>() == values<int8_t>("perchannel.int8"));
  // per tensor: one scale from the largest magnitude
  const QParams t = weight_qparams(w, false);
  REQUIRE(t.scale.numel() == 1);
  const std::vector<float> v = w.to_vector<float>();
  float amax = 0.0f;
  for (const float f : v) amax = std::max(amax, std::abs(f));
  CHECK(t.scale.to_vector<float>()[0] == amax / 127.5f);
}

TEST_CASE("percentile observer clips rare outliers that minmax keeps", "[quant]") {
  std::vector<float> v(20000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) / 1000.0f;  // uniform in [0, 1)
  v[7] = 50.0f;                                                                         // one outlier
  const Tensor x = Tensor::from_vector(v, Shape{200, 100});
  MinMaxObserver mm;
  HistogramObserver pct(99.9);
  mm.observe(x);
  pct.observe(x);
  CHECK(mm.range().second == 50.0f);
  const auto [lo, hi] = pct.range();
  CHECK(lo == Approx(0.001).margin(0.03));
  CHECK(hi == Approx(0.999).margin(0.03));
}

TEST_CASE("histogram observer keeps every count when batches widen its range", "[quant]") {
  HistogramObserver h(0.0, 64);
  h.observe(Tensor::from_vector<float>({0.0f, 0.25f, 0.5f, 1.0f}, Shape{4}));
  h.observe(Tensor::from_vector<float>({-3.0f, 2.0f, 0.1f}, Shape{3}));
  h.observe(Tensor::from_vector<float>({0.5f, 0.5f}, Shape{2}));  // inside the range: no rebinning
  double total = 0.0;
  for (const double c : h.counts()) total += c;
  CHECK(total == Approx(9.0).epsilon(1e-12));
  CHECK(h.batches() == 3);
}

TEST_CASE("histogram L2 search keeps torch's range on torch's histograms", "[quant]") {
  // Three histograms of normal data with outliers at -8 and 8 (100k, 400k values, and ReLU'd):
  // torch clips the outliers off when the bulk is large enough. The same bins are kept; torch
  // computes in f32 tensors, this observer in double, so the values may differ in the last bits.
  for (int c = 0; c < 3; ++c) {
    const std::string k = "hist." + std::to_string(c);
    const std::vector<float> mm = values<float>(k + ".minmax");
    const std::vector<float> h = values<float>(k + ".histogram");
    HistogramObserver obs;
    obs.load(mm[0], mm[1], std::vector<double>(h.begin(), h.end()));
    const auto [lo, hi] = obs.range();
    const std::vector<float> want = values<float>(k + ".range");
    INFO(k << ": [" << lo << ", " << hi << "] vs torch [" << want[0] << ", " << want[1] << "]");
    CHECK(lo == Approx(want[0]).epsilon(1e-6).margin(1e-6));
    CHECK(hi == Approx(want[1]).epsilon(1e-6));
    const AffineParams p = obs.qparams(0, 255);
    CHECK(p.scale == Approx(values<float>(k + ".scale")[0]).epsilon(1e-6));
    CHECK(p.zero_point == values<int32_t>(k + ".zp")[0]);
  }
  // the first two clip something off: the search is not minmax
  CHECK(values<float>("hist.1.range")[1] < 5.0f);
}

TEST_CASE("make_observer knows the configured kinds and refuses others", "[quant]") {
  for (const std::string& k : observer_kinds()) CHECK(make_observer({k, 99.0}) != nullptr);
  CHECK_THROWS_AS(make_observer({"entropy", 0.0}), ConfigError);
  CHECK_THROWS_AS(make_observer({"percentile", 50.0}), ConfigError);
}

}  // namespace ingot::quant

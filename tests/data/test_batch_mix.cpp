// Mixup / CutMix (data.mix): the Beta draws, the blend of each sample with its neighbour, the
// CutMix box and its label share, the choice between the two, the loader's determinism for any
// worker count, and the config's checks.
#include <catch2/catch.hpp>

#include <cmath>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/batch_mix.h"
#include "ingot/data/data_config.h"
#include "ingot/data/synthetic.h"

using namespace ingot;
using namespace ingot::data;

namespace {

/// A batch of `n` samples [c, h, w]: sample i holds i * 100 + k at flat position k; label i % classes.
void make_batch(int64_t n, int64_t c, int64_t h, int64_t w, int64_t classes, Tensor& inputs, Tensor& targets) {
  inputs = Tensor::empty(Shape{n, c, h, w}, DType::F32);
  targets = Tensor::empty(Shape{n}, DType::I64);
  for (int64_t i = 0; i < n; ++i) {
    targets.data<int64_t>()[i] = i % classes;
    for (int64_t k = 0; k < c * h * w; ++k) inputs.data<float>()[i * c * h * w + k] = static_cast<float>(i * 100 + k);
  }
}

}  // namespace

TEST_CASE("mix: Mixup weights follow Beta(alpha alpha)", "[data][mix]") {
  for (const double alpha : {0.2, 1.0, 4.0}) {
    BatchMix mix;
    mix.mixup_alpha = alpha;
    const int n = 4000;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; ++i) {
      const MixDraw d = draw_mix(mix, 7, i / 100, i % 100, 8, 8);
      REQUIRE(d.kind == MixDraw::Kind::Mixup);
      REQUIRE(d.lambda >= 0.0);
      REQUIRE(d.lambda <= 1.0);
      sum += d.lambda;
      sq += d.lambda * d.lambda;
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    const double expected_var = 1.0 / (4.0 * (2.0 * alpha + 1.0));  // Beta(a, a)
    INFO("alpha " << alpha << " mean " << mean << " var " << var);
    CHECK(std::abs(mean - 0.5) < 4.0 * std::sqrt(expected_var / n));
    CHECK(std::abs(var - expected_var) < 0.1 * expected_var);
  }
}

TEST_CASE("mix: draws are a pure function of seed epoch and batch", "[data][mix]") {
  BatchMix mix;
  mix.mixup_alpha = 0.4;
  mix.cutmix_alpha = 1.0;
  const MixDraw a = draw_mix(mix, 11, 2, 5, 32, 24), b = draw_mix(mix, 11, 2, 5, 32, 24);
  CHECK(a.kind == b.kind);
  CHECK(a.lambda == b.lambda);
  CHECK(a.x0 == b.x0);
  CHECK(a.y1 == b.y1);
  int differ = 0;
  for (int i = 0; i < 20; ++i) differ += draw_mix(mix, 11, 2, i, 32, 24).lambda != a.lambda;
  CHECK(differ >= 19);
}

TEST_CASE("mix: Mixup blends each sample with the previous one and mixes the labels", "[data][mix]") {
  Tensor x, t;
  make_batch(4, 2, 3, 3, 5, x, t);
  const Tensor original = x.clone();
  MixDraw d;
  d.kind = MixDraw::Kind::Mixup;
  d.lambda = 0.7;
  apply_mix(d, 5, x, t);
  REQUIRE(t.dtype() == DType::F32);
  REQUIRE(t.shape() == Shape{4, 5});
  const float* in = original.data<float>();
  const float lam = 0.7f;
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t prev = (i + 3) % 4;
    for (int64_t k = 0; k < 18; ++k)  // torchvision's order: rolled * (1 - lam) + own * lam
      CHECK(x.data<float>()[i * 18 + k] == in[prev * 18 + k] * (1.0f - lam) + in[i * 18 + k] * lam);
    float total = 0.0f;
    for (int64_t c = 0; c < 5; ++c) total += t.data<float>()[i * 5 + c];
    CHECK(total == Approx(1.0f));
    CHECK(t.data<float>()[i * 5 + i % 5] == Approx(0.7f));
    CHECK(t.data<float>()[i * 5 + prev % 5] == Approx(0.3f));
  }
}

TEST_CASE("mix: CutMix pastes the neighbour's box and weighs labels by area", "[data][mix]") {
  BatchMix mix;
  mix.cutmix_alpha = 1.0;
  int boxes = 0;
  for (int64_t batch = 0; batch < 50; ++batch) {
    const MixDraw d = draw_mix(mix, 3, 0, batch, 6, 8);
    REQUIRE(d.kind == MixDraw::Kind::Cutmix);
    REQUIRE(0 <= d.y0);
    REQUIRE(d.y0 <= d.y1);
    REQUIRE(d.y1 <= 6);
    REQUIRE(0 <= d.x0);
    REQUIRE(d.x0 <= d.x1);
    REQUIRE(d.x1 <= 8);
    const double area = static_cast<double>((d.y1 - d.y0) * (d.x1 - d.x0));
    CHECK(d.lambda == Approx(1.0 - area / 48.0));
    boxes += area > 0;
    Tensor x, t;
    make_batch(3, 2, 6, 8, 4, x, t);
    const Tensor original = x.clone();
    apply_mix(d, 4, x, t);
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t prev = (i + 2) % 3;
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t y = 0; y < 6; ++y)
          for (int64_t xx = 0; xx < 8; ++xx) {
            const int64_t k = (c * 6 + y) * 8 + xx;
            const bool inside = y >= d.y0 && y < d.y1 && xx >= d.x0 && xx < d.x1;
            REQUIRE(x.data<float>()[i * 96 + k] == original.data<float>()[(inside ? prev : i) * 96 + k]);
          }
      CHECK(t.data<float>()[i * 4 + i % 4] == Approx(d.lambda));
      CHECK(t.data<float>()[i * 4 + prev % 4] == Approx(1.0 - d.lambda));
    }
  }
  CHECK(boxes > 30);
}

TEST_CASE("mix: prob and switch_prob choose per batch", "[data][mix]") {
  BatchMix mix;
  mix.mixup_alpha = 0.2;
  mix.cutmix_alpha = 1.0;
  mix.prob = 0.6;
  mix.switch_prob = 0.25;
  int none = 0, cut = 0, up = 0;
  for (int64_t i = 0; i < 4000; ++i) {
    const MixDraw d = draw_mix(mix, 5, 1, i, 16, 16);
    none += d.kind == MixDraw::Kind::None;
    cut += d.kind == MixDraw::Kind::Cutmix;
    up += d.kind == MixDraw::Kind::Mixup;
  }
  CHECK(none == Approx(1600).margin(120));
  CHECK(cut == Approx(600).margin(100));
  CHECK(up == Approx(1800).margin(120));
  // An unmixed batch still gets one-hot probabilities: one target type for the whole run.
  Tensor x, t;
  make_batch(2, 1, 2, 2, 3, x, t);
  const Tensor original = x.clone();
  apply_mix(MixDraw{}, 3, x, t);
  CHECK(t.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0});
  CHECK(x.to_vector<float>() == original.to_vector<float>());
}

TEST_CASE("mix: the loader mixes the same for 0 and 2 workers and only the training split", "[data][mix]") {
  const auto ds = synthetic_dataset(SyntheticSpec{64, 3, 8, 8, 10}, 5);
  LoaderOptions o;
  o.batch_size = 8;
  o.shuffle = true;
  o.seed = 99;
  o.mix.mixup_alpha = 0.2;
  o.mix.cutmix_alpha = 1.0;
  DataLoader serial(ds, o);
  o.num_workers = 2;
  DataLoader parallel(ds, o);
  for (int64_t epoch : {0, 1}) {
    serial.begin_epoch(epoch);
    parallel.begin_epoch(epoch);
    while (auto a = serial.next()) {
      auto b = parallel.next();
      REQUIRE(b);
      REQUIRE(a->targets.dtype() == DType::F32);
      REQUIRE(a->targets.shape() == Shape{8, 10});
      CHECK(a->units() == 8);
      CHECK(a->inputs.to_vector<float>() == b->inputs.to_vector<float>());
      CHECK(a->targets.to_vector<float>() == b->targets.to_vector<float>());
    }
  }
  DataConfig c;
  c.dataset = "synthetic";
  c.synthetic = SyntheticSpec{64, 1, 8, 8, 4};
  c.workers = 0;
  c.mix.cutmix_alpha = 1.0;
  DataLoaders loaders = make_data_loaders(c, 1);
  loaders.train->begin_epoch(0);
  CHECK(loaders.train->next()->targets.dtype() == DType::F32);
  loaders.test->begin_epoch(0);
  CHECK(loaders.test->next()->targets.dtype() == DType::I64);
  CHECK(data_config_yaml(c)["mix"]["cutmix_alpha"].as<double>() == 1.0);
}

TEST_CASE("mix: a section that mixes nothing is refused", "[data][mix][config]") {
  const YAML::Node node = YAML::Load("mix: {prob: 0.5}");
  try {
    (void)parse_data_config(node, "run.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("mixes nothing") && Catch::Contains("mixup_alpha"));
  }
  const config::Schema schema = data_schema();
  CHECK_THROWS_AS(schema.validate(YAML::Load("mix: {mixup_alpha: -1}"), "run.yaml", "data"), ConfigError);
}

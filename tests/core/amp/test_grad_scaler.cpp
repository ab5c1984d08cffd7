// GradScaler against torch's GradScaler kernels on committed fixtures (tests/golden/make_amp.py:
// scale trajectories, unscaled gradients and found_inf, compared bit for bit on every CPU
// backend), against hand-computed DeepSpeed sequences (hysteresis, min_scale), and its state_dict,
// double-unscale, disabled and no-gradient behaviour.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ingot/amp/grad_scaler.h"
#include "ingot/base/error.h"
#include "ingot/io/safetensors.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot::amp {
namespace {

struct Golden {
  io::SafetensorsFile file;
  nlohmann::json cases;

  const Tensor& at(const std::string& key) const {
    const auto it = file.tensors.find(key);
    INGOT_CHECK(it != file.tensors.end(), "golden fixture: no tensor '{}'", key);
    return it->second;
  }
};

const Golden& golden() {
  static const Golden g = [] {
    Golden out;
    // INGOT_GOLDEN_DIR in the environment: the fixture beside a GPU bundle (scripts/gpu-bundle).
    const char* dir = std::getenv("INGOT_GOLDEN_DIR");
    out.file = io::load_safetensors(std::filesystem::path(dir != nullptr ? dir : INGOT_GOLDEN_DIR) /
                                    "amp_grad_scaler.safetensors");
    out.cases = nlohmann::json::parse(out.file.metadata.at("cases"));
    return out;
  }();
  return g;
}

GradScalerOptions options_of(const nlohmann::json& j) {
  GradScalerOptions o;
  for (const auto& [key, v] : j.items()) {
    if (key == "init_scale") o.init_scale = v;
    if (key == "growth_factor") o.growth_factor = v;
    if (key == "backoff_factor") o.backoff_factor = v;
    if (key == "growth_interval") o.growth_interval = v;
  }
  return o;
}

// Bit-for-bit equality (every value of f16 / bf16 / f32 / f64 is exact as a double; -0 and 0
// differ, any NaN matches any NaN).
std::string bit_mismatch(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype())
    return fmt::format("dtype {} vs {}", dtype_name(actual.dtype()), dtype_name(expected.dtype()));
  if (!(actual.shape() == expected.shape()))
    return fmt::format("shape {} vs {}", actual.shape().str(), expected.shape().str());
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(e[i])) continue;
    if (std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(e[i]))
      return fmt::format("element {}: {} vs torch's {}", i, a[i], e[i]);
  }
  return "";
}

#define REQUIRE_BITS(actual, expected)                                \
  do {                                                                \
    const std::string mismatch_ = bit_mismatch((actual), (expected)); \
    INFO(mismatch_);                                                  \
    REQUIRE(mismatch_.empty());                                       \
  } while (0)

// The scale is a float32 value: exact equality with torch's float32 scale.
void require_state(const GradScaler& s, const Golden& g, const std::string& name, int step) {
  INFO("step " << step);
  const auto expected_scale = static_cast<double>(g.at(name + "/scale").to_vector<float>()[static_cast<size_t>(step)]);
  REQUIRE(std::bit_cast<uint64_t>(s.get_scale()) == std::bit_cast<uint64_t>(expected_scale));
  REQUIRE(s.growth_tracker() == g.at(name + "/tracker").to_vector<int64_t>()[static_cast<size_t>(step)]);
}

using test::cpu_backends;

using test::RestoreBackends;

// Replays the "unscale" fixture cases with the parameters and gradients on `device`: the scaled
// loss, found_inf and every unscaled gradient bit for bit, then the scale after each update.
int run_unscale_cases(Device device) {
  const Golden& g = golden();
  int cases = 0;
  for (const auto& c : g.cases) {
    if (c["kind"] != "unscale") continue;
    const std::string name = c["name"];
    INFO("case " << name);
    GradScaler s(options_of(c["options"]));
    const int steps = c["steps"];
    const std::vector<uint8_t> flags = g.at(name + "/flags").to_vector<uint8_t>();
    std::vector<Tensor> params;
    for (size_t k = 0; k < c["dtypes"].size(); ++k) {
      const Tensor& g0 = g.at(name + "/grad.0." + std::to_string(k));
      params.push_back(zeros(g0.shape(), g0.dtype(), device));
      params.back().set_requires_grad(true);
    }
    for (int step = 0; step < steps; ++step) {
      INFO("step " << step);
      const std::string at = "." + std::to_string(step);
      // torch: 0-dim loss * float32 [1] scale tensor = float32 [1]; here a 0-dim float32.
      const Tensor scaled = s.scale(g.at(name + "/loss" + at).to(device));
      REQUIRE(scaled.device() == device);
      REQUIRE_BITS(scaled.to(Device::cpu()).reshape(Shape{1}), g.at(name + "/scaled_loss" + at));
      for (size_t k = 0; k < params.size(); ++k)
        params[k].set_grad(g.at(name + "/grad" + at + "." + std::to_string(k)).to(device).clone());
      const bool ok = s.unscale_(params);
      REQUIRE(ok == (flags[static_cast<size_t>(step)] == 0));
      for (size_t k = 0; k < params.size(); ++k) {
        INFO("param " << k);
        REQUIRE(params[k].grad().device() == device);
        REQUIRE_BITS(params[k].grad().to(Device::cpu()), g.at(name + "/unscaled" + at + "." + std::to_string(k)));
      }
      REQUIRE(s.update(!ok));
      require_state(s, g, name, step);
    }
    ++cases;
  }
  return cases;
}

// One update per flag; (scale, growth_tracker, hysteresis_left, returned value) after each.
struct Expected {
  bool overflow;
  double scale;
  int64_t tracker;
  int64_t hysteresis_left;
  bool ok = true;
};

void replay(GradScaler& s, const std::vector<Expected>& seq) {
  int64_t overflows = s.skipped_steps();
  for (size_t i = 0; i < seq.size(); ++i) {
    INFO("update " << i << (seq[i].overflow ? " (overflow)" : " (clean)"));
    REQUIRE(s.update(seq[i].overflow) == seq[i].ok);
    overflows += seq[i].overflow ? 1 : 0;
    CHECK(s.get_scale() == seq[i].scale);
    CHECK(s.growth_tracker() == seq[i].tracker);
    CHECK(s.hysteresis_left() == seq[i].hysteresis_left);
    CHECK(s.skipped_steps() == overflows);
  }
}

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("GradScaler golden: the scale trajectory matches torch's _amp_update_scale_", "[amp][golden]") {
  const Golden& g = golden();
  int cases = 0;
  for (const auto& c : g.cases) {
    if (c["kind"] != "update") continue;
    const std::string name = c["name"];
    INFO("case " << name);
    GradScaler s(options_of(c["options"]));
    const std::vector<uint8_t> flags = g.at(name + "/flags").to_vector<uint8_t>();
    REQUIRE(flags.size() == c["steps"].get<size_t>());
    int64_t overflows = 0;
    for (size_t i = 0; i < flags.size(); ++i) {
      REQUIRE(s.update(flags[i] != 0));
      overflows += flags[i];
      require_state(s, g, name, static_cast<int>(i));
    }
    CHECK(s.skipped_steps() == overflows);
    ++cases;
  }
  CHECK(cases == 6);
}

TEST_CASE("GradScaler golden: scale and unscale_ match torch bit for bit on every CPU backend", "[amp][golden]") {
  RestoreBackends restore;
  for (const std::string& backend : cpu_backends()) {
    INFO("backend " << backend);
    BackendRegistry::instance().restrict_to({backend});
    CHECK(run_unscale_cases(Device::cpu()) == 4);
  }
}

TEST_CASE("GradScaler golden: scale and unscale_ match torch bit for bit on each accelerator", "[amp][golden]") {
  PluginLoader::instance().load_all();
  int devices = 0;
  for (const auto& b : BackendRegistry::instance().backends()) {
    if (b->device_kind() == DeviceKind::CPU || b->device_count() < 1) continue;
    const Device device{b->device_kind(), 0};
    INFO("device " << device.str());
    CHECK(run_unscale_cases(device) == 4);
    ++devices;
  }
  if (devices == 0) test::skip("no accelerator backend with a device here");
}

// DeepSpeed's DynamicLossScaler.update_scale (deepspeed/runtime/fp16/loss_scaler.py), defaults
// consecutive_hysteresis=False and raise_error_at_min_scale=True: on overflow, when
// delayed_shift == 1 or cur_hysteresis == 1 the scale becomes max(scale / factor, min_scale) —
// raising "Current loss scale already at minimum" instead when it already equals min_scale —
// otherwise cur_hysteresis -= 1; every overflow restarts the growth window; cur_hysteresis is set
// back to delayed_shift only at a growth (scale_window clean iterations since the last overflow).
TEST_CASE("GradScaler: hysteresis follows DeepSpeed's delayed shift", "[amp][hysteresis]") {
  GradScalerOptions o;
  o.init_scale = 1024.0;
  o.growth_interval = 3;
  o.hysteresis = 2;
  GradScaler s(o);
  REQUIRE(s.hysteresis_left() == 2);
  replay(s, {
                {true, 1024, 0, 1},   // first overflow: hysteresis 2 -> 1, scale kept
                {false, 1024, 1, 1},  // a clean step does not refill the hysteresis
                {true, 512, 0, 1},    // hysteresis 1: back off
                {false, 512, 1, 1},  {false, 512, 2, 1}, {false, 1024, 0, 2},  // growth refills the hysteresis
                {true, 1024, 0, 1},  {true, 512, 0, 1},  {true, 256, 0, 1},  // each further overflow in a row backs off
                {false, 256, 1, 1},  {false, 256, 2, 1}, {false, 512, 0, 2},  {false, 512, 1, 2},
                {true, 512, 0, 1},  // restarts the growth window, hysteresis absorbs it
                {false, 512, 1, 1},  {false, 512, 2, 1}, {false, 1024, 0, 2}, {true, 1024, 0, 1},
                {false, 1024, 1, 1}, {true, 512, 0, 1},
            });

  GradScalerOptions three;
  three.init_scale = 64.0;
  three.growth_interval = 2;
  three.hysteresis = 3;
  GradScaler t(three);
  replay(t, {
                {true, 64, 0, 2},
                {true, 64, 0, 1},
                {true, 32, 0, 1},
                {true, 16, 0, 1},
                {false, 16, 1, 1},
                {false, 32, 0, 3},
                {true, 32, 0, 2},
            });
}

TEST_CASE("GradScaler: min_scale floors the backoff and stops at the floor like DeepSpeed", "[amp][min_scale]") {
  GradScalerOptions o;
  o.init_scale = 8.0;
  o.min_scale = 2.0;
  o.growth_interval = 2;
  GradScaler s(o);
  replay(s, {
                {true, 4, 0, 1},
                {true, 2, 0, 1},
                {true, 2, 0, 1, false},  // already at min_scale: stays, the caller stops the run
                {false, 2, 1, 1},
                {false, 4, 0, 1},
                {true, 2, 0, 1},
                {true, 2, 0, 1, false},
            });

  // DeepSpeed: max(scale / factor, min_scale): 6 -> 5 (not 3), then 5 is the floor.
  o.init_scale = 12.0;
  o.min_scale = 5.0;
  GradScaler odd(o);
  replay(odd, {{true, 6, 0, 1}, {true, 5, 0, 1}, {true, 5, 0, 1, false}});

  // With hysteresis the floor is reached only by overflows that back off.
  o.init_scale = 4.0;
  o.min_scale = 2.0;
  o.hysteresis = 2;
  GradScaler h(o);
  replay(h, {{true, 4, 0, 1}, {true, 2, 0, 1}, {true, 2, 0, 1, false}});

  // No floor (torch): the scale halves into float32's subnormals and to 0, never stopping.
  GradScalerOptions none;
  none.init_scale = std::ldexp(1.0, -148);
  GradScaler z(none);
  replay(z, {{true, std::ldexp(1.0, -149), 0, 1}, {true, 0, 0, 1}, {true, 0, 0, 1}});
}

TEST_CASE("GradScaler: a state_dict restored mid-trajectory continues identically", "[amp][state]") {
  const Golden& g = golden();
  for (const std::string name : {"odd_factors", "interval3"}) {
    INFO("case " << name);
    const auto c = *std::find_if(g.cases.begin(), g.cases.end(), [&](const auto& j) { return j["name"] == name; });
    GradScalerOptions o = options_of(c["options"]);
    o.hysteresis = 2;  // hysteresis_left takes part too
    const std::vector<uint8_t> flags = g.at(name + "/flags").to_vector<uint8_t>();
    for (size_t cut : {size_t{7}, size_t{17}, size_t{29}}) {
      INFO("restored after update " << cut);
      GradScaler a(o);
      for (size_t i = 0; i < cut; ++i) a.update(flags[i] != 0);
      const auto state = a.state_dict();
      CHECK(state.size() == 4);
      GradScaler b(o);
      b.load_state_dict(state);
      CHECK(b.state_dict() == state);
      for (size_t i = cut; i < flags.size(); ++i) {
        INFO("update " << i);
        REQUIRE(a.update(flags[i] != 0) == b.update(flags[i] != 0));
        REQUIRE(std::bit_cast<uint64_t>(a.get_scale()) == std::bit_cast<uint64_t>(b.get_scale()));
        REQUIRE(a.growth_tracker() == b.growth_tracker());
        REQUIRE(a.hysteresis_left() == b.hysteresis_left());
        REQUIRE(a.skipped_steps() == b.skipped_steps());
      }
    }
  }
  // A float32 scale that needs all 9 significant digits survives the text form.
  GradScalerOptions o;
  o.init_scale = 1000.0;
  o.growth_factor = 3.0;
  o.backoff_factor = 0.3;
  o.growth_interval = 1;
  GradScaler a(o);
  for (bool f : {true, true, false, true, false, false, true}) a.update(f);
  REQUIRE(a.get_scale() != std::round(a.get_scale()));
  GradScaler b(o);
  b.load_state_dict(a.state_dict());
  CHECK(std::bit_cast<uint64_t>(b.get_scale()) == std::bit_cast<uint64_t>(a.get_scale()));
  CHECK(b.skipped_steps() == 4);
}

TEST_CASE("GradScaler: load_state_dict names the bad key", "[amp][state]") {
  GradScaler s;
  const auto good = s.state_dict();
  for (const char* key : {"scale", "growth_tracker", "hysteresis_left", "skipped_steps"}) {
    auto missing = good;
    missing.erase(key);
    CHECK_THAT(error_of<InputError>([&] { s.load_state_dict(missing); }),
               Catch::Contains(fmt::format("'{}' is missing", key)));
    auto bad = good;
    bad[key] = "12x";
    CHECK_THAT(error_of<InputError>([&] { s.load_state_dict(bad); }), Catch::Contains(fmt::format("'{}'", key)));
  }
  auto negative = good;
  negative["growth_tracker"] = "-1";
  CHECK_THAT(error_of<InputError>([&] { s.load_state_dict(negative); }), Catch::Contains("'growth_tracker'"));
  auto inf = good;
  inf["scale"] = "inf";
  CHECK_THAT(error_of<InputError>([&] { s.load_state_dict(inf); }), Catch::Contains("'scale'"));
  auto not_f32 = good;
  not_f32["scale"] = "0.1";  // not a float32 value: not written by state_dict()
  CHECK_THAT(error_of<InputError>([&] { s.load_state_dict(not_f32); }), Catch::Contains("'scale'"));
  CHECK_THAT(error_of<InputError>([&] { s.load_state_dict({}); }), Catch::Contains("empty"));
  CHECK(s.get_scale() == 65536.0);  // nothing half-loaded
}

TEST_CASE("GradScaler: a second unscale_ before update throws", "[amp]") {
  GradScaler s;
  const Tensor p = zeros(Shape{3});
  p.set_requires_grad(true);
  p.set_grad(full(Shape{3}, 65536.0));
  REQUIRE(s.unscale_({p}));
  CHECK(p.grad().to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK_THAT(error_of<Error>([&] { s.unscale_({p}); }), Catch::Contains("already been called"));
  CHECK(p.grad().to_vector<float>() == std::vector<float>{1, 1, 1});  // not unscaled twice
  REQUIRE(s.update(false));
  REQUIRE(s.unscale_({p}));
}

TEST_CASE("GradScaler: disabled, it changes nothing", "[amp]") {
  GradScalerOptions o;
  o.enabled = false;
  GradScaler s(o);
  const Tensor loss = Tensor::scalar(3.0, DType::F16);
  const Tensor scaled = s.scale(loss);
  CHECK(scaled.same_tensor(loss));
  const Tensor p = zeros(Shape{2});
  p.set_requires_grad(true);
  p.set_grad(Tensor::from_vector<float>({INFINITY, 5.0f}, Shape{2}));
  CHECK(s.unscale_({p}));
  CHECK(s.unscale_({p}));  // no once-per-step bookkeeping either
  CHECK(p.grad().to_vector<float>() == std::vector<float>{INFINITY, 5.0f});
  CHECK(s.update(true));
  CHECK(s.get_scale() == 1.0);
  CHECK(s.skipped_steps() == 0);
  CHECK(s.state_dict().empty());
  s.load_state_dict({});
}

TEST_CASE("GradScaler: parameters without gradients are skipped", "[amp]") {
  GradScaler s;
  const Tensor a = zeros(Shape{2});
  a.set_requires_grad(true);
  const Tensor b = zeros(Shape{0});
  b.set_requires_grad(true);
  b.set_grad(zeros(Shape{0}));
  const Tensor c = zeros(Shape{2});
  c.set_requires_grad(true);
  c.set_grad(Tensor::from_vector<float>({131072.0f, -65536.0f}, Shape{2}));
  CHECK(s.unscale_({a, b, Tensor(), c}));
  CHECK_FALSE(a.grad().defined());
  CHECK(c.grad().to_vector<float>() == std::vector<float>{2.0f, -1.0f});
  REQUIRE(s.update(false));
  CHECK(s.unscale_({}));
  REQUIRE(s.update(false));
  CHECK(s.unscale_({a}));
}

TEST_CASE("GradScaler: the scaled loss backpropagates scaled gradients", "[amp]") {
  GradScalerOptions o;
  o.init_scale = 1024.0;  // the cast back to float16 keeps the loss's gradient finite
  GradScaler s(o);
  const Tensor w = Tensor::from_vector<float>({0.5f, -2.0f, 3.0f}, Shape{3});
  w.set_requires_grad(true);
  const Tensor loss = sum(mul(w, w)).to(DType::F16);
  const Tensor scaled = s.scale(loss);
  CHECK(scaled.dtype() == DType::F32);
  scaled.backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().to_vector<float>() == std::vector<float>{1024.0f, -4096.0f, 6144.0f});  // 2 w * 2^10
  REQUIRE(s.unscale_({w}));
  CHECK(w.grad().to_vector<float>() == std::vector<float>{1.0f, -4.0f, 6.0f});
}

TEST_CASE("GradScaler: options out of range are refused", "[amp]") {
  const auto refused = [](auto edit) {
    GradScalerOptions o;
    edit(o);
    return error_of<ConfigError>([&] { GradScaler s(o); });
  };
  CHECK_THAT(refused([](auto& o) { o.growth_factor = 1.0; }), Catch::Contains("growth_factor"));
  CHECK_THAT(refused([](auto& o) { o.backoff_factor = 1.0; }), Catch::Contains("backoff_factor"));
  CHECK_THAT(refused([](auto& o) { o.backoff_factor = 0.0; }), Catch::Contains("backoff_factor"));
  CHECK_THAT(refused([](auto& o) { o.growth_interval = 0; }), Catch::Contains("growth_interval"));
  CHECK_THAT(refused([](auto& o) { o.hysteresis = 0; }), Catch::Contains("hysteresis"));
  CHECK_THAT(refused([](auto& o) { o.init_scale = 1e39; }), Catch::Contains("init_scale"));
  CHECK_THAT(refused([](auto& o) { o.min_scale = 1e6; }), Catch::Contains("min_scale"));
  GradScalerOptions off;
  off.enabled = false;
  off.growth_factor = 0.0;  // not checked while loss scaling is off
  GradScaler fine(off);
  CHECK_FALSE(fine.enabled());
}

}  // namespace ingot::amp

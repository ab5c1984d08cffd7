// Saving and loading int8 models (quantize -> save -> load into a fresh f32 model -> the same
// outputs; ~4x smaller files), files that do not fit, and the stage's config errors.
#include <catch2/catch.hpp>

#include <filesystem>

#include "dynamic_linear.h"
#include "ingot/io/safetensors.h"
#include "quant_load.h"
#include "quant_test_util.h"
#include "quantize_stage.h"
#include "quantized_layers.h"

namespace ingot::quant {
namespace {

namespace fs = std::filesystem;

/// A folder of its own for the test, removed afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(fs::temp_directory_path() / ("ingot_quant_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

YAML::Node yaml(const std::string& text) { return YAML::Load(text); }

}  // namespace

TEST_CASE("static int8 save -> load into a fresh f32 model gives identical outputs, ~4x smaller", "[quant]") {
  TempDir dir("static");
  // the Fashion-MNIST CNN's shape: the f32 file is dominated by weights
  auto model = test_util::small_cnn(4, 32, 128, 28);
  io::save_safetensors(dir.path / "f32.safetensors", model->state_dict());
  auto calib = test_util::loader(64, 0, 32, 28);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib, {}, {}, 2);
  conv->install({true, true, false, true});  // one layer f32, so that both kinds are saved
  const nn::StateDict state = model->state_dict();
  io::save_safetensors(dir.path / "int8.safetensors", state);
  CHECK(std::find_if(state.begin(), state.end(), [](const auto& p) { return p.first == "1.running_mean"; }) ==
        state.end());

  auto fresh = test_util::small_cnn(99, 32, 128, 28);  // other weights: all must come from the file
  const LoadSummary r = load_quantized(*fresh, dir.path / "int8.safetensors");
  CHECK(r.layers == 4);
  CHECK(r.int8 == 3);
  CHECK(dynamic_cast<const QuantizedLayer*>(fresh->get_submodule("4").get()) != nullptr);
  CHECK(dynamic_cast<const QuantizedLayer*>(fresh->get_submodule("0").get())->requantizes());
  auto test_set = test_util::loader(64, 1, 32, 28);
  CHECK(test_util::outputs(*fresh, *test_set) == test_util::outputs(*model, *test_set));

  conv->install_all();
  io::save_safetensors(dir.path / "all.safetensors", model->state_dict());
  const double ratio = static_cast<double>(fs::file_size(dir.path / "f32.safetensors")) /
                       static_cast<double>(fs::file_size(dir.path / "all.safetensors"));
  INFO("f32 / int8 file size " << ratio);
  CHECK(ratio > 3.7);
  CHECK(ratio < 4.0);
}

TEST_CASE("dynamic int8 save -> load gives identical outputs", "[quant]") {
  TempDir dir("dynamic");
  auto model = test_util::small_cnn(4);
  std::vector<Unit> units = find_units(*model, true);
  fold_units(*model, units);
  Converter c(*model, units, QuantOptions{true, true, true});
  c.install_all();
  io::save_safetensors(dir.path / "dyn.safetensors", model->state_dict());
  auto fresh = test_util::small_cnn(5);
  const LoadSummary r = load_quantized(*fresh, dir.path / "dyn.safetensors");
  CHECK(r.dynamic == 2);
  const auto* q = dynamic_cast<const DynamicQuantizedLinear*>(fresh->get_submodule("9").get());
  REQUIRE(q != nullptr);
  CHECK(q->input_range().second == 127);
  auto test_set = test_util::loader(64, 1);
  CHECK(test_util::outputs(*fresh, *test_set) == test_util::outputs(*model, *test_set));
}

TEST_CASE("loading refuses files that do not fit the model", "[quant]") {
  TempDir dir("bad");
  auto model = test_util::small_cnn(4);
  auto calib = test_util::loader(64, 0);
  std::vector<Unit> units;
  auto conv = test_util::quantize_static(*model, units, *calib, {}, {}, 1);
  io::save_safetensors(dir.path / "ok.safetensors", model->state_dict());

  // another architecture: its weights are missing
  auto wider = test_util::small_cnn(4, 16);
  CHECK_THROWS_AS(load_quantized(*wider, dir.path / "ok.safetensors"), InputError);
  // BN tensors beside an int8 conv that should have absorbed them
  auto f = io::load_safetensors(dir.path / "ok.safetensors");
  auto fresh = test_util::small_cnn(4);
  for (const auto& [name, t] : fresh->state_dict())
    if (name.rfind("1.", 0) == 0) f.tensors[name] = t;
  CHECK_THROWS_AS(load_quantized(*test_util::small_cnn(4), f, "edited.safetensors"), InputError);
  // a u8 output nobody takes: the file's next layer is f32
  conv->install_all();
  std::map<std::string, Tensor> mixed;
  for (const auto& [name, t] : model->state_dict())
    if (name.rfind("4.", 0) != 0) mixed[name] = t.clone();
  conv->install({true, false, true, true});
  for (const auto& [name, t] : model->state_dict())
    if (name.rfind("4.", 0) == 0) mixed[name] = t.clone();
  io::save_safetensors(dir.path / "mixed.safetensors", mixed);
  try {
    load_quantized(*test_util::small_cnn(4), dir.path / "mixed.safetensors");
    FAIL("loaded a file whose u8 output has no taker");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("hands on u8"));
  }
}

TEST_CASE("quantize stage config: defaults and errors", "[quant]") {
  const QuantizeConfig d = parse_quantize_config(yaml("{type: quantize}"), "c.yaml");
  CHECK_FALSE(d.options.dynamic);
  CHECK(d.options.per_channel);
  CHECK(d.calibration_batches == 32);
  CHECK(d.observer.kind == "minmax");
  CHECK_FALSE(d.tolerance);
  const QuantizeConfig p = parse_quantize_config(yaml("{type: quantize, calibration: {batches: 8, observer: "
                                                      "percentile, percentile: 99.9}, tolerance: {absolute: 0.005}}"),
                                                 "c.yaml");
  CHECK(p.observer.percentile == 99.9);
  CHECK(*p.tolerance == 0.005);

  const auto refused = [](const std::string& text, const std::string& says) {
    INFO(text);
    try {
      const YAML::Node n = yaml(text);
      quantize_schema().validate(n, "c.yaml", "stages[1]");
      parse_quantize_config(n, "c.yaml");
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains(says));
    }
  };
  refused("{mode: dynamic, calibration: {batches: 4}}", "applies to mode static");
  refused("{calibration: {observer: minmax, percentile: 99}}", "'percentile' applies to observer percentile");
  refused("{calibration: {observer: entropy}}", "entropy");
  refused("{mode: half}", "half");
  refused("{tolerance: {relative: 0.1}}", "relative");
  refused("{tolerance: {absolute: 2}}", "absolute");
  refused("{load: /nonexistent/int8.safetensors}", "no file /nonexistent/int8.safetensors");
  refused("{load: c.yaml, mode: static}", "'mode' does not go with 'load'");
  refused("{calibration: {batches: 0}}", "batches");
  refused("{calibration: {observer: percentile, percentile: 40}}", "percentile");
}

}  // namespace ingot::quant

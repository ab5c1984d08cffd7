// Dynamic quantization against torch.ao.quantization.quantize_dynamic 1.13 (per-channel qint8
// weights, fbgemm's reduce_range activations): an MLP 64-32-10 with ReLU (make_quant.py).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "converter.h"
#include "dynamic_linear.h"
#include "ingot/base/grad_mode.h"
#include "ingot/io/safetensors.h"
#include "quant_golden.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/sequential.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "layer_units.h"
#include "test_support.h"

namespace ingot::quant {
namespace {

using test_util::golden;
Tensor tensor(const std::string& name) { return test_util::golden_tensor(name); }

std::shared_ptr<nn::Sequential> golden_mlp() {
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Linear>(64, 32), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(32, 10)});
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : golden().tensors)
    if (name.rfind("dyn.state.", 0) == 0) state[name.substr(10)] = t;
  m->load_state_dict(state);
  m->eval();
  return m;
}

/// Converts `model` as the dynamic stage does (all Linear layers).
void quantize_dynamic(nn::Module& model, bool reduce_range, std::vector<Unit>& units) {
  units = find_units(model, true);
  fold_units(model, units);
  Converter c(model, units, QuantOptions{true, true, reduce_range});
  c.install_all();
  REQUIRE(c.int8_count() == 2);
}

}  // namespace

TEST_CASE("dynamic quantization matches torch's int8 weights, scales and outputs", "[quant]") {
  auto model = golden_mlp();
  std::vector<Unit> units;
  quantize_dynamic(*model, true, units);
  for (const int i : {0, 2}) {
    const auto* q = dynamic_cast<const DynamicQuantizedLinear*>((*model)[i].get());
    REQUIRE(q != nullptr);
    INFO("layer " << i);
    CHECK(q->weight().to_vector<int8_t>() == tensor(fmt::format("dyn.{}.weight_int8", i)).to_vector<int8_t>());
    CHECK(q->weight_qparams().scale.to_vector<float>() ==
          tensor(fmt::format("dyn.{}.weight_scale", i)).to_vector<float>());
    CHECK(q->input_range() == std::pair<int32_t, int32_t>{0, 127});
  }
  NoGradGuard no_grad;
  const Tensor x = tensor("dyn.input");
  const Tensor y = (*model)(x);
  const Tensor want = tensor("dyn.output");
  // Our arithmetic is torch's: the same u8 inputs, i32 sums and f32 epilogue. torch's oneDNN kernel
  // takes the input scale as 1 / scale computed in double and folds the two scales into one f32
  // multiplier, so an output may differ by a few f32 ulps (1e-5 relative covers them). Such a
  // difference in the hidden layer can, rarely, flip the rounding of one hidden u8 value, which
  // moves an output by one quantization step of the second layer's input times its weight: at most
  // hidden_scale * max |w2| (twice that allowed, for two flips in one output).
  const auto* second = dynamic_cast<const DynamicQuantizedLinear*>((*model)[2].get());
  const Tensor hidden = (*model)[1]->forward((*model)[0]->forward(x));
  const double step = second->input_qparams(hidden).scale.item() * max(abs(tensor("dyn.state.2.weight"))).item();
  INGOT_REQUIRE_CLOSE(y, want, 2.0 * step, 1e-5);
  // ... and flips are rare: nearly every output matches to the ulps alone.
  const std::vector<float> a = y.to_vector<float>(), b = want.to_vector<float>();
  size_t tight = 0;
  for (size_t i = 0; i < a.size(); ++i) tight += std::abs(a[i] - b[i]) <= 1e-6 + 1e-5 * std::abs(b[i]) ? 1 : 0;
  CHECK(tight >= a.size() * 9 / 10);
  // and int8 is not f32: the comparison can fail
  CHECK(test::excess_error(y, tensor("dyn.output_f32"), 1e-5, 1e-5) > 0.0);
}

TEST_CASE("dynamic quantization without reduce_range uses the full u8 range", "[quant]") {
  auto model = golden_mlp();
  std::vector<Unit> units;
  quantize_dynamic(*model, false, units);
  const auto* q = dynamic_cast<const DynamicQuantizedLinear*>((*model)[0].get());
  REQUIRE(q != nullptr);
  CHECK(q->input_range() == std::pair<int32_t, int32_t>{0, 255});
  const Tensor x = tensor("dyn.input");
  const QParams in = q->input_qparams(x);
  const std::vector<float> v = x.to_vector<float>();
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  CHECK(in.scale.to_vector<float>()[0] == choose_quantization_params(*lo, *hi, 0, 255, false).scale);
  // twice the levels of reduce_range: closer to f32 than torch's 7-bit result
  NoGradGuard no_grad;
  const Tensor y = (*model)(x);
  const double err8 = test::excess_error(y, tensor("dyn.output_f32"), 0.0, 0.0);
  const double err7 = test::excess_error(tensor("dyn.output"), tensor("dyn.output_f32"), 0.0, 0.0);
  CHECK(err8 < err7);
}

}  // namespace ingot::quant

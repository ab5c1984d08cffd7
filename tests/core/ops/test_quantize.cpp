// Quantized ops: quantize / dequantize against hand-computed values and torch 1.13's results
// (tests/golden/make_quantize.py), quantized linear and convolution against the float ops on
// dequantized values, max pooling of quantized values, and the argument errors.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ingot/io/safetensors.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/pool.h"
#include "ingot/ops/quantize.h"
#include "test_support.h"

namespace ingot {
namespace {

using F = std::vector<float>;
using I = std::vector<int32_t>;

Tensor f32(const F& v, const Shape& s) { return Tensor::from_vector(v, s); }
I ints(const Tensor& t) { return t.to(DType::I32).to_vector<int32_t>(); }

TEST_CASE("quantize per tensor: ties to even, zero point after rounding, clamping", "[ops][quantize]") {
  const Tensor x = f32({-1.25f, -0.75f, 0.25f, 0.75f, 1.25f, 0.3f, 1000.0f, -1000.0f}, {8});
  const Tensor q = quantize(x, QParams::per_tensor(0.5, 10, DType::U8));
  CHECK(q.dtype() == DType::U8);
  CHECK(q.shape() == Shape{8});
  // -2.5 -> -2, -1.5 -> -2, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 0.6 -> 1, then + 10 and clamp to [0, 255]
  CHECK(ints(q) == I{8, 8, 10, 12, 12, 11, 255, 0});
  const Tensor qi = quantize(x, QParams::per_tensor(0.5, -3, DType::I8));
  CHECK(qi.dtype() == DType::I8);
  CHECK(ints(qi) == I{-5, -5, -3, -1, -1, -2, 127, -128});
}

TEST_CASE("quantize clamps to quant_min and quant_max", "[ops][quantize]") {
  QParams p = QParams::per_tensor(1.0, 0, DType::U8);
  p.quant_max = 127;  // torch's reduce_range activations
  CHECK(ints(quantize(f32({-3, 5, 126.5f, 200}, {4}), p)) == I{0, 5, 126, 127});
  QParams s = QParams::per_tensor(1.0, 0, DType::I8);
  s.quant_min = -127;
  CHECK(ints(quantize(f32({-200, -127, 3}, {3}), s)) == I{-127, -127, 3});
  p.quant_max = 300;
  CHECK_THROWS_AS(quantize(f32({1}, {1}), p), InputError);
}

TEST_CASE("quantize multiplies by the f32 reciprocal of the scale (fbgemm's rounding)", "[ops][quantize]") {
  // 0.273939937 * (1 / 0.00214854861) is exactly 127.5 in f32 (-> 128); 0.273939937 / 0.00214854861
  // would be 127.49999 (-> 127)
  const Tensor q = quantize(f32({0.273939937f}, {1}), QParams::per_tensor(0.00214854861, 0, DType::U8));
  CHECK(ints(q) == I{128});
}

TEST_CASE("quantize and dequantize per channel along axis 0 and 1", "[ops][quantize]") {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const QParams rows = QParams::per_channel_of({1.0f, 0.5f}, {0, 1}, 0, DType::I8);
  CHECK(rows.per_channel());
  const Tensor q0 = quantize(x, rows);
  CHECK(ints(q0) == I{1, 2, 3, 9, 11, 13});
  CHECK(dequantize(q0, rows).to_vector<float>() == F{1, 2, 3, 4, 5, 6});
  const QParams cols = QParams::per_channel_of({1.0f, 2.0f, 4.0f}, {0, 10, 20}, 1, DType::U8);
  const Tensor q1 = quantize(x, cols);
  CHECK(ints(q1) == I{1, 11, 21, 4, 12, 22});  // 2/2 = 1, 3/4 = 0.75 -> 1, 5/2 = 2.5 -> 2, 6/4 = 1.5 -> 2
  CHECK(dequantize(q1, cols).to_vector<float>() == F{1, 2, 4, 4, 4, 8});
  QParams last = cols;
  last.axis = -1;
  CHECK(ints(quantize(x, last)) == ints(q1));
}

TEST_CASE("dequantize u8, i8 and i32 accumulators", "[ops][quantize]") {
  const QParams p = QParams::per_tensor(0.25, 100, DType::U8);
  const Tensor q = Tensor::from_vector<uint8_t>({0, 100, 101, 255}, {4});
  const Tensor d = dequantize(q, p);
  CHECK(d.dtype() == DType::F32);
  CHECK(d.to_vector<float>() == F{-25.0f, 0.0f, 0.25f, 38.75f});
  const Tensor acc = Tensor::from_vector<int32_t>({-70000, 3, 1 << 20}, {3});
  CHECK(dequantize(acc, QParams::per_tensor(0.5, 0, DType::U8)).to_vector<float>() == F{-35000, 1.5f, 524288});
  // quantize then dequantize is within half a step inside the range
  const Tensor x = test::random_tensor({50}, DType::F32, 3, -1.0, 1.0);
  const QParams r = QParams::per_tensor(0.01, 128, DType::U8);
  INGOT_REQUIRE_CLOSE(dequantize(quantize(x, r), r), x, 0.005 + 1e-6, 0.0);
}

TEST_CASE("QParams factories check their values and describe themselves", "[ops][quantize]") {
  CHECK(quant_range(DType::U8) == std::pair<int32_t, int32_t>{0, 255});
  CHECK(quant_range(DType::I8) == std::pair<int32_t, int32_t>{-128, 127});
  CHECK_THROWS_AS(quant_range(DType::I32), DTypeError);
  CHECK_THROWS_AS(QParams::per_tensor(0.0, 0, DType::U8), InputError);
  CHECK_THROWS_AS(QParams::per_tensor(-1.0, 0, DType::U8), InputError);
  CHECK_THROWS_AS(QParams::per_tensor(0.1, 256, DType::U8), InputError);
  CHECK_THROWS_AS(QParams::per_tensor(0.1, -1, DType::U8), InputError);
  CHECK_THROWS_AS(QParams::per_tensor(0.1, 0, DType::F32), DTypeError);
  CHECK_THROWS_AS(QParams::per_channel_of({0.1f, 0.2f}, {0}, 0, DType::I8), InputError);
  CHECK_THROWS_AS(QParams::per_channel_of({}, {}, 0, DType::I8), InputError);
  const QParams t = QParams::per_tensor(0.0123, 128, DType::U8);
  CHECK_FALSE(t.per_channel());
  CHECK(t.str() == "u8 per tensor scale 0.0123 zp 128");
  CHECK(QParams::per_channel_of(F(64, 0.1f), I(64, 0), 0, DType::I8).str() == "i8 per channel (64) axis 0");
}

TEST_CASE("quantize and dequantize reject bad dtypes and shapes", "[ops][quantize]") {
  const QParams p = QParams::per_tensor(0.1, 0, DType::I8);
  CHECK_THROWS_AS(quantize(Tensor::from_vector<int32_t>({1}, {1}), p), DTypeError);
  CHECK_THROWS_AS(dequantize(f32({1}, {1}), p), DTypeError);
  CHECK_THROWS_AS(dequantize(Tensor::from_vector<uint8_t>({1}, {1}), p), DTypeError);  // u8 data, i8 params
  const QParams c3 = QParams::per_channel_of({0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0, DType::I8);
  try {
    (void)quantize(zeros({2, 3}), c3);
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("[2, 3]") != std::string::npos);
  }
  QParams far = c3;
  far.axis = 2;
  CHECK_THROWS_AS(quantize(zeros({2, 3}), far), ShapeError);
  QParams wrong = p;
  wrong.scale = Tensor::from_vector<double>({0.1}, {1});
  CHECK_THROWS_AS(quantize(zeros({2}), wrong), DTypeError);
  CHECK_THROWS_AS(quantize(zeros({2}), QParams{}), InputError);
}

TEST_CASE("quantized_linear: hand-computed f32, i32, requantized and relu outputs", "[ops][quantize]") {
  // x real = (x - 2) * 0.5, w real = w * 0.25 (row 0) and (w + 1) * 0.5 (row 1)
  const Tensor x = Tensor::from_vector<uint8_t>({4, 0, 6, 2}, {2, 2});  // centered: [2, -2], [4, 0]
  const QParams xq = QParams::per_tensor(0.5, 2, DType::U8);
  const Tensor w = Tensor::from_vector<int8_t>({1, 3, -1, 1}, {2, 2});  // centered: [1, 3], [0, 2]
  const QParams wq = QParams::per_channel_of({0.25f, 0.5f}, {0, -1}, 0, DType::I8);
  const Tensor bias = f32({1.0f, -5.0f}, {2});
  // acc = [[2 - 6, 0 - 4], [4, 0]] = [[-4, -4], [4, 0]]
  CHECK(ints(quantized_linear(x, xq, w, wq, Tensor(), QOutput::I32)) == I{-4, -4, 4, 0});
  // f32 = acc * 0.5 * w_scale + bias = [[-0.5 + 1, -1 - 5], [0.5 + 1, 0 - 5]]
  const Tensor y = quantized_linear(x, xq, w, wq, bias);
  CHECK(y.dtype() == DType::F32);
  CHECK(y.to_vector<float>() == F{0.5f, -6.0f, 1.5f, -5.0f});
  CHECK(quantized_linear(x, xq, w, wq, bias, QOutput::F32, Activation::Relu).to_vector<float>() == F{0.5f, 0, 1.5f, 0});
  const QParams out = QParams::per_tensor(0.5, 3, DType::I8);
  const Tensor r = quantized_linear(x, xq, w, wq, bias, QOutput::Requantized, Activation::None, &out);
  CHECK(r.dtype() == DType::I8);
  CHECK(ints(r) == I{4, -9, 6, -7});  // 1 -> 1 (0.5 / 0.5), -12, 3, -10; + 3
}

TEST_CASE("quantized_linear and quantized_conv2d match the float ops on dequantized values", "[ops][quantize]") {
  const Tensor xf = test::random_tensor({2, 3, 16}, DType::F32, 11, -2.0, 2.0);
  const Tensor wf = test::random_tensor({5, 16}, DType::F32, 12, -1.0, 1.0);
  const Tensor bias = test::random_tensor({5}, DType::F32, 13);
  const QParams xq = QParams::per_tensor(4.0 / 255, 128, DType::U8);
  const QParams wq = QParams::per_channel_of({0.008f, 0.01f, 0.009f, 0.0085f, 0.011f}, I(5, 0), 0, DType::I8);
  const Tensor x = quantize(xf, xq), w = quantize(wf, wq);
  const Tensor expected = linear(dequantize(x, xq), dequantize(w, wq), bias);
  const Tensor y = quantized_linear(x, xq, w, wq, bias);
  CHECK(y.shape() == Shape{2, 3, 5});
  INGOT_REQUIRE_CLOSE(y, expected, 1e-5, 1e-5);
  const QParams out = QParams::per_tensor(0.05, 100, DType::U8);
  const Tensor r = quantized_linear(x, xq, w, wq, bias, QOutput::Requantized, Activation::None, &out);
  INGOT_REQUIRE_CLOSE(r.to(DType::F32), quantize(expected, out).to(DType::F32), 1.0, 0.0);

  // convolution with padding: padded taps are real 0 (= x's zero point), whatever the zero point
  const Tensor cx = quantize(test::random_tensor({2, 4, 6, 6}, DType::F32, 14, -1.0, 3.0), xq);
  const Tensor cwf = test::random_tensor({6, 2, 3, 3}, DType::F32, 15, -1.0, 1.0);
  const QParams cwq = QParams::per_channel_of(F(6, 0.01f), I(6, 0), 0, DType::I8);
  const Tensor cw = quantize(cwf, cwq), cb = test::random_tensor({6}, DType::F32, 16);
  Conv2dParams p;
  p.padding = {1, 1};
  p.stride = {2, 1};
  p.groups = 2;
  const Tensor cexp = conv2d(dequantize(cx, xq), dequantize(cw, cwq), cb, p, Activation::Relu);
  const Tensor cy = quantized_conv2d(cx, xq, cw, cwq, cb, p, QOutput::F32, Activation::Relu);
  CHECK(cy.shape() == Shape{2, 6, 3, 6});
  INGOT_REQUIRE_CLOSE(cy, cexp, 1e-5, 1e-5);
  const Tensor acc = quantized_conv2d(cx, xq, cw, cwq, Tensor(), p, QOutput::I32);
  CHECK(acc.dtype() == DType::I32);
  INGOT_REQUIRE_CLOSE(dequantize(acc, QParams::per_tensor(xq.scale.item() * 0.01, 0, DType::U8)),
                      conv2d(dequantize(cx, xq), dequantize(cw, cwq), Tensor(), p), 1e-5, 1e-5);
}

TEST_CASE("quantized_linear and quantized_conv2d reject bad operands", "[ops][quantize]") {
  const Tensor x = zeros({2, 4}, DType::U8), w = zeros({3, 4}, DType::I8);
  const QParams xq = QParams::per_tensor(0.1, 0, DType::U8), wq = QParams::per_tensor(0.1, 0, DType::I8);
  CHECK_NOTHROW(quantized_linear(x, xq, w, wq, Tensor()));
  CHECK_THROWS_AS(quantized_linear(x, xq, zeros({3, 5}, DType::I8), wq, Tensor()), ShapeError);
  CHECK_THROWS_AS(quantized_linear(x, xq, zeros({3, 4}, DType::U8), wq, Tensor()), DTypeError);
  CHECK_THROWS_AS(quantized_linear(zeros({2, 4}), xq, w, wq, Tensor()), DTypeError);
  CHECK_THROWS_AS(quantized_linear(x, wq, w, wq, Tensor()), DTypeError);  // i8 params for u8 x
  CHECK_THROWS_AS(quantized_linear(x, xq, w, wq, zeros({4})), ShapeError);
  CHECK_THROWS_AS(quantized_linear(x, xq, w, wq, zeros({3}), QOutput::I32), InputError);
  CHECK_THROWS_AS(quantized_linear(x, xq, w, wq, Tensor(), QOutput::Requantized), InputError);
  const QParams x_channels = QParams::per_channel_of(F(2, 0.1f), I(2, 0), 0, DType::U8);
  CHECK_THROWS_AS(quantized_linear(x, x_channels, w, wq, Tensor()), InputError);
  const QParams w_axis1 = QParams::per_channel_of(F(4, 0.1f), I(4, 0), 1, DType::I8);
  CHECK_THROWS_AS(quantized_linear(x, xq, w, w_axis1, Tensor()), InputError);
  const QParams w_two = QParams::per_channel_of(F(2, 0.1f), I(2, 0), 0, DType::I8);
  CHECK_THROWS_AS(quantized_linear(x, xq, w, w_two, Tensor()), ShapeError);
  CHECK_THROWS_AS(
      quantized_conv2d(zeros({1, 4, 5, 5}, DType::U8), xq, zeros({2, 3, 3, 3}, DType::I8), wq, Tensor(), {}),
      ShapeError);
}

TEST_CASE("max_pool2d_values pools quantized values, which commutes with quantization", "[ops][quantize]") {
  const QParams q = QParams::per_tensor(0.02, 30, DType::U8);
  const Tensor xf = test::random_tensor({2, 3, 7, 7}, DType::F32, 21, -0.5, 3.0);
  Pool2dParams p;
  p.kernel = {3, 3};
  p.stride = {2, 2};
  p.padding = {1, 1};
  const Tensor y = max_pool2d_values(quantize(xf, q), p);
  CHECK(y.dtype() == DType::U8);
  CHECK(ints(y) == ints(quantize(max_pool2d_values(xf, p), q)));
  const QParams s = QParams::per_tensor(0.02, -20, DType::I8);
  CHECK(ints(max_pool2d_values(quantize(xf, s), p)) == ints(quantize(max_pool2d_values(xf, p), s)));
  CHECK_THROWS_AS(max_pool2d(quantize(xf, q), p), DTypeError);  // the differentiable path stays floating
  CHECK_THROWS_AS(max_pool2d_values(zeros({1, 1, 2, 2}, DType::I32), p), DTypeError);
}

// ---- torch 1.13 golden values ------------------------------------------------------------------

TEST_CASE("quantize and dequantize match torch.quantize_per_tensor / per_channel exactly", "[ops][quantize][golden]") {
  const io::SafetensorsFile file =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "quantize.safetensors");
  const auto cases = nlohmann::json::parse(file.metadata.at("cases"));
  REQUIRE(cases.size() >= 8);
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    INFO("case " << name);
    const Tensor& x = file.tensors.at(name + ".x");
    const Tensor& scale = file.tensors.at(name + ".scale");
    const Tensor& zp = file.tensors.at(name + ".zero_point");
    const DType dtype = c.at("dtype") == "u8" ? DType::U8 : DType::I8;
    const int axis = c.at("axis");
    QParams qp = axis < 0 ? QParams::per_tensor(scale.to_vector<float>()[0], zp.to_vector<int32_t>()[0], dtype)
                          : QParams::per_channel_of(scale.to_vector<float>(), zp.to_vector<int32_t>(), axis, dtype);
    qp.quant_min = c.at("quant_min");
    qp.quant_max = c.at("quant_max");
    const Tensor q = quantize(x, qp);
    if (file.tensors.count(name + ".fq") != 0) {  // torch.fake_quantize_*: quantize, then dequantize
      INGOT_REQUIRE_CLOSE(dequantize(q, qp), file.tensors.at(name + ".fq"), 0.0, 0.0);
      continue;
    }
    const Tensor& expected = file.tensors.at(name + ".q");
    REQUIRE(q.dtype() == expected.dtype());
    CHECK(ints(q) == ints(expected));
    const Tensor d = dequantize(q, qp);
    const Tensor& deq = file.tensors.at(name + ".deq");
    REQUIRE(d.numel() == deq.numel());
    CHECK(std::memcmp(d.contiguous().data<float>(), deq.contiguous().data<float>(), sizeof(float) * d.numel()) == 0);
  }
}

}  // namespace
}  // namespace ingot

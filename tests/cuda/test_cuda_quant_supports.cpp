// supports() of the cuda backend's quantized ops without a GPU: QUANTIZE / DEQUANTIZE parameters
// per tensor and per channel, QLINEAR's operand list, parameter counts, output kinds and the padded
// GEMM sizes, and max pooling of u8 / i8 values.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <vector>

#include "host_desc.h"
#include "ingot/runtime/op_info.h"
#include "kernels.h"
#include "qlinear_problem.h"

namespace ingot::cuda {
namespace {

ingot_tensor_desc desc(std::initializer_list<int64_t> shape, int32_t dtype, int32_t device = INGOT_DEVICE_CUDA) {
  ingot_tensor_desc d = test::host_desc(shape, dtype, {}, 0, device);
  d.nbytes = sdk::numel(d) * sdk::dtype_size(dtype);
  return d;
}

bool supports(bool (*fn)(const sdk::OpCall&), int32_t op, const std::vector<ingot_tensor_desc>& in,
              const std::vector<ingot_tensor_desc>& out, const void* attrs) {
  return fn(
      sdk::OpCall{op, in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()), attrs});
}

ingot_attr_quantize quant_attr(int32_t axis, int32_t lo, int32_t hi) {
  auto a = make_attr<ingot_attr_quantize>();
  a.axis = axis, a.quant_min = lo, a.quant_max = hi;
  return a;
}

TEST_CASE("cuda quantize / dequantize supports: parameters per tensor and per channel", "[cuda][quantize]") {
  const auto x = desc({4, 6}, INGOT_F32), q = desc({4, 6}, INGOT_U8);
  const auto s1 = desc({1}, INGOT_F32), z1 = desc({1}, INGOT_I32), s6 = desc({6}, INGOT_F32), z6 = desc({6}, INGOT_I32);
  const auto full = quant_attr(1, 0, 255), last = quant_attr(-1, 0, 127);
  CHECK(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s1, z1}, {q}, &full));
  CHECK(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s6, z6}, {q}, &full));
  CHECK(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s6, z6}, {q}, &last));
  CHECK(supports(quant_supports, INGOT_OP_QUANTIZE, {desc({4, 6}, INGOT_BF16), s1, z1}, {desc({4, 6}, INGOT_I8)},
                 &full) == false);  // i8 output with a u8 range
  const auto i8_range = quant_attr(0, -128, 127);
  CHECK(supports(quant_supports, INGOT_OP_QUANTIZE, {desc({4, 6}, INGOT_BF16), s1, z1}, {desc({4, 6}, INGOT_I8)},
                 &i8_range));
  const auto axis0 = quant_attr(0, 0, 255), axis2 = quant_attr(2, 0, 255);
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s6, z6}, {q}, &axis0));  // 4 channels along axis 0
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s6, z6}, {q}, &axis2));
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s6, z1}, {q}, &full));
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s1, z1}, {desc({4, 6}, INGOT_F32)}, &full));
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s1, z1}, {desc({6, 4}, INGOT_U8)}, &full));
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s1, z1}, {q}, nullptr));
  CHECK_FALSE(
      supports(quant_supports, INGOT_OP_QUANTIZE, {desc({4, 6}, INGOT_F32, INGOT_DEVICE_CPU), s1, z1}, {q}, &full));
  const auto narrow_bad = quant_attr(0, -1, 255);
  CHECK_FALSE(supports(quant_supports, INGOT_OP_QUANTIZE, {x, s1, z1}, {q}, &narrow_bad));
  const auto f = desc({4, 6}, INGOT_F32);
  for (int32_t dt : {INGOT_U8, INGOT_I8, INGOT_I32, INGOT_I64}) {
    INFO("dtype " << dt);
    CHECK(supports(quant_supports, INGOT_OP_DEQUANTIZE, {desc({4, 6}, dt), s6, z6}, {f}, &last));
  }
  CHECK_FALSE(supports(quant_supports, INGOT_OP_DEQUANTIZE, {x, s1, z1}, {f}, &full));
  CHECK_FALSE(supports(quant_supports, INGOT_OP_DEQUANTIZE, {q, s1, z1}, {desc({4, 6}, INGOT_F64)}, &full));
}

// The inputs of a QLINEAR call: x [m, k] u8, w [n, k] i8 with `w_count` scales, optional bias and
// output parameters.
std::vector<ingot_tensor_desc> qlinear_inputs(std::initializer_list<int64_t> x_shape, int64_t n, int64_t k,
                                              int64_t w_count, bool bias, bool y_params) {
  std::vector<ingot_tensor_desc> in = {desc(x_shape, INGOT_U8), desc({1}, INGOT_F32),       desc({1}, INGOT_I32),
                                       desc({n, k}, INGOT_I8),  desc({w_count}, INGOT_F32), desc({w_count}, INGOT_I32)};
  if (bias) in.push_back(desc({n}, INGOT_F32));
  if (y_params) in.insert(in.end(), {desc({1}, INGOT_F32), desc({1}, INGOT_I32)});
  return in;
}

TEST_CASE("cuda qlinear supports: operands, parameter counts and output kinds", "[cuda][quantize]") {
  auto mm = make_attr<ingot_attr_matmul>();
  auto biased = mm;
  biased.has_bias = 1, biased.activation = INGOT_ACT_RELU;
  const auto y32 = desc({8, 10}, INGOT_F32);
  CHECK(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 10, true, false), {y32}, &biased));
  CHECK(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 1, false, false), {y32}, &mm));
  CHECK(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({2, 4, 20}, 10, 20, 10, false, false),
                 {desc({2, 4, 10}, INGOT_I32)}, &mm));
  CHECK(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 10, true, true),
                 {desc({8, 10}, INGOT_U8)}, &biased));
  // i32 is the raw accumulator; requantized outputs need their parameters; counts must fit
  CHECK_FALSE(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 10, true, false),
                       {desc({8, 10}, INGOT_I32)}, &biased));
  CHECK_FALSE(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 10, true, false),
                       {desc({8, 10}, INGOT_I8)}, &biased));
  CHECK_FALSE(
      supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 3, false, false), {y32}, &mm));
  CHECK_FALSE(
      supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 21}, 10, 20, 10, false, false), {y32}, &mm));
  CHECK_FALSE(supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 10, false, false),
                       {test::host_desc({8, 10}, INGOT_F32, {1, 8})}, &mm));  // a strided output
  auto per_channel_x = qlinear_inputs({8, 20}, 10, 20, 10, false, false);
  per_channel_x[1] = desc({8}, INGOT_F32), per_channel_x[2] = desc({8}, INGOT_I32);
  CHECK_FALSE(supports(qlinear_supports, INGOT_OP_QLINEAR, per_channel_x, {y32}, &mm));
  auto u8_w = qlinear_inputs({8, 20}, 10, 20, 10, false, false);
  u8_w[3] = desc({10, 20}, INGOT_U8);
  CHECK_FALSE(supports(qlinear_supports, INGOT_OP_QLINEAR, u8_w, {y32}, &mm));
  CHECK_FALSE(
      supports(qlinear_supports, INGOT_OP_QLINEAR, qlinear_inputs({8, 20}, 10, 20, 10, false, false), {y32}, nullptr));
}

TEST_CASE("cuda qlinear pads K to 16 and N to 4 for cuBLASLt's int8 kernels", "[cuda][quantize]") {
  const auto dims = [](std::initializer_list<int64_t> x, int64_t n, int64_t k, std::initializer_list<int64_t> y) {
    const std::vector<ingot_tensor_desc> in = qlinear_inputs(x, n, k, 1, false, false);
    const ingot_tensor_desc out = desc(y, INGOT_F32);
    QLinearDims d;
    REQUIRE(qlinear_dims(sdk::OpCall{INGOT_OP_QLINEAR, in.data(), 6, &out, 1, nullptr}, d));
    return d;
  };
  const QLinearDims classifier = dims({256, 64}, 10, 64, {256, 10});
  CHECK(classifier.m == 256);
  CHECK(classifier.k_pad == 64);
  CHECK(classifier.n_pad == 12);
  const QLinearDims odd = dims({2, 3, 20}, 5, 20, {2, 3, 5});
  CHECK(odd.m == 6);
  CHECK(odd.k_pad == 32);
  CHECK(odd.n_pad == 8);
  const QLinearDims empty_k = dims({4, 0}, 3, 0, {4, 3});
  CHECK(empty_k.k_pad == 16);
  CHECK(empty_k.n_pad == 4);
}

TEST_CASE("cuda max pooling takes u8 / i8 values forward only", "[cuda][quantize]") {
  auto pool = make_attr<ingot_attr_pool2d>();
  pool.kernel[0] = pool.kernel[1] = 2;
  for (int32_t dt : {INGOT_U8, INGOT_I8}) {
    INFO("dtype " << dt);
    const auto x = desc({2, 3, 8, 8}, dt), y = desc({2, 3, 4, 4}, dt), idx = desc({2, 3, 4, 4}, INGOT_I64);
    CHECK(supports(pool_supports, INGOT_OP_MAX_POOL2D, {x}, {y, idx}, &pool));
    CHECK_FALSE(supports(pool_supports, INGOT_OP_AVG_POOL2D, {x}, {y}, &pool));
    CHECK_FALSE(supports(pool_supports, INGOT_OP_MAX_POOL2D_BWD, {y, x, idx}, {x}, &pool));
  }
  CHECK_FALSE(supports(pool_supports, INGOT_OP_MAX_POOL2D, {desc({2, 3, 8, 8}, INGOT_I32)},
                       {desc({2, 3, 4, 4}, INGOT_I32), desc({2, 3, 4, 4}, INGOT_I64)}, &pool));
}

}  // namespace
}  // namespace ingot::cuda

// cpu_onednn int8 layouts: u8 / i8 max pooling of values, and the static int8 CNN's chain
// QCONV2D -> MAX_POOL2D -> QCONV2D -> QLINEAR staying in oneDNN's layout (NHWC) between ops and
// equal to the oracle's and the reference backend's chain.
#include <catch2/catch.hpp>

#include <tuple>
#include <vector>

#include "ingot/runtime/registry.h"
#include "int8_test_util.h"

namespace ingot {

using namespace test::int8;

TEST_CASE("cpu_onednn int8: u8 and i8 max pooling, values only", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const Shape xs{2, 5, 9, 9};
  for (DType dt : {DType::U8, DType::I8}) {
    for (auto [k, st, p] : {std::tuple<int64_t, int64_t, int64_t>{2, 2, 0}, {3, 2, 1}}) {
      INFO(dtype_name(dt) << " kernel " << k << " stride " << st << " pad " << p);
      const std::vector<int32_t> x = ints(810, dt == DType::U8 ? 0 : -128, dt == DType::U8 ? 255 : 127, 40);
      const int64_t o = (9 + 2 * p - k) / st + 1;
      const Shape ys{2, 5, o, o};
      const Tensor y = Tensor::empty(ys, dt), idx = Tensor::empty(ys, DType::I64);
      auto a = values_only_pool(k, st, p);
      const std::vector<Tensor> in = {qt(x, xs, dt)};
      const ingot_tensor_desc di = make_desc(in[0]), dout[2] = {make_desc(y), make_desc(idx)};
      REQUIRE(be->supports(INGOT_OP_MAX_POOL2D, &di, 1, dout, 2, &a));
      run_op_on(*be, INGOT_OP_MAX_POOL2D, in, {y, idx}, &a);
      require_equal(values(y), max_pool(std::vector<double>(x.begin(), x.end()), 10, 9, 9, k, st, p));
      a.indices_unused = 0;  // quantized values have no gradient: indices are not offered
      CHECK_FALSE(be->supports(INGOT_OP_MAX_POOL2D, &di, 1, dout, 2, &a));
    }
  }
}

TEST_CASE("cpu_onednn int8: quantize and dequantize keep a convolution's layout", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  test::RestoreBackends restore;
  BackendRegistry::instance().restrict_to({"cpu_onednn"});
  // an f32 convolution's output (oneDNN's layout) quantized per channel with zero points
  const auto c = test::conv2d_attr(1, 1, 1, 1, false, INGOT_ACT_NONE);
  const Tensor h = run_op(INGOT_OP_CONV2D,
                          {Tensor::from_vector(floats(2 * 3 * 6 * 6, -1.f, 1.f, 50), {2, 3, 6, 6}),
                           Tensor::from_vector(floats(16 * 27, -1.f, 1.f, 51), {16, 3, 3, 3})},
                          {{{2, 16, 6, 6}, DType::F32}}, &c)[0];
  REQUIRE(h.is_opaque());
  const std::vector<float> scales = floats(16, 0.01f, 0.03f, 52);
  const std::vector<int32_t> zps = ints(16, 100, 140, 53);
  const auto a = qattr(1, 0, 255);
  const Tensor q = run_op(INGOT_OP_QUANTIZE, {h, vec(scales), vec(zps)}, {{{2, 16, 6, 6}, DType::U8}}, &a)[0];
  const Tensor d = run_op(INGOT_OP_DEQUANTIZE, {q, vec(scales), vec(zps)}, {{{2, 16, 6, 6}, DType::F32}}, &a)[0];
  CHECK(q.is_opaque());
  CHECK(d.is_opaque());
  const std::vector<double> hv = values(h);
  std::vector<double> want_q(hv.size()), want_d(hv.size());
  for (size_t i = 0; i < hv.size(); ++i) {
    const size_t ch = (i / 36) % 16;
    const int32_t qi = quantize_one(static_cast<float>(hv[i]), scales[ch], zps[ch], 0, 255);
    want_q[i] = qi;
    want_d[i] = static_cast<float>(qi - zps[ch]) * scales[ch];
  }
  require_equal(values(q), want_q);
  require_equal(values(d), want_d);
}

namespace {

/// The static int8 CNN's chain on whatever backends dispatch may use: conv (u8 out) -> 2x2 max
/// pool -> conv (u8 out) -> flatten -> linear (f32 out). Scales are powers of two and output zero
/// points 0, so every requantization is exact on any backend. `opaque` counts the activations
/// that stayed in a backend's own layout.
struct Chain {
  std::vector<int32_t> x, w1, w2, w3;
  std::vector<float> b1, b2, b3;
  QP q1{{0.25f, 0.5f, 0.25f, 0.125f, 0.5f, 0.25f, 0.5f, 0.25f}, std::vector<int32_t>(8, 0)}, q2{{0.5f}, {0}},
      q3{{0.25f}, {0}};
  Chain() {
    x = ints(2 * 3 * 8 * 8, 0, 9, 41), w1 = ints(8 * 3 * 9, -2, 2, 42), w2 = ints(6 * 8 * 9, -1, 1, 43);
    w3 = ints(10 * 96, -2, 2, 44);
    for (float& b : (b1 = floats(8, -2.f, 2.f, 45))) b = std::round(b * 8.f) / 8.f;
    for (float& b : (b2 = floats(6, -2.f, 2.f, 46))) b = std::round(b * 32.f) / 32.f;
    b3 = floats(10, -1.f, 1.f, 47);
  }
  Epi e1() const { return Epi{2, true, b1, 0.25f, 0, 0, 255}; }
  Epi e2() const { return Epi{2, true, b2, 2.f, 0, 0, 255}; }
  Epi e3() const { return Epi{0, false, b3}; }

  std::vector<Tensor> run(int& opaque) const {
    const auto c = test::conv2d_attr(1, 1, 1, 1, true, INGOT_ACT_RELU);
    const auto pool = values_only_pool(2, 2, 0);
    const auto lin = mattr(true, false);
    const Tensor h1 = run_op(
        INGOT_OP_QCONV2D, q_inputs(qt(x, {2, 3, 8, 8}, DType::U8), 0.5f, 3, qt(w1, {8, 3, 3, 3}, DType::I8), q1, e1()),
        {{{2, 8, 8, 8}, DType::U8}}, &c)[0];
    const Tensor p1 =
        run_op(INGOT_OP_MAX_POOL2D, {h1}, {{{2, 8, 4, 4}, DType::U8}, {{2, 8, 4, 4}, DType::I64}}, &pool)[0];
    const Tensor h2 = run_op(INGOT_OP_QCONV2D, q_inputs(p1, 0.25f, 0, qt(w2, {6, 8, 3, 3}, DType::I8), q2, e2()),
                             {{{2, 6, 4, 4}, DType::U8}}, &c)[0];
    // counted before flattening, which reorders h2 to strided in place
    opaque = static_cast<int>(h1.is_opaque()) + static_cast<int>(p1.is_opaque()) + static_cast<int>(h2.is_opaque());
    const Tensor y =
        run_op(INGOT_OP_QLINEAR, q_inputs(h2.strided().reshape({2, 96}), 2.f, 0, qt(w3, {10, 96}, DType::I8), q3, e3()),
               {{{2, 10}, DType::F32}}, &lin)[0];
    return {h1, p1, h2, y};
  }

  /// The oracle's values of h1, p1, h2, y.
  std::vector<std::vector<double>> expected() const {
    const auto h1 = qconv(x, 0.5f, 3, w1, q1, {2, 3, 8, 8, 8, 3, 3, 1, 1}, e1());
    const auto p1 = max_pool(h1, 16, 8, 8, 2, 2, 0);
    const auto h2 = qconv(as_ints(p1), 0.25f, 0, w2, q2, {2, 8, 4, 4, 6, 3, 3, 1, 1}, e2());
    return {h1, p1, h2, qlinear(as_ints(h2), 2.f, 0, w3, q3, 2, 96, 10, e3())};
  }
};

}  // namespace

TEST_CASE("cpu_onednn int8: conv -> max pool -> conv -> linear stays in oneDNN's layout and equals the reference",
          "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const Chain chain;
  const auto want = chain.expected();
  test::RestoreBackends restore;
  BackendRegistry::instance().restrict_to({"cpu_onednn"});
  int opaque = 0;
  const std::vector<Tensor> got = chain.run(opaque);
  CHECK(opaque == 3);  // both convolutions' outputs and the pooled activations stayed NHWC
  for (OpKind op : {INGOT_OP_QCONV2D, INGOT_OP_MAX_POOL2D, INGOT_OP_QLINEAR}) {
    INFO(op_info(op).name << " ran " << be->impl_name(op));
    CHECK(!be->impl_name(op).empty());
    CHECK(be->impl_name(op).rfind("ref", 0) != 0);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("chain tensor " << i);
    require_equal(values(got[i]), want[i]);
  }
  // the reference backend's chain, where it runs these ops
  BackendRegistry::instance().restrict_to({"reference"});
  const Backend& ref = BackendRegistry::instance().reference();
  const Tensor probe = qt({1}, {1, 1, 1, 1}, DType::U8);
  const auto c = test::conv2d_attr(1, 0, 1, 1, false, INGOT_ACT_NONE);
  const auto in = q_inputs(probe, 1.f, 0, qt({1}, {1, 1, 1, 1}, DType::I8), QP{{1.f}, {0}}, Epi{1});
  std::vector<ingot_tensor_desc> di;
  for (const Tensor& t : in) di.push_back(make_desc(t));
  const ingot_tensor_desc dy = make_desc(Tensor::empty({1, 1, 1, 1}, DType::I32));
  if (!ref.supports(INGOT_OP_QCONV2D, di.data(), static_cast<int>(di.size()), &dy, 1, &c))
    return test::skip("the reference backend has no QCONV2D yet; checked against the oracle only");
  const std::vector<Tensor> reference = chain.run(opaque);
  REQUIRE(opaque == 0);
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("chain tensor " << i << " against the reference backend");
    require_equal(values(got[i]), values(reference[i]));
  }
}

}  // namespace ingot

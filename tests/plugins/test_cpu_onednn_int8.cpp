// cpu_onednn int8 kernels (QUANTIZE, DEQUANTIZE, QLINEAR, QCONV2D) against a hand-written oracle
// and torch's quantize: f32 and i32 outputs exact, requantized outputs within 1 (a near tie may
// round the other way), every zero-point path, one QLINEAR plan for every x_scale, packed weights
// that follow in-place changes, and what the backend declines.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ingot/io/safetensors.h"
#include "int8_test_util.h"

namespace ingot {

using namespace test::int8;

TEST_CASE("cpu_onednn int8: quantize per tensor rounds ties to even, adds the zero point and clamps",
          "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  // x * (1 / 0.5) lands on exact .5 ties; 0.50000006 (scale 1) is the near tie a zero point added
  // in f32 before rounding would get wrong
  std::vector<float> x = floats(997, -80.f, 80.f, 1);
  for (int k = -6; k <= 6; ++k) x.push_back(0.5f * k + 0.25f);
  x.push_back(0.50000006f), x.push_back(-0.50000006f);
  const Shape s{static_cast<int64_t>(x.size())};
  struct Case {
    DType dt;
    float scale;
    int32_t zp, lo, hi;
  };
  for (const Case& c :
       {Case{DType::U8, 0.5f, 0, 0, 255}, Case{DType::U8, 1.f, 128, 0, 255}, Case{DType::I8, 0.5f, -3, -100, 100},
        Case{DType::U8, 0.37f, 0, 0, 127}, Case{DType::I8, 1.f, 0, -128, 127}}) {
    INFO("dtype " << dtype_name(c.dt) << " scale " << c.scale << " zp " << c.zp << " range " << c.lo << ".." << c.hi);
    const auto a = qattr(0, c.lo, c.hi);
    const Tensor q = ours(
        *be, INGOT_OP_QUANTIZE,
        {Tensor::from_vector(x, s), vec(std::vector<float>{c.scale}), vec(std::vector<int32_t>{c.zp})}, s, c.dt, &a);
    std::vector<double> want;
    for (float v : x) want.push_back(quantize_one(v, c.scale, c.zp, c.lo, c.hi));
    require_equal(values(q), want);
  }
}

TEST_CASE("cpu_onednn int8: quantize per channel along any axis, from a transposed input", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const Shape s{3, 4, 5, 6};
  const std::vector<float> x = floats(360, -3.f, 3.f, 2);
  const Tensor xt = Tensor::from_vector(x, s);
  for (int axis : {0, 1, 3}) {
    for (bool zero_zp : {true, false}) {
      INFO("axis " << axis << (zero_zp ? " zero points 0" : " zero points nonzero"));
      const int64_t ch = s[axis];
      const std::vector<float> scales = floats(static_cast<size_t>(ch), 0.01f, 0.05f, 3 + axis);
      const std::vector<int32_t> zps = zero_zp ? std::vector<int32_t>(ch, 0) : ints(ch, -20, 20, 4);
      const auto a = qattr(axis, -128, 127);
      // the same values read through a permuted view: strides the reorder handles
      const Tensor view = xt.transpose(1, 2).contiguous().transpose(1, 2);
      REQUIRE(!view.is_contiguous());
      const Tensor q = ours(*be, INGOT_OP_QUANTIZE, {view, vec(scales), vec(zps)}, s, DType::I8, &a);
      std::vector<double> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        int64_t idx[4], r = static_cast<int64_t>(i);
        for (int d = 3; d >= 0; --d) idx[d] = r % s[d], r /= s[d];
        const auto c = static_cast<size_t>(idx[axis]);
        want[i] = quantize_one(x[i], scales[c], zps[c], -128, 127);
      }
      require_equal(values(q), want);
    }
  }
}

TEST_CASE("cpu_onednn int8: quantize and dequantize match torch 1.13 exactly", "[onednn][int8][golden]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const io::SafetensorsFile file =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "quantize.safetensors");
  const auto cases = nlohmann::json::parse(file.metadata.at("cases"));
  REQUIRE(cases.size() >= 8);
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    INFO("case " << name);
    const Tensor &x = file.tensors.at(name + ".x"), &scale = file.tensors.at(name + ".scale"),
                 &zp = file.tensors.at(name + ".zero_point");
    const DType dt = c.at("dtype") == "u8" ? DType::U8 : DType::I8;
    const auto a = qattr(std::max(0, c.at("axis").get<int>()), c.at("quant_min"), c.at("quant_max"));
    const Tensor q = ours(*be, INGOT_OP_QUANTIZE, {x, scale, zp}, x.shape(), dt, &a);
    const Tensor d = ours(*be, INGOT_OP_DEQUANTIZE, {q, scale, zp}, x.shape(), DType::F32, &a);
    if (file.tensors.count(name + ".fq") != 0) {  // torch.fake_quantize_*
      require_equal(values(d), values(file.tensors.at(name + ".fq")));
      continue;
    }
    require_equal(values(q), values(file.tensors.at(name + ".q")));
    require_equal(values(d), values(file.tensors.at(name + ".deq")));
  }
}

TEST_CASE("cpu_onednn int8: dequantize u8, i8 and i32, per tensor and per channel", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const Shape s{4, 7, 9};
  struct Case {
    DType dt;
    int lo, hi;
    bool per_channel, zero_zp;
  };
  for (const Case& c : {Case{DType::U8, 0, 255, false, false}, Case{DType::I8, -128, 127, true, false},
                        Case{DType::I8, -128, 127, true, true}, Case{DType::I32, -(1 << 30), 1 << 30, false, false},
                        Case{DType::I32, -(1 << 30), 1 << 30, true, true}}) {
    INFO("dtype " << dtype_name(c.dt) << (c.per_channel ? " per channel" : " per tensor")
                  << (c.zero_zp ? " zp 0" : " zp nonzero"));
    const std::vector<int32_t> q = ints(252, c.lo, c.hi, 5);
    const size_t ch = c.per_channel ? 7 : 1;
    const std::vector<float> scales = floats(ch, 0.001f, 0.1f, 6);
    const std::vector<int32_t> zps = c.zero_zp ? std::vector<int32_t>(ch, 0) : ints(ch, 1, 100, 7);
    const auto a = qattr(1, 0, 0);
    const Tensor y = ours(*be, INGOT_OP_DEQUANTIZE, {qt(q, s, c.dt), vec(scales), vec(zps)}, s, DType::F32, &a);
    std::vector<double> want(q.size());
    for (size_t i = 0; i < q.size(); ++i) {
      const size_t k = ch == 1 ? 0 : (i / 9) % 7;
      want[i] = static_cast<float>(q[i] - zps[k]) * scales[k];
    }
    require_equal(values(y), want);
  }
}

TEST_CASE("cpu_onednn int8: qlinear f32, i32 and requantized outputs with bias and relu", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const int64_t b = 2, t = 3, k = 700, n = 19;  // K large enough that |acc| passes 2^16
  for (DType xdt : {DType::U8, DType::I8}) {
    const bool u8 = xdt == DType::U8;
    const std::vector<int32_t> x = ints(b * t * k, u8 ? 0 : -128, u8 ? 255 : 127, 8);
    const std::vector<int32_t> w = ints(n * k, -128, 127, 9);
    const float xs = 0.02f;
    const int32_t xz = u8 ? 131 : -5;
    const QP wq{floats(n, 0.001f, 0.01f, 10), std::vector<int32_t>(n, 0)};
    for (int kind : {0, 1, 2}) {
      for (bool bias_relu : {false, true}) {
        if (kind == 1 && bias_relu) continue;
        Epi e;
        e.kind = kind, e.relu = bias_relu, e.y_scale = 0.9f, e.y_zp = u8 ? 3 : -7;
        e.lo = u8 ? 0 : -128, e.hi = u8 ? 255 : 127;
        if (bias_relu) e.bias = floats(n, -40.f, 40.f, 11);
        INFO("x " << dtype_name(xdt) << " epilogue " << kind << (bias_relu ? " bias relu" : ""));
        const auto a = mattr(bias_relu, bias_relu);
        const Tensor y =
            ours(*be, INGOT_OP_QLINEAR, q_inputs(qt(x, {b, t, k}, xdt), xs, xz, qt(w, {n, k}, DType::I8), wq, e),
                 {b, t, n}, out_dtype(e, xdt), &a);
        const std::vector<double> want = qlinear(x, xs, xz, w, wq, b * t, k, n, e);
        if (kind == 2)
          require_within_one(values(y), want);
        else
          require_equal(values(y), want);
      }
    }
  }
}

TEST_CASE("cpu_onednn int8: qlinear with nonzero weight zero points and a transposed x", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const int64_t m = 5, k = 33, n = 12;
  const std::vector<int32_t> x = ints(m * k, 0, 255, 12), w = ints(n * k, -100, 100, 13);
  const QP wq{floats(n, 0.01f, 0.02f, 14), ints(n, -9, 9, 15)};
  // x stored [k, m] and read transposed
  const Tensor xt = qt(x, {m, k}, DType::U8).transpose(0, 1).contiguous().transpose(0, 1);
  for (int kind : {0, 1, 2}) {
    Epi e;
    e.kind = kind, e.relu = kind != 1, e.y_scale = 7.f, e.y_zp = 100;
    if (kind != 1) e.bias = floats(n, -5.f, 5.f, 16);
    INFO("epilogue " << kind);
    const auto a = mattr(kind != 1, kind != 1);
    const Tensor y = ours(*be, INGOT_OP_QLINEAR, q_inputs(xt, 0.05f, 128, qt(w, {n, k}, DType::I8), wq, e), {m, n},
                          out_dtype(e, DType::U8), &a);
    // the correction path runs the exact epilogue loop: requantized outputs are exact too
    require_equal(values(y), qlinear(x, 0.05f, 128, w, wq, m, k, n, e));
  }
}

TEST_CASE("cpu_onednn int8: one qlinear plan serves every x_scale and zero point", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const int64_t m = 9, k = 40, n = 8;
  const std::vector<int32_t> x = ints(m * k, 0, 255, 17), w = ints(n * k, -128, 127, 18);
  const QP wq{floats(n, 0.01f, 0.02f, 19), std::vector<int32_t>(n, 0)};
  Epi e;
  e.bias = floats(n, -1.f, 1.f, 20), e.relu = true;
  const auto a = mattr(true, true);
  int64_t entries = -1;
  for (float xs : {0.1f, 0.2f, 0.013f, 1.5f}) {
    INFO("x_scale " << xs);
    const Tensor y =
        ours(*be, INGOT_OP_QLINEAR, q_inputs(qt(x, {m, k}, DType::U8), xs, 77, qt(w, {n, k}, DType::I8), wq, e), {m, n},
             DType::F32, &a);
    require_equal(values(y), qlinear(x, xs, 77, w, wq, m, k, n, e));
    if (entries >= 0) REQUIRE(be->plan_cache_stats().entries == entries);
    entries = be->plan_cache_stats().entries;
  }
}

TEST_CASE("cpu_onednn int8: qconv2d shapes, zero points and output kinds", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  struct Case {
    ConvShape s;
    DType xdt;
    int32_t xz;
  };
  for (const Case& c :
       {Case{{2, 4, 9, 9, 6, 3, 3, 1, 1}, DType::U8, 0}, Case{{2, 4, 9, 9, 6, 3, 3, 1, 1}, DType::U8, 37},
        Case{{1, 3, 11, 10, 8, 3, 3, 2, 1}, DType::I8, -4}, Case{{2, 4, 7, 7, 6, 3, 3, 1, 1, 1, 2}, DType::U8, 9},
        Case{{2, 8, 5, 5, 16, 1, 1}, DType::U8, 0}, Case{{1, 2, 9, 9, 4, 3, 3, 1, 2, 2}, DType::I8, 0}}) {
    const ConvShape& s = c.s;
    const bool u8 = c.xdt == DType::U8;
    const std::vector<int32_t> x = ints(s.n * s.c * s.h * s.w, u8 ? 0 : -128, u8 ? 255 : 127, 21);
    const std::vector<int32_t> w = ints(s.o * (s.c / s.groups) * s.kh * s.kw, -128, 127, 22);
    for (int kind : {0, 1, 2}) {
      for (bool per_channel : {false, true}) {
        Epi e;
        e.kind = kind, e.relu = kind != 1, e.y_scale = 0.7f, e.y_zp = u8 ? 4 : 0, e.lo = u8 ? 0 : -128,
        e.hi = u8 ? 255 : 127;
        if (kind != 1) e.bias = floats(s.o, -3.f, 3.f, 23);
        const QP wq{per_channel ? floats(s.o, 0.0005f, 0.002f, 24) : std::vector<float>{0.001f},
                    std::vector<int32_t>(per_channel ? s.o : 1, 0)};
        INFO("conv " << s.c << "->" << s.o << " " << s.kh << "x" << s.kw << " stride " << s.stride << " pad " << s.pad
                     << " dilation " << s.dilation << " groups " << s.groups << " x " << dtype_name(c.xdt) << " zp "
                     << c.xz << " epilogue " << kind << (per_channel ? " per channel" : " per tensor"));
        const auto a = test::conv2d_attr(s.stride, s.pad, s.dilation, s.groups, kind != 1,
                                         kind != 1 ? INGOT_ACT_RELU : INGOT_ACT_NONE);
        const std::optional<Tensor> y =
            ours_if_claimed(*be, INGOT_OP_QCONV2D,
                            q_inputs(qt(x, {s.n, s.c, s.h, s.w}, c.xdt), 0.05f, c.xz,
                                     qt(w, {s.o, s.c / s.groups, s.kh, s.kw}, DType::I8), wq, e),
                            {s.n, s.o, s.oh(), s.ow()}, out_dtype(e, c.xdt), &a);
        if (!y) continue;
        const std::vector<double> want = qconv(x, 0.05f, c.xz, w, wq, s, e);
        if (kind == 2)
          require_within_one(values(*y), want);
        else
          require_equal(values(*y), want);
      }
    }
  }
}

TEST_CASE("cpu_onednn int8: qconv2d with nonzero weight zero points pads with x_zp", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  // grouped (claimed from AVX-512 core up) and not (claimed everywhere)
  for (const ConvShape& s : {ConvShape{2, 4, 8, 8, 6, 3, 3, 1, 1, 1, 2}, ConvShape{2, 8, 8, 8, 8, 3, 3, 1, 1, 1, 1}}) {
    const int64_t cg = s.c / s.groups;
    const std::vector<int32_t> x = ints(s.n * s.c * s.h * s.w, 0, 255, 25), w = ints(s.o * cg * 9, -100, 100, 26);
    const QP wq{floats(s.o, 0.001f, 0.002f, 27), ints(s.o, -5, 5, 28)};
    for (int kind : {0, 1, 2}) {
      Epi e;
      e.kind = kind, e.relu = kind == 2, e.y_scale = 0.5f, e.y_zp = 11;
      if (kind != 1) e.bias = floats(s.o, -3.f, 3.f, 29);
      INFO("groups " << s.groups << " epilogue " << kind);
      const auto a = test::conv2d_attr(1, 1, 1, s.groups, kind != 1, kind == 2 ? INGOT_ACT_RELU : INGOT_ACT_NONE);
      const std::optional<Tensor> y = ours_if_claimed(
          *be, INGOT_OP_QCONV2D,
          q_inputs(qt(x, {s.n, s.c, s.h, s.w}, DType::U8), 0.03f, 120, qt(w, {s.o, cg, 3, 3}, DType::I8), wq, e),
          {s.n, s.o, s.oh(), s.ow()}, out_dtype(e, DType::U8), &a);
      if (s.groups == 1) REQUIRE(y.has_value());
      if (y) require_equal(values(*y), qconv(x, 0.03f, 120, w, wq, s, e));
    }
  }
}

TEST_CASE("cpu_onednn int8: qconv2d repacks weights changed in place and reads strided weights", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const ConvShape s{2, 8, 6, 6, 16, 3, 3, 1, 1};
  const std::vector<int32_t> x = ints(s.n * s.c * s.h * s.w, 0, 255, 33);
  std::vector<int32_t> w = ints(s.o * s.c * 9, -128, 127, 34);
  const QP wq{floats(s.o, 0.001f, 0.002f, 35), std::vector<int32_t>(s.o, 0)};
  Epi e;
  e.relu = true, e.bias = floats(s.o, -1.f, 1.f, 36);
  const auto a = test::conv2d_attr(1, 1, 1, 1, true, INGOT_ACT_RELU);
  const Tensor xt = qt(x, {2, 8, 6, 6}, DType::U8), wt = qt(w, {16, 8, 3, 3}, DType::I8);
  auto run = [&](const Tensor& weights) {
    return values(ours(*be, INGOT_OP_QCONV2D, q_inputs(xt, 0.02f, 0, weights, wq, e), {2, 16, 6, 6}, DType::F32, &a));
  };
  require_equal(run(wt), qconv(x, 0.02f, 0, w, wq, s, e));
  // the same tensor (same address) with new values: the packed copy must not be reused
  for (size_t i = 0; i < w.size(); i += 3) w[i] = -w[i] / 2;
  for (size_t i = 0; i < w.size(); ++i) wt.data<int8_t>()[i] = static_cast<int8_t>(w[i]);
  require_equal(run(wt), qconv(x, 0.02f, 0, w, wq, s, e));
  // OIHW read through the strides of an OHWI tensor
  const Tensor ohwi = wt.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  REQUIRE(!ohwi.is_contiguous());
  require_equal(run(ohwi), qconv(x, 0.02f, 0, w, wq, s, e));
}

TEST_CASE("cpu_onednn int8: declines what it cannot run", "[onednn][int8]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const QP wq{{0.1f}, {0}};
  auto claims = [&](OpKind op, const std::vector<Tensor>& in, const Tensor& y, const void* attrs) {
    std::vector<ingot_tensor_desc> di;
    for (const Tensor& t : in) di.push_back(make_desc(t));
    const ingot_tensor_desc dy = make_desc(y);
    return be->supports(op, di.data(), static_cast<int>(di.size()), &dy, 1, attrs);
  };
  const Tensor x = qt(ints(12, 0, 9, 30), {3, 4}, DType::U8), w = qt(ints(8, -3, 3, 31), {2, 4}, DType::I8);
  Epi plain;
  auto gelu = mattr(false, false);
  gelu.activation = INGOT_ACT_GELU;
  CHECK_FALSE(claims(INGOT_OP_QLINEAR, q_inputs(x, 1.f, 0, w, wq, plain), Tensor::empty({3, 2}), &gelu));
  // an i32 accumulator takes no bias; u8 weights are not the op's
  Epi biased;
  biased.bias = {1.f, 2.f};
  const auto with_bias = mattr(true, false);
  CHECK_FALSE(
      claims(INGOT_OP_QLINEAR, q_inputs(x, 1.f, 0, w, wq, biased), Tensor::empty({3, 2}, DType::I32), &with_bias));
  const auto none = mattr(false, false);
  const Tensor w_u8 = qt(ints(8, 0, 9, 32), {2, 4}, DType::U8);
  CHECK_FALSE(claims(INGOT_OP_QLINEAR, q_inputs(x, 1.f, 0, w_u8, wq, plain), Tensor::empty({3, 2}), &none));
  // a quantize range outside the dtype's, and a per-channel scale that matches no axis
  const auto wide = qattr(0, -1, 255);
  CHECK_FALSE(claims(INGOT_OP_QUANTIZE,
                     {Tensor::empty({3, 4}), vec(std::vector<float>{1.f}), vec(std::vector<int32_t>{0})},
                     Tensor::empty({3, 4}, DType::U8), &wide));
  const auto axis1 = qattr(1, 0, 255);
  CHECK_FALSE(
      claims(INGOT_OP_QUANTIZE,
             {Tensor::empty({3, 4}), vec(std::vector<float>{1.f, 2.f, 3.f}), vec(std::vector<int32_t>{0, 0, 0})},
             Tensor::empty({3, 4}, DType::U8), &axis1));
}

}  // namespace ingot

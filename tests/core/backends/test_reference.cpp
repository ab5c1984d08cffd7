// Reference backend, elementwise and data-movement ops: Philox known answers, unary / binary
// math, broadcasting, non-contiguous inputs and outputs, zero-size dims, reductions, creation,
// casts, indexing, sorting, random ops and supports(). Expected values are hand-computed or
// come from obviously-correct formulas written out here.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "ingot/plugin/philox.h"
#include "reference_test_util.h"

using namespace ingot;
using namespace ingot::test::ref;
using Catch::Matchers::Contains;

TEST_CASE("philox4x32-10 matches Random123's known answers", "[reference][philox]") {
  const sdk::PhiloxBlock zero = sdk::philox4x32_10(sdk::PhiloxBlock{{0, 0, 0, 0}}, 0, 0);
  CHECK(zero.v[0] == 0x6627e8d5u);
  CHECK(zero.v[1] == 0xe169c58du);
  CHECK(zero.v[2] == 0xbc57ac4cu);
  CHECK(zero.v[3] == 0x9b00dbd8u);
  const uint32_t m = 0xffffffffu;
  const sdk::PhiloxBlock ones = sdk::philox4x32_10(sdk::PhiloxBlock{{m, m, m, m}}, m, m);
  CHECK(ones.v[0] == 0x408f276du);
  CHECK(ones.v[1] == 0x41c83b0eu);
  CHECK(ones.v[2] == 0xa20bc7c6u);
  CHECK(ones.v[3] == 0x6d5451fdu);
  const sdk::PhiloxBlock pi = sdk::philox4x32_10(sdk::PhiloxBlock{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                                                 0xa4093822u, 0x299f31d0u);
  CHECK(pi.v[0] == 0xd16cfe09u);
  CHECK(pi.v[3] == 0x24126ea1u);
  CHECK(sdk::philox_advance(0) == 0);
  CHECK(sdk::philox_advance(1) == 1);
  CHECK(sdk::philox_advance(4) == 1);
  CHECK(sdk::philox_advance(5) == 2);
  // value i uses counter offset + i/4, lane i%4, key (lo, hi) of the seed
  const uint64_t seed = 0x123456789abcdefULL;
  const sdk::PhiloxBlock b = sdk::philox4x32_10(sdk::PhiloxBlock{{7 + 1, 0, 0, 0}}, 0x89abcdefu, 0x01234567u);
  CHECK(sdk::philox_bits(seed, 7, 6) == b.v[2]);
}

TEST_CASE("unary ops follow torch's definitions", "[reference][unary]") {
  const std::vector<float> xs = {-2.5f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f, 3.0f};
  const Tensor x = f32(xs, {7});
  const auto each = [&](OpKind op, double (*fn)(double), const void* attrs = nullptr) {
    std::vector<double> want;
    for (float v : xs) want.push_back(fn(v));
    INFO(op_info(op).name);
    check_values(unary(op, x, attrs), want, 1e-6);
  };
  each(INGOT_OP_NEG, [](double v) { return -v; });
  each(INGOT_OP_ABS, [](double v) { return std::fabs(v); });
  each(INGOT_OP_RELU, [](double v) { return v > 0 ? v : 0.0; });
  each(INGOT_OP_SIGN, [](double v) { return double((v > 0) - (v < 0)); });
  each(INGOT_OP_TANH, [](double v) { return std::tanh(v); });
  each(INGOT_OP_SIGMOID, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
  each(INGOT_OP_GELU, [](double v) { return v * 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))); });
  each(INGOT_OP_ERF, [](double v) { return std::erf(v); });
  each(INGOT_OP_EXP, [](double v) { return std::exp(v); });
  each(INGOT_OP_FLOOR, [](double v) { return std::floor(v); });
  each(INGOT_OP_CEIL, [](double v) { return std::ceil(v); });
  // torch.round is half-to-even
  check_values(unary(INGOT_OP_ROUND, x), {-2, -0.0, 0, 0, 2, 2, 3}, 0);
  const Tensor pos = f32({0.25f, 1.0f, 4.0f}, {3});
  check_values(unary(INGOT_OP_SQRT, pos), {0.5, 1, 2}, 1e-7);
  check_values(unary(INGOT_OP_RSQRT, pos), {2, 1, 0.5}, 1e-7);
  check_values(unary(INGOT_OP_RECIPROCAL, pos), {4, 1, 0.25}, 1e-7);
  check_values(unary(INGOT_OP_LOG, pos), {std::log(0.25), 0, std::log(4.0)}, 1e-6);
  check_values(unary(INGOT_OP_LOG1P, pos), {std::log1p(0.25), std::log(2.0), std::log(5.0)}, 1e-6);
  check_values(unary(INGOT_OP_SIN, pos), {std::sin(0.25), std::sin(1.0), std::sin(4.0)}, 1e-6);
  check_values(unary(INGOT_OP_COS, pos), {std::cos(0.25), std::cos(1.0), std::cos(4.0)}, 1e-6);

  auto sp = make_attr<ingot_attr_softplus>();
  sp.beta = 2.0;
  sp.threshold = 4.0;  // linear where 2x > 4
  check_values(unary(INGOT_OP_SOFTPLUS, f32({-1.0f, 1.0f, 3.0f}, {3}), &sp),
               {std::log1p(std::exp(-2.0)) / 2, std::log1p(std::exp(2.0)) / 2, 3.0}, 1e-6);

  auto cl = make_attr<ingot_attr_clamp>();
  cl.has_min = 1;
  cl.min = -1.0;
  check_values(unary(INGOT_OP_CLAMP, x, &cl), {-1, -0.5, 0, 0.5, 1.5, 2.5, 3}, 0);
  cl.has_max = 1;
  cl.max = 1.0;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  check_values(unary(INGOT_OP_CLAMP, f32({-3, 0.25f, nan, 7}, {4}), &cl), {-1, 0.25, NAN, 1}, 0);

  // integers: relu, abs, neg, sign stay exact
  const Tensor xi = Tensor::from_vector(std::vector<int32_t>{-3, 0, 5}, {3});
  CHECK(unary(INGOT_OP_RELU, xi).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 5});
  CHECK(unary(INGOT_OP_ABS, xi).to_vector<int32_t>() == std::vector<int32_t>{3, 0, 5});
  CHECK(unary(INGOT_OP_SIGN, xi).to_vector<int32_t>() == std::vector<int32_t>{-1, 0, 1});

  // half precision computes in float and rounds once
  const Tensor h = x.to(DType::F16);
  const Tensor eh = unary(INGOT_OP_EXP, h);
  REQUIRE(eh.dtype() == DType::F16);
  check_values(eh,
               {float(Half(std::exp(-2.5f))), float(Half(std::exp(-0.5f))), 1, float(Half(std::exp(0.5f))),
                float(Half(std::exp(1.5f))), float(Half(std::exp(2.5f))), float(Half(std::exp(3.0f)))},
               0);

  const Tensor lnot = Tensor::empty({3}, DType::Bool);
  run(INGOT_OP_LOGICAL_NOT, {f32({0, 2, nan}, {3})}, {lnot});
  CHECK(lnot.to_vector<bool>() == std::vector<bool>{true, false, false});
}

TEST_CASE("binary ops broadcast and read any strides", "[reference][binary]") {
  const Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = f32({10, 20, 30}, {3});
  check_values(binary(INGOT_OP_ADD, a, row, {2, 3}), {11, 22, 33, 14, 25, 36}, 0);
  const Tensor col = f32({1, 2}, {2, 1});
  check_values(binary(INGOT_OP_MUL, col, row, {2, 3}), {10, 20, 30, 20, 40, 60}, 0);
  check_values(binary(INGOT_OP_SUB, a, col, {2, 3}), {0, 1, 2, 2, 3, 4}, 0);
  check_values(binary(INGOT_OP_DIV, a, row, {2, 3}), {0.1, 0.1, 0.1, 0.4, 0.25, 0.2}, 1e-7);
  check_values(binary(INGOT_OP_POW, a, f32({2}, {1}), {2, 3}), {1, 4, 9, 16, 25, 36}, 0);

  // a transposed (non-contiguous) input and an expanded (stride 0) one
  const Tensor at = a.transpose(0, 1);  // [3, 2]: 1 4 / 2 5 / 3 6
  REQUIRE_FALSE(at.is_contiguous());
  const Tensor ex = f32({100, 200}, {2}).expand({3, 2});
  check_values(binary(INGOT_OP_ADD, at, ex, {3, 2}), {101, 204, 102, 205, 103, 206}, 0);

  // writing into a non-contiguous output view: every other column of a [2, 4] buffer
  const Tensor buf = zeros({2, 4});
  const Tensor view = buf.slice(1, 0, 4, 2);
  run(INGOT_OP_ADD, {f32({1, 2, 3, 4}, {2, 2}), f32({1}, {1})}, {view});
  check_values(buf, {2, 0, 3, 0, 4, 0, 5, 0}, 0);

  const float nan = std::numeric_limits<float>::quiet_NaN();
  check_values(binary(INGOT_OP_MAXIMUM, f32({1, nan, 3}, {3}), f32({2, 0, nan}, {3}), {3}), {2, NAN, NAN}, 0);
  check_values(binary(INGOT_OP_MINIMUM, f32({1, 5}, {2}), f32({2, 0}, {2}), {2}), {1, 0}, 0);

  const Tensor ia = Tensor::from_vector(std::vector<int64_t>{7, -3}, {2});
  const Tensor ib = Tensor::from_vector(std::vector<int64_t>{5, 4}, {2});
  const Tensor isum = Tensor::empty({2}, DType::I64);
  run(INGOT_OP_MUL, {ia, ib}, {isum});
  CHECK(isum.to_vector<int64_t>() == std::vector<int64_t>{35, -12});

  // zero-size dims: nothing to do, no crash
  const Tensor empty_out = Tensor::empty({0, 3});
  run(INGOT_OP_ADD, {Tensor::empty({0, 3}), row}, {empty_out});
  CHECK(empty_out.numel() == 0);
  // 0-dim scalars broadcast like any other shape
  check_values(binary(INGOT_OP_MUL, a, Tensor::scalar(2.0), {2, 3}), {2, 4, 6, 8, 10, 12}, 0);
}

TEST_CASE("comparisons, logical ops and where", "[reference][binary]") {
  const Tensor a = f32({1, 2, 3}, {3});
  const Tensor b = f32({2}, {1});
  const auto cmp = [&](OpKind op) {
    const Tensor out = Tensor::empty({3}, DType::Bool);
    run(op, {a, b}, {out});
    return out.to_vector<bool>();
  };
  CHECK(cmp(INGOT_OP_EQ) == std::vector<bool>{false, true, false});
  CHECK(cmp(INGOT_OP_NE) == std::vector<bool>{true, false, true});
  CHECK(cmp(INGOT_OP_LT) == std::vector<bool>{true, false, false});
  CHECK(cmp(INGOT_OP_LE) == std::vector<bool>{true, true, false});
  CHECK(cmp(INGOT_OP_GT) == std::vector<bool>{false, false, true});
  CHECK(cmp(INGOT_OP_GE) == std::vector<bool>{false, true, true});
  CHECK(cmp(INGOT_OP_LOGICAL_AND) == std::vector<bool>{true, true, true});
  const Tensor z = f32({0, 1, 0}, {3});
  const Tensor lor = Tensor::empty({3}, DType::Bool);
  run(INGOT_OP_LOGICAL_OR, {z, f32({0}, {1})}, {lor});
  CHECK(lor.to_vector<bool>() == std::vector<bool>{false, true, false});

  const Tensor cond = Tensor::from_vector(std::vector<bool>{true, false}, {2, 1});
  const Tensor out = Tensor::empty({2, 3});
  run(INGOT_OP_WHERE, {cond, a, f32({-1}, {1})}, {out});
  check_values(out, {1, 2, 3, -1, -1, -1}, 0);
}

TEST_CASE("reductions reduce to the output's shape", "[reference][reduce]") {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(reduce(INGOT_OP_SUM, x, {1, 3}), {5, 7, 9}, 0);
  check_values(reduce(INGOT_OP_SUM, x, {2, 1}), {6, 15}, 0);
  check_values(reduce(INGOT_OP_SUM, x, {1, 1}), {21}, 0);
  check_values(reduce(INGOT_OP_SUM, x, {3}), {5, 7, 9}, 0);  // sum-to-shape drops leading dims
  check_values(reduce(INGOT_OP_SUM, x, {}), {21}, 0);
  check_values(reduce(INGOT_OP_MEAN, x, {2, 1}), {2, 5}, 0);
  check_values(reduce(INGOT_OP_MAX, x, {1, 3}), {4, 5, 6}, 0);
  check_values(reduce(INGOT_OP_MIN, x.transpose(0, 1), {3, 1}), {1, 2, 3}, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  check_values(reduce(INGOT_OP_MAX, f32({1, nan, 3}, {3}), {1}), {NAN}, 0);
  check_values(reduce(INGOT_OP_SUM, Tensor::empty({0, 3}), {1, 3}), {0, 0, 0}, 0);
  CHECK(std::isnan(reduce(INGOT_OP_MEAN, Tensor::empty({0}), {1}).item()));
  CHECK_THROWS_WITH(reduce(INGOT_OP_MAX, Tensor::empty({0}), {1}), Contains("no identity"));
  CHECK_THROWS_WITH(reduce(INGOT_OP_SUM, x, {2, 2}), Contains("cannot reduce [2, 3] to [2, 2]"));

  const Tensor xi = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {4});
  const Tensor si = Tensor::empty({1}, DType::I32);
  run(INGOT_OP_SUM, {xi}, {si});
  CHECK(si.to_vector<int32_t>() == std::vector<int32_t>{10});

  auto ax = make_attr<ingot_attr_axis>();
  ax.axis = -1;
  const Tensor am = Tensor::empty({3, 1}, DType::I64);
  run(INGOT_OP_ARGMAX, {f32({1, 5, 5, 7, 2, 7, 0, nan, 9}, {3, 3})}, {am}, &ax);
  CHECK(am.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1});  // first max; NaN wins
}

TEST_CASE("creation, copy and cast", "[reference][creation]") {
  auto ar = make_attr<ingot_attr_arange>();
  ar.start = 1.0;
  ar.step = 0.5;
  const Tensor r = Tensor::empty({4});
  run(INGOT_OP_ARANGE, {}, {r}, &ar);
  check_values(r, {1, 1.5, 2, 2.5}, 0);
  ar.start = 10, ar.step = -3;
  const Tensor ri = Tensor::empty({3}, DType::I64);
  run(INGOT_OP_ARANGE, {}, {ri}, &ar);
  CHECK(ri.to_vector<int64_t>() == std::vector<int64_t>{10, 7, 4});

  auto fill = make_attr<ingot_attr_scalar>();
  fill.value = 2.5;
  const Tensor fh = Tensor::empty({2}, DType::BF16);
  run(INGOT_OP_FILL, {}, {fh}, &fill);
  check_values(fh, {2.5, 2.5}, 0);

  // copy a [2, 3] into the transposed view of a [3, 2] buffer
  const Tensor dst = zeros({3, 2});
  run(INGOT_OP_COPY, {f32({1, 2, 3, 4, 5, 6}, {2, 3})}, {dst.transpose(0, 1)});
  check_values(dst, {1, 4, 2, 5, 3, 6}, 0);
  // copy from a view with a byte offset and an expanded source
  const Tensor src = f32({9, 8, 7, 6}, {4}).slice(0, 2, 4);
  const Tensor d2 = zeros({2, 2});
  run(INGOT_OP_COPY, {src}, {d2});
  check_values(d2, {7, 6, 7, 6}, 0);

  // overlapping source and destination: x[1:] = x[:-1] reads before it writes
  const Tensor shifted = f32({1, 2, 3, 4}, {4});
  run(INGOT_OP_COPY, {shifted.slice(0, 0, 3)}, {shifted.slice(0, 1, 4)});
  check_values(shifted, {1, 1, 2, 3}, 0);

  const Tensor fx = f32({-1.7f, -0.5f, 0.0f, 2.9f, 300.0f}, {5});
  const Tensor ci = Tensor::empty({5}, DType::I32);
  run(INGOT_OP_CAST, {fx}, {ci});
  CHECK(ci.to_vector<int32_t>() == std::vector<int32_t>{-1, 0, 0, 2, 300});  // truncation toward zero
  const Tensor cb = Tensor::empty({5}, DType::Bool);
  run(INGOT_OP_CAST, {fx}, {cb});
  CHECK(cb.to_vector<bool>() == std::vector<bool>{true, true, false, true, true});
  const Tensor ch = Tensor::empty({5}, DType::F16);
  run(INGOT_OP_CAST, {fx}, {ch});
  check_values(ch, {float(Half(-1.7f)), -0.5, 0, float(Half(2.9f)), 300}, 0);
  const Tensor cf = Tensor::empty({3}, DType::F64);
  run(INGOT_OP_CAST, {Tensor::from_vector(std::vector<bool>{true, false, true}, {3})}, {cf});
  check_values(cf, {1, 0, 1}, 0);
  const Tensor big = Tensor::from_vector(std::vector<int64_t>{(int64_t{1} << 53) + 1}, {1});
  const Tensor big2 = Tensor::empty({1}, DType::I64);
  run(INGOT_OP_CAST, {big}, {big2});  // same dtype: exact, no trip through double
  CHECK(big2.to_vector<int64_t>()[0] == (int64_t{1} << 53) + 1);
}

TEST_CASE("concat, pad, gather, index_select, scatter_add", "[reference][indexing]") {
  auto ax = make_attr<ingot_attr_axis>();
  ax.axis = 1;
  const Tensor cat = Tensor::empty({2, 3});
  run(INGOT_OP_CONCAT, {f32({1, 2}, {2, 1}), f32({3, 4, 5, 6}, {2, 2}), Tensor::empty({2, 0})}, {cat}, &ax);
  check_values(cat, {1, 3, 4, 2, 5, 6}, 0);
  CHECK_THROWS_WITH(run(INGOT_OP_CONCAT, {f32({1, 2}, {2, 1})}, {Tensor::empty({2, 3})}, &ax),
                    Contains("inputs cover 1 of the output's 3"));

  auto pad = make_attr<ingot_attr_pad>();
  pad.pads[0] = 1, pad.pads[1] = 0;   // dim 0: one row before
  pad.pads[2] = -1, pad.pads[3] = 1;  // dim 1: crop one column, one column after
  pad.value = 9;
  const Tensor padded = Tensor::empty({3, 3});
  run(INGOT_OP_PAD, {f32({1, 2, 3, 4, 5, 6}, {2, 3})}, {padded}, &pad);
  check_values(padded, {9, 9, 9, 2, 3, 9, 5, 6, 9}, 0);

  const Tensor self = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor idx = Tensor::from_vector(std::vector<int64_t>{2, 0, 1, 1}, {2, 2});
  const Tensor g = Tensor::empty({2, 2});
  run(INGOT_OP_GATHER, {self, idx}, {g}, &ax);
  check_values(g, {3, 1, 5, 5}, 0);

  ax.axis = 0;
  const Tensor sel = Tensor::empty({3, 3});
  run(INGOT_OP_INDEX_SELECT, {self, Tensor::from_vector(std::vector<int64_t>{1, 0, 1}, {3})}, {sel}, &ax);
  check_values(sel, {4, 5, 6, 1, 2, 3, 4, 5, 6}, 0);
  CHECK_THROWS_WITH(run(INGOT_OP_INDEX_SELECT, {self, Tensor::from_vector(std::vector<int64_t>{2}, {1})},
                        {Tensor::empty({1, 3})}, &ax),
                    Contains("index 2 is out of range"));

  // scatter_add along 0: out[idx[i][j]][j] += src[i][j]
  const Tensor sidx = Tensor::from_vector(std::vector<int64_t>{1, 0, 1, 1, 1, 0}, {2, 3});
  const Tensor src = f32({10, 20, 30, 40, 50, 60}, {2, 3});
  const Tensor sa = Tensor::empty({2, 3});
  run(INGOT_OP_SCATTER_ADD, {self, sidx, src}, {sa}, &ax);
  check_values(sa, {1, 22, 63, 54, 55, 36}, 0);
  const Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 0, 2, 0, 0, 0}, {2, 3});
  CHECK_THROWS_WITH(run(INGOT_OP_SCATTER_ADD, {self, bad, src}, {sa}, &ax), Contains("index 2 is out of range"));
}

TEST_CASE("sort and topk are stable and put NaN last (largest)", "[reference][sort]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = f32({3, nan, 1, 3, 2}, {5});
  auto a = make_attr<ingot_attr_sort>();
  a.axis = 0;
  a.stable = 1;
  const Tensor v = Tensor::empty({5}), i = Tensor::empty({5}, DType::I64);
  run(INGOT_OP_SORT, {x}, {v, i}, &a);
  check_values(v, {1, 2, 3, 3, NAN}, 0);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{2, 4, 0, 3, 1});
  a.descending = 1;
  run(INGOT_OP_SORT, {x}, {v, i}, &a);
  check_values(v, {NAN, 3, 3, 2, 1}, 0);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 3, 4, 2});

  // along axis 0 of a transposed matrix, int32
  const Tensor m = Tensor::from_vector(std::vector<int32_t>{5, 1, 4, 2, 3, 6}, {2, 3}).transpose(0, 1);  // [3, 2]
  const Tensor mv = Tensor::empty({3, 2}, DType::I32), mi = Tensor::empty({3, 2}, DType::I64);
  a.descending = 0;
  run(INGOT_OP_SORT, {m}, {mv, mi}, &a);
  CHECK(mv.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 4, 3, 5, 6});
  CHECK(mi.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 2, 1, 0, 2});

  auto t = make_attr<ingot_attr_topk>();
  t.axis = -1, t.k = 2, t.largest = 1, t.sorted = 1;
  const Tensor tv = Tensor::empty({2, 2}), ti = Tensor::empty({2, 2}, DType::I64);
  run(INGOT_OP_TOPK, {f32({1, 9, 4, 9, 0, 2, 8, 5}, {2, 4})}, {tv, ti}, &t);
  check_values(tv, {9, 9, 8, 5}, 0);
  CHECK(ti.to_vector<int64_t>() == std::vector<int64_t>{1, 3, 2, 3});
  t.largest = 0;
  run(INGOT_OP_TOPK, {f32({1, 9, 4, 9, 0, 2, 8, 5}, {2, 4})}, {tv, ti}, &t);
  check_values(tv, {1, 4, 0, 2}, 0);
  t.k = 5;
  CHECK_THROWS_WITH(run(INGOT_OP_TOPK, {f32({1, 2}, {2})}, {tv, ti}, &t), Contains("k = 5 out of range"));
}

TEST_CASE("random ops follow philox.h over the logical row-major index", "[reference][random]") {
  auto a = make_attr<ingot_attr_rng>();
  a.seed = 42, a.offset = 3, a.a = -1.0, a.b = 3.0;
  const Tensor u = Tensor::empty({3, 5});
  run(INGOT_OP_UNIFORM, {}, {u}, &a);
  const std::vector<float> uv = u.to_vector<float>();
  for (uint64_t i = 0; i < 15; ++i) {
    const uint32_t bits = sdk::philox_bits(42, 3, i);
    CHECK(uv[i] == -1.0f + 4.0f * (static_cast<float>(bits >> 8) / 16777216.0f));
  }
  // a transposed output gets the same values at the same logical positions
  const Tensor ut = Tensor::empty({5, 3}).transpose(0, 1);
  run(INGOT_OP_UNIFORM, {}, {ut}, &a);
  CHECK(ut.to_vector<float>() == uv);

  a.a = 0.25;
  const Tensor bern = Tensor::empty({4000}, DType::U8);
  run(INGOT_OP_BERNOULLI, {}, {bern}, &a);
  double ones = 0;
  for (uint8_t v : bern.to_vector<uint8_t>()) {
    REQUIRE(v <= 1);
    ones += v;
  }
  CHECK(ones / 4000 == Approx(0.25).margin(0.03));

  a.a = 2.0, a.b = 0.5;
  const Tensor n = Tensor::empty({8000}, DType::F64);
  run(INGOT_OP_NORMAL, {}, {n}, &a);
  const std::vector<double> nv = n.to_vector<double>();
  double sum = 0, sq = 0;
  for (double v : nv) sum += v, sq += v * v;
  const double mean = sum / 8000, var = sq / 8000 - mean * mean;
  CHECK(mean == Approx(2.0).margin(0.03));
  CHECK(std::sqrt(var) == Approx(0.5).margin(0.03));
  // element 5 = lane 1 of counter offset + 1: the sine half of the (0, 1) pair
  const sdk::PhiloxBlock blk = sdk::philox_block(42, 4);
  const double u1 = (blk.v[0] + 1.0) * std::ldexp(1.0, -32), u2 = blk.v[1] * std::ldexp(1.0, -32);
  CHECK(nv[5] == Approx(2.0 + 0.5 * std::sqrt(-2 * std::log(u1)) * std::sin(2 * std::numbers::pi * u2)).epsilon(1e-12));
}

TEST_CASE("supports() accepts strided host tensors of the op's dtypes only", "[reference][supports]") {
  const Tensor x = f32({1, 2}, {2});
  std::vector<ingot_tensor_desc> in = {make_desc(x)}, out = {make_desc(x)};
  CHECK(supports(INGOT_OP_EXP, in, out));
  in[0].layout = INGOT_LAYOUT_OPAQUE;
  CHECK_FALSE(supports(INGOT_OP_EXP, in, out));
  const Tensor xi = Tensor::from_vector(std::vector<int32_t>{1, 2}, {2});
  in = {make_desc(xi)}, out = {make_desc(xi)};
  CHECK_FALSE(supports(INGOT_OP_EXP, in, out));
  CHECK(supports(INGOT_OP_NEG, in, out));
  const Tensor xb = Tensor::from_vector(std::vector<bool>{true}, {1});
  in = {make_desc(xb)}, out = {make_desc(xb)};
  CHECK_FALSE(supports(INGOT_OP_SUM, in, out));
  CHECK(supports(INGOT_OP_COPY, in, out));
  in[0].device_kind = INGOT_DEVICE_CUDA;
  CHECK_FALSE(supports(INGOT_OP_COPY, in, out));
}

TEST_CASE("integer arithmetic wraps, 0-dim tensors and zero-size dims", "[reference][edge]") {
  const int32_t max = std::numeric_limits<int32_t>::max(), min = std::numeric_limits<int32_t>::min();
  const Tensor big = Tensor::from_vector(std::vector<int32_t>{max, min}, {2});
  const Tensor one = Tensor::from_vector(std::vector<int32_t>{1}, {1});
  CHECK(binary(INGOT_OP_ADD, big, one, {2}).to_vector<int32_t>() == std::vector<int32_t>{min, min + 1});
  CHECK(unary(INGOT_OP_NEG, big).to_vector<int32_t>() == std::vector<int32_t>{-max, min});
  const Tensor u8 = Tensor::from_vector(std::vector<uint8_t>{250, 3}, {2});
  CHECK(reduce(INGOT_OP_SUM, u8, {1}).to_vector<uint8_t>() == std::vector<uint8_t>{253});
  CHECK(binary(INGOT_OP_MUL, u8, Tensor::from_vector(std::vector<uint8_t>{2}, {1}), {2}).to_vector<uint8_t>() ==
        std::vector<uint8_t>{244, 6});

  // 0-dim: softmax is 1, argmax is 0, sort is the value itself
  auto ax = make_attr<ingot_attr_axis>();
  const Tensor s = Tensor::scalar(3.0);
  check_values(unary(INGOT_OP_SOFTMAX, s, &ax), {1}, 0);
  const Tensor am = Tensor::empty({}, DType::I64);
  run(INGOT_OP_ARGMAX, {s}, {am}, &ax);
  CHECK(am.item() == 0);
  auto so = make_attr<ingot_attr_sort>();
  const Tensor sv = Tensor::empty({}), si = Tensor::empty({}, DType::I64);
  run(INGOT_OP_SORT, {s}, {sv, si}, &so);
  CHECK(sv.item() == 3.0);
  CHECK(si.item() == 0);

  // zero-size dims run and write nothing
  ax.axis = 1;
  check_values(unary(INGOT_OP_LOG_SOFTMAX, Tensor::empty({2, 0}), &ax), {}, 0);
  so.axis = 1;
  const Tensor ev = Tensor::empty({0, 3}), ei = Tensor::empty({0, 3}, DType::I64);
  run(INGOT_OP_SORT, {Tensor::empty({0, 3})}, {ev, ei}, &so);
  const Tensor g = Tensor::empty({2, 0});
  run(INGOT_OP_GATHER, {f32({1, 2}, {2, 1}), Tensor::empty({2, 0}, DType::I64)}, {g}, &ax);
  const Tensor cat = Tensor::empty({0, 2});
  run(INGOT_OP_CONCAT, {Tensor::empty({0, 1}), Tensor::empty({0, 1})}, {cat}, &ax);
  const Tensor cast = Tensor::empty({0}, DType::I8);
  run(INGOT_OP_CAST, {Tensor::empty({0})}, {cast});
  CHECK(cast.numel() == 0);
}

TEST_CASE("bad arguments to any op give a status, never a crash", "[reference][errors]") {
  const ingot_compute_table* t = reference().compute_table();
  alignas(8) unsigned char attrs[512] = {};
  const uint32_t big = sizeof(attrs);
  std::memcpy(attrs, &big, sizeof(big));  // a zeroed attribute struct of any kind
  std::vector<Tensor> keep;
  std::vector<ingot_tensor_desc> in, out;
  for (int i = 0; i < 4; ++i) {
    keep.push_back(f32({1, 2, 3, 4, 5, 6}, {2, 3}));
    in.push_back(make_desc(keep.back()));
    keep.push_back(Tensor::empty(i % 2 == 0 ? Shape{3, 2} : Shape{2, 3}));
    out.push_back(make_desc(keep.back()));
  }
  int failures = 0;
  for (int op = 0; op < INGOT_OP_COUNT; ++op) {
    for (int n_in = 0; n_in <= 4; ++n_in) {
      for (int n_out = 0; n_out <= 3; ++n_out) {
        for (const void* a : {static_cast<const void*>(attrs), static_cast<const void*>(nullptr)}) {
          ingot_status* s = t->execute(t->self, op, in.data(), n_in, out.data(), n_out, a, &exec_context());
          if (s != nullptr) {
            ++failures;
            CHECK(s->message != nullptr);
            s->release(s);
          }
        }
      }
    }
  }
  CHECK(failures > 0);
  ingot_status* s = t->execute(t->self, INGOT_OP_COUNT, nullptr, 0, nullptr, 0, nullptr, &exec_context());
  REQUIRE(s != nullptr);
  CHECK(s->code == INGOT_ERR_INVALID_ARGUMENT);
  s->release(s);
}

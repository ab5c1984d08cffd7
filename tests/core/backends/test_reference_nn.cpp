// Reference backend, network ops: matmul, conv2d (forward against a naive formula, backward by
// adjoint identities), pooling (torch's size and divisor rules), softmax, layer / batch norm
// (backward by central finite differences in f64), global_norm and sgd_update.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <vector>

#include "reference_test_util.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::test::ref;
using ingot::test::conv2d_attr;
using ingot::test::pool2d_attr;
using Catch::Matchers::Contains;

namespace {

Tensor rand64(const Shape& shape, uint64_t seed) { return test::random_tensor(shape, DType::F64, seed); }

/// d/dx of f at x by central differences, element by element (x contiguous f64, perturbed in place).
std::vector<double> numeric_grad(const Tensor& x, const std::function<double()>& f) {
  std::vector<double> g(static_cast<size_t>(x.numel()));
  double* p = x.data<double>();
  const double h = 1e-6;
  for (size_t i = 0; i < g.size(); ++i) {
    const double keep = p[i];
    p[i] = keep + h;
    const double up = f();
    p[i] = keep - h;
    const double down = f();
    p[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

}  // namespace

TEST_CASE("matmul: hand values, bias and activation, broadcast batches, strides", "[reference][matmul]") {
  auto a = make_attr<ingot_attr_matmul>();
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor w = f32({1, 0, 0, 1, 1, 1}, {3, 2});
  Tensor y = Tensor::empty({2, 2});
  run(INGOT_OP_MATMUL, {x, w}, {y}, &a);
  check_values(y, {4, 5, 10, 11}, 0);
  a.has_bias = 1;
  a.activation = INGOT_ACT_RELU;
  run(INGOT_OP_MATMUL, {x, w, f32({1, -20}, {2})}, {y}, &a);
  check_values(y, {5, 0, 11, 0}, 0);
  // b given as the transpose of a contiguous [2, 3]
  a = make_attr<ingot_attr_matmul>();
  run(INGOT_OP_MATMUL, {x, f32({1, 0, 1, 0, 1, 1}, {2, 3}).transpose(0, 1)}, {y}, &a);
  check_values(y, {4, 5, 10, 11}, 0);
  CHECK_THROWS_WITH(run(INGOT_OP_MATMUL, {x, x}, {y}, &a), Contains("a [2, 3] x b [2, 3]"));

  // batch dims broadcast: [2, 1, 3, 4] x [3, 4, 5] -> [2, 3, 3, 5], checked against a naive loop
  const Tensor A = rand64({2, 1, 3, 4}, 1), B = rand64({3, 4, 5}, 2);
  const Tensor Y = Tensor::empty({2, 3, 3, 5}, DType::F64);
  a.activation = INGOT_ACT_GELU;
  run(INGOT_OP_MATMUL, {A, B}, {Y}, &a);
  const std::vector<double> av = A.to_vector<double>(), bv = B.to_vector<double>();
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double s = 0;
          for (int k = 0; k < 4; ++k) s += av[(i * 3 + m) * 4 + k] * bv[(j * 4 + k) * 5 + n];
          want.push_back(0.5 * s * (1 + std::erf(s / std::sqrt(2.0))));
        }
  check_values(Y, want, 1e-12);
  // zero-size K gives zeros
  const Tensor Z = Tensor::empty({2, 2});
  a = make_attr<ingot_attr_matmul>();
  run(INGOT_OP_MATMUL, {Tensor::empty({2, 0}), Tensor::empty({0, 2})}, {Z}, &a);
  check_values(Z, {0, 0, 0, 0}, 0);
}

TEST_CASE("conv2d: hand values and torch's geometry", "[reference][conv]") {
  const Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor w = f32({1, 0, 0, -1}, {1, 1, 2, 2});
  auto a = conv2d_attr(1, 0, 1, 1);
  Tensor y = Tensor::empty({1, 1, 2, 2});
  run(INGOT_OP_CONV2D, {x, w}, {y}, &a);
  check_values(y, {-4, -4, -4, -4}, 0);
  a = conv2d_attr(2, 1, 1, 1);
  run(INGOT_OP_CONV2D, {x, w}, {y}, &a);
  check_values(y, {-1, -3, -7, -4}, 0);
  CHECK_THROWS_WITH(run(INGOT_OP_CONV2D, {x, w}, {Tensor::empty({1, 1, 3, 3})}, &a), Contains("do not fit"));
}

TEST_CASE("conv2d with groups, dilation, bias and relu matches the naive formula", "[reference][conv]") {
  const int64_t N = 2, C = 4, H = 6, W = 5, O = 6, G = 2, K = 3, S = 2, P = 2, D = 2;
  const int64_t OH = (H + 2 * P - D * (K - 1) - 1) / S + 1, OW = (W + 2 * P - D * (K - 1) - 1) / S + 1;
  const Tensor x = rand64({N, C, H, W}, 3), w = rand64({O, C / G, K, K}, 4), b = rand64({O}, 5);
  auto a = conv2d_attr(S, P, D, G);
  a.has_bias = 1;
  a.activation = INGOT_ACT_RELU;
  const Tensor y = Tensor::empty({N, O, OH, OW}, DType::F64);
  run(INGOT_OP_CONV2D, {x, w, b}, {y}, &a);
  const std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> want;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = bv[o];
          for (int64_t c = 0; c < C / G; ++c)
            for (int64_t p = 0; p < K; ++p)
              for (int64_t q = 0; q < K; ++q) {
                const int64_t r = i * S - P + p * D, t = j * S - P + q * D;
                if (r < 0 || r >= H || t < 0 || t >= W) continue;
                s +=
                    xv[((n * C + o / (O / G) * (C / G) + c) * H + r) * W + t] * wv[((o * (C / G) + c) * K + p) * K + q];
              }
          want.push_back(s > 0 ? s : 0);
        }
  check_values(y, want, 1e-12);
}

TEST_CASE("conv2d backward ops are the adjoints of the forward", "[reference][conv]") {
  // <conv(x, w), gy> = <x, bwd_data(gy, w)> = <w, bwd_weight(x, gy)>
  const auto a = conv2d_attr(2, 1, 2, 2);
  const Tensor x = rand64({2, 4, 7, 6}, 6), w = rand64({4, 2, 3, 2}, 7);
  const int64_t OH = (7 + 2 - 2 * 2 - 1) / 2 + 1, OW = (6 + 2 - 2 * 1 - 1) / 2 + 1;
  const Tensor y = Tensor::empty({2, 4, OH, OW}, DType::F64);
  run(INGOT_OP_CONV2D, {x, w}, {y}, &a);
  const Tensor gy = rand64(y.shape(), 8);
  const Tensor gx = Tensor::empty(x.shape(), DType::F64), gw = Tensor::empty(w.shape(), DType::F64);
  run(INGOT_OP_CONV2D_BWD_DATA, {gy, w}, {gx}, &a);
  run(INGOT_OP_CONV2D_BWD_WEIGHT, {x, gy}, {gw}, &a);
  const double lhs = dot(y, gy);
  CHECK(dot(x, gx) == Approx(lhs).epsilon(1e-12));
  CHECK(dot(w, gw) == Approx(lhs).epsilon(1e-12));
}

TEST_CASE("max_pool2d: values, torch indices, ceil_mode and backward", "[reference][pool]") {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  auto a = pool2d_attr(2, 2, 0, false);
  const Tensor y = Tensor::empty({1, 1, 2, 2}), idx = Tensor::empty({1, 1, 2, 2}, DType::I64);
  run(INGOT_OP_MAX_POOL2D, {f32(v, {1, 1, 4, 4})}, {y, idx}, &a);
  check_values(y, {5, 7, 13, 15}, 0);
  CHECK(idx.to_vector<int64_t>() == std::vector<int64_t>{5, 7, 13, 15});
  const Tensor gx = Tensor::empty({1, 1, 4, 4});
  run(INGOT_OP_MAX_POOL2D_BWD, {f32({1, 2, 3, 4}, {1, 1, 2, 2}), f32(v, {1, 1, 4, 4}), idx}, {gx}, &a);
  check_values(gx, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}, 0);

  // 5x5, kernel 2, stride 2, ceil_mode: 3x3 windows, the last ones clipped
  std::vector<float> v5(25);
  for (int i = 0; i < 25; ++i) v5[i] = static_cast<float>(i);
  a = pool2d_attr(2, 2, 0, true);
  const Tensor y5 = Tensor::empty({1, 3, 3}), i5 = Tensor::empty({1, 3, 3}, DType::I64);  // CHW works too
  run(INGOT_OP_MAX_POOL2D, {f32(v5, {1, 5, 5})}, {y5, i5}, &a);
  check_values(y5, {6, 8, 9, 16, 18, 19, 21, 23, 24}, 0);
  // torch's rule: with padding 1, a 4th window would start in the right padding -> 3 windows
  a = pool2d_attr(2, 2, 1, true);
  const Tensor y3 = Tensor::empty({1, 1, 3, 3}), i3 = Tensor::empty({1, 1, 3, 3}, DType::I64);
  run(INGOT_OP_MAX_POOL2D, {f32(v5, {1, 1, 5, 5})}, {y3, i3}, &a);
  check_values(y3, {0, 2, 4, 10, 12, 14, 20, 22, 24}, 0);
  const Tensor y4 = Tensor::empty({1, 1, 4, 4}), i4 = Tensor::empty({1, 1, 4, 4}, DType::I64);
  CHECK_THROWS_WITH(run(INGOT_OP_MAX_POOL2D, {f32(v5, {1, 1, 5, 5})}, {y4, i4}, &a), Contains("does not pool to"));
}

TEST_CASE("avg_pool2d: count_include_pad and ceil_mode divisors like torch", "[reference][pool]") {
  const Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor y = Tensor::empty({1, 1, 2, 2});
  auto a = pool2d_attr(2, 2, 1, false, true);
  run(INGOT_OP_AVG_POOL2D, {x}, {y}, &a);
  check_values(y, {0.25, 1.25, 2.75, 7}, 0);
  a = pool2d_attr(2, 2, 1, false, false);
  run(INGOT_OP_AVG_POOL2D, {x}, {y}, &a);
  check_values(y, {1, 2.5, 5.5, 7}, 0);
  // ceil_mode windows past the input are not counted, even with count_include_pad
  a = pool2d_attr(2, 2, 0, true, true);
  run(INGOT_OP_AVG_POOL2D, {x}, {y}, &a);
  check_values(y, {3, 4.5, 7.5, 9}, 0);

  // backward is the adjoint: <avg(x), gy> = <x, avg_bwd(gy)>
  for (bool include : {true, false}) {
    a = pool2d_attr(3, 2, 1, true, include);
    const Tensor xr = rand64({2, 3, 6, 7}, 9);
    const Tensor yr = Tensor::empty({2, 3, 4, 4}, DType::F64);
    run(INGOT_OP_AVG_POOL2D, {xr}, {yr}, &a);
    const Tensor gy = rand64(yr.shape(), 10), gx = Tensor::empty(xr.shape(), DType::F64);
    run(INGOT_OP_AVG_POOL2D_BWD, {gy}, {gx}, &a);
    CHECK(dot(xr, gx) == Approx(dot(yr, gy)).epsilon(1e-12));
  }
}

TEST_CASE("softmax and log_softmax, forward and backward", "[reference][softmax]") {
  auto ax = make_attr<ingot_attr_axis>();
  ax.axis = -1;
  const Tensor s = Tensor::empty({1, 3});
  run(INGOT_OP_SOFTMAX, {f32({1, 2, 3}, {1, 3})}, {s}, &ax);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  check_values(s, {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z}, 1e-6);
  run(INGOT_OP_LOG_SOFTMAX, {f32({1000, 1001, 1002}, {1, 3})}, {s}, &ax);  // stable for large inputs
  check_values(s, {1 - std::log(z), 2 - std::log(z), 3 - std::log(z)}, 1e-6);

  // backward along axis 0 of a [3, 2] tensor against finite differences of sum(gy * y)
  ax.axis = 0;
  for (OpKind op : {INGOT_OP_SOFTMAX, INGOT_OP_LOG_SOFTMAX}) {
    const OpKind bwd = op == INGOT_OP_SOFTMAX ? INGOT_OP_SOFTMAX_BWD : INGOT_OP_LOG_SOFTMAX_BWD;
    const Tensor x = rand64({3, 2}, 11), gy = rand64({3, 2}, 12);
    const Tensor y = Tensor::empty({3, 2}, DType::F64), gx = Tensor::empty({3, 2}, DType::F64);
    const auto f = [&] {
      run(op, {x}, {y}, &ax);
      return dot(y, gy);
    };
    const std::vector<double> want = numeric_grad(x, f);
    f();
    run(bwd, {y, gy}, {gx}, &ax);
    check_values(gx, want, 1e-7);
  }
}

TEST_CASE("layer_norm forward and backward", "[reference][norm]") {
  auto a = make_attr<ingot_attr_layer_norm>();
  a.normalized_ndim = 1;
  a.has_affine = 1;
  a.eps = 1e-5;
  const Tensor y = Tensor::empty({2, 3}), mean = Tensor::empty({2}), rstd = Tensor::empty({2});
  run(INGOT_OP_LAYER_NORM, {f32({1, 2, 3, 0, 0, 6}, {2, 3}), f32({1, 2, 3}, {3}), f32({0, 0, 1}, {3})}, {y, mean, rstd},
      &a);
  const double r0 = 1 / std::sqrt(2.0 / 3 + 1e-5), r1 = 1 / std::sqrt(8.0 + 1e-5);
  check_values(y, {-r0, 0, 3 * r0 + 1, -2 * r1, -4 * r1, 3 * 4 * r1 + 1}, 1e-6);
  check_values(mean, {2, 2}, 1e-7);
  check_values(rstd, {r0, r1}, 1e-6);

  // backward over the last two dims against finite differences of sum(gy * y)
  a.normalized_ndim = 2;
  const Tensor x = rand64({2, 3, 4}, 13), w = rand64({3, 4}, 14), b = rand64({3, 4}, 15), gy = rand64({2, 3, 4}, 16);
  const Tensor y2 = Tensor::empty({2, 3, 4}, DType::F64), m2 = Tensor::empty({2}, DType::F64),
               r2 = Tensor::empty({2}, DType::F64);
  const auto f = [&] {
    run(INGOT_OP_LAYER_NORM, {x, w, b}, {y2, m2, r2}, &a);
    return dot(y2, gy);
  };
  const std::vector<double> want_x = numeric_grad(x, f), want_w = numeric_grad(w, f), want_b = numeric_grad(b, f);
  f();
  const Tensor gx = Tensor::empty(x.shape(), DType::F64), gw = Tensor::empty(w.shape(), DType::F64),
               gb = Tensor::empty(b.shape(), DType::F64);
  run(INGOT_OP_LAYER_NORM_BWD, {gy, x, m2, r2, w}, {gx, gw, gb}, &a);
  check_values(gx, want_x, 1e-6);
  check_values(gw, want_w, 1e-6);
  check_values(gb, want_b, 1e-6);

  // without affine: weight / bias and their gradients are 0-size
  a.has_affine = 0;
  const Tensor none = Tensor::empty({0}, DType::F64);
  run(INGOT_OP_LAYER_NORM, {x, none, none}, {y2, m2, r2}, &a);
  run(INGOT_OP_LAYER_NORM_BWD, {gy, x, m2, r2, none}, {gx, none, none}, &a);
}

TEST_CASE("batch_norm: batch statistics, running stats, eval mode and backward", "[reference][norm]") {
  auto a = make_attr<ingot_attr_batch_norm>();
  a.training = 1;
  a.has_affine = 1;
  a.eps = 0.0;
  a.momentum = 0.1;
  // x [N=2, C=2, 2]: channel 0 holds 1, 2, 5, 6 (mean 3.5, var 4.25); channel 1 holds 3, 3, 3, 7
  const Tensor x = f32({1, 2, 3, 3, 5, 6, 3, 7}, {2, 2, 2});
  const Tensor rm = f32({0, 1}, {2}), rv = f32({1, 1}, {2});
  const Tensor y = Tensor::empty({2, 2, 2}), sm = Tensor::empty({2}), si = Tensor::empty({2});
  run(INGOT_OP_BATCH_NORM, {x, f32({1, 2}, {2}), f32({0, 1}, {2}), rm, rv}, {y, sm, si}, &a);
  const double i0 = 1 / std::sqrt(4.25), i1 = 1 / std::sqrt(3.0);
  check_values(sm, {3.5, 4}, 1e-7);
  check_values(si, {i0, i1}, 1e-6);
  check_values(y, {-2.5 * i0, -1.5 * i0, 2 * -i1 + 1, 2 * -i1 + 1, 1.5 * i0, 2.5 * i0, 2 * -i1 + 1, 2 * 3 * i1 + 1},
               1e-6);
  check_values(rm, {0.35, 0.9 + 0.4}, 1e-6);                      // 0.9 * old + 0.1 * mean
  check_values(rv, {0.9 + 0.1 * 17.0 / 3, 0.9 + 0.1 * 4}, 1e-6);  // unbiased variance: 17/3 and 12/3

  a.training = 0;  // eval: running statistics
  run(INGOT_OP_BATCH_NORM, {x, f32({1, 1}, {2}), f32({0, 0}, {2}), f32({1, 3}, {2}), f32({4, 1}, {2})}, {y, sm, si},
      &a);
  check_values(y, {0, 0.5, 0, 0, 2, 2.5, 0, 4}, 1e-7);

  // training backward against finite differences
  a.training = 1;
  a.eps = 1e-5;
  const Tensor xr = rand64({3, 2, 2, 2}, 17), w = rand64({2}, 18), b = rand64({2}, 19), gy = rand64({3, 2, 2, 2}, 20);
  const Tensor yr = Tensor::empty(xr.shape(), DType::F64), mr = Tensor::empty({2}, DType::F64),
               ir = Tensor::empty({2}, DType::F64), none = Tensor::empty({0}, DType::F64);
  const auto f = [&] {
    run(INGOT_OP_BATCH_NORM, {xr, w, b, none, none}, {yr, mr, ir}, &a);
    return dot(yr, gy);
  };
  const std::vector<double> want_x = numeric_grad(xr, f), want_w = numeric_grad(w, f), want_b = numeric_grad(b, f);
  f();
  const Tensor gx = Tensor::empty(xr.shape(), DType::F64), gw = Tensor::empty({2}, DType::F64),
               gb = Tensor::empty({2}, DType::F64);
  run(INGOT_OP_BATCH_NORM_BWD, {gy, xr, w, mr, ir}, {gx, gw, gb}, &a);
  check_values(gx, want_x, 1e-6);
  check_values(gw, want_w, 1e-6);
  check_values(gb, want_b, 1e-6);
}

TEST_CASE("global_norm and sgd_update", "[reference][optim]") {
  const Tensor n = Tensor::empty({});
  run(INGOT_OP_GLOBAL_NORM, {f32({3, 4}, {2}), f64({12}, {1}), Tensor::empty({0})}, {n});
  CHECK(n.item() == 13.0);

  auto a = make_attr<ingot_attr_sgd>();
  a.lr = 0.1, a.momentum = 0.9, a.weight_decay = 0.01, a.first_step = 1;
  const Tensor p = f64({1, 2}, {2}), g = f64({0.5, -1}, {2}), buf = Tensor::empty({2}, DType::F64);
  run(INGOT_OP_SGD_UPDATE, {p, g, buf}, {}, &a);
  check_values(buf, {0.51, -0.98}, 1e-12);
  check_values(p, {0.949, 2.098}, 1e-12);
  a.first_step = 0;
  run(INGOT_OP_SGD_UPDATE, {p, g, buf}, {}, &a);
  check_values(buf, {0.96849, -1.86102}, 1e-12);
  check_values(p, {0.852151, 2.284102}, 1e-12);

  // nesterov with dampening: g' = g + wd*p; buf = m*buf + (1-d)*g'; step = g' + m*buf
  a.nesterov = 1, a.dampening = 0.5, a.weight_decay = 0;
  const Tensor p2 = f64({1}, {1}), b2 = f64({2}, {1});
  run(INGOT_OP_SGD_UPDATE, {p2, f64({1}, {1}), b2}, {}, &a);
  check_values(b2, {0.9 * 2 + 0.5}, 1e-12);
  check_values(p2, {1 - 0.1 * (1 + 0.9 * 2.3)}, 1e-12);

  // plain SGD: no buffer needed; several (param, grad, buf) triples in one call
  a = make_attr<ingot_attr_sgd>();
  a.lr = 0.5;
  const Tensor q1 = f32({1, 1}, {2}), q2 = f32({4}, {1});
  run(INGOT_OP_SGD_UPDATE, {q1, f32({2, 4}, {2}), Tensor::empty({0}), q2, f32({1}, {1}), Tensor::empty({0})}, {}, &a);
  check_values(q1, {0, -1}, 0);
  check_values(q2, {3.5}, 0);
}

TEST_CASE("f16 / bf16 inputs are computed in double and rounded once", "[reference][half]") {
  for (DType dt : {DType::F16, DType::BF16}) {
    INFO(dtype_name(dt));
    const Tensor a = rand64({3, 8}, 21).to(dt), b = rand64({8, 4}, 22).to(dt);
    auto mm = make_attr<ingot_attr_matmul>();
    const Tensor y = Tensor::empty({3, 4}, dt), y64 = Tensor::empty({3, 4}, DType::F64);
    run(INGOT_OP_MATMUL, {a, b}, {y}, &mm);
    run(INGOT_OP_MATMUL, {a.to(DType::F64), b.to(DType::F64)}, {y64}, &mm);
    CHECK(y.to_vector<double>() == y64.to(dt).to_vector<double>());

    auto ln = make_attr<ingot_attr_layer_norm>();
    ln.normalized_ndim = 1;
    ln.eps = 1e-5;
    const Tensor none = Tensor::empty({0}, dt);
    const Tensor z = Tensor::empty({3, 8}, dt), mean = Tensor::empty({3}), rstd = Tensor::empty({3});
    const Tensor z64 = Tensor::empty({3, 8}, DType::F64), mean64 = Tensor::empty({3}, DType::F64),
                 rstd64 = Tensor::empty({3}, DType::F64);
    run(INGOT_OP_LAYER_NORM, {a, none, none}, {z, mean, rstd}, &ln);  // half input, f32 statistics
    run(INGOT_OP_LAYER_NORM, {a.to(DType::F64), none.to(DType::F64), none.to(DType::F64)}, {z64, mean64, rstd64}, &ln);
    CHECK(z.to_vector<double>() == z64.to(dt).to_vector<double>());
    CHECK(rstd.to_vector<float>() == rstd64.to(DType::F32).to_vector<float>());

    auto ax = make_attr<ingot_attr_axis>();
    ax.axis = 1;
    const Tensor s = Tensor::empty({3, 8}, dt), s64 = Tensor::empty({3, 8}, DType::F64);
    run(INGOT_OP_SOFTMAX, {a}, {s}, &ax);
    run(INGOT_OP_SOFTMAX, {a.to(DType::F64)}, {s64}, &ax);
    CHECK(s.to_vector<double>() == s64.to(dt).to_vector<double>());
  }
}

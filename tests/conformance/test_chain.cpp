// Chains of ops through dispatch with one backend enabled: its opaque layouts flow from op to op
// (and are reordered when another backend or the test reads them). Compared with the reference.
#include <catch2/catch.hpp>

#include <iostream>

#include "conformance_runner.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot::conformance {
namespace {

ingot_attr_conv2d conv_attr(bool bias, int32_t act) {
  auto a = make_attr<ingot_attr_conv2d>();
  a.stride[0] = a.stride[1] = 1;
  a.padding[0] = a.padding[1] = 1;
  a.dilation[0] = a.dilation[1] = 1;
  a.groups = 1;
  a.has_bias = bias ? 1 : 0;
  a.activation = act;
  return a;
}

ingot_attr_pool2d pool_attr() {
  auto a = make_attr<ingot_attr_pool2d>();
  a.kernel[0] = a.kernel[1] = 2;
  a.stride[0] = a.stride[1] = 2;
  a.count_include_pad = 1;
  return a;
}

// A small CNN step (forward and the start of backward) on whichever backends are enabled;
// returns every intermediate read back as strided host tensors, and counts those that came out
// in a backend's own (opaque) layout.
std::vector<Tensor> cnn_step(const std::vector<Tensor>& params, int& opaque) {
  const Tensor& x = params[0];
  const auto c1 = conv_attr(true, INGOT_ACT_RELU), c2 = conv_attr(false, INGOT_ACT_NONE);
  const auto pool = pool_attr();
  auto bn = make_attr<ingot_attr_batch_norm>();
  bn.training = 1, bn.has_affine = 1, bn.eps = 1e-5, bn.momentum = 0.1;
  auto axis = make_attr<ingot_attr_axis>();
  axis.axis = 1;

  const Tensor h1 = run_op(INGOT_OP_CONV2D, {x, params[1], params[2]}, {{{2, 8, 9, 9}, DType::F32}}, &c1)[0];
  const Tensor rm = params[5].clone(), rv = params[6].clone();
  const std::vector<Tensor> h2 = run_op(INGOT_OP_BATCH_NORM, {h1, params[3], params[4], rm, rv},
                                        {{{2, 8, 9, 9}, DType::F32}, {{8}, DType::F32}, {{8}, DType::F32}}, &bn);
  const std::vector<Tensor> h3 =
      run_op(INGOT_OP_MAX_POOL2D, {h2[0]}, {{{2, 8, 4, 4}, DType::F32}, {{2, 8, 4, 4}, DType::I64}}, &pool);
  const Tensor h4 = run_op(INGOT_OP_CONV2D, {h3[0], params[7]}, {{{2, 4, 4, 4}, DType::F32}}, &c2)[0];
  const Tensor h5 = run_op(INGOT_OP_AVG_POOL2D, {h4}, {{{2, 4, 2, 2}, DType::F32}}, &pool)[0];
  const Tensor y = run_op(INGOT_OP_SOFTMAX, {h5}, {{{2, 4, 2, 2}, DType::F32}}, &axis)[0];
  // backward through the last layers, fed by the forward's (possibly opaque) tensors
  const Tensor gy = run_op(INGOT_OP_SOFTMAX_BWD, {y, params[8]}, {{{2, 4, 2, 2}, DType::F32}}, &axis)[0];
  const Tensor g5 = run_op(INGOT_OP_AVG_POOL2D_BWD, {gy}, {{{2, 4, 4, 4}, DType::F32}}, &pool)[0];
  const Tensor g4 = run_op(INGOT_OP_CONV2D_BWD_DATA, {g5, params[7]}, {{{2, 8, 4, 4}, DType::F32}}, &c2)[0];
  const Tensor gw = run_op(INGOT_OP_CONV2D_BWD_WEIGHT, {h3[0], g5}, {{{4, 8, 3, 3}, DType::F32}}, &c2)[0];
  const Tensor g3 = run_op(INGOT_OP_MAX_POOL2D_BWD, {g4, h2[0], h3[1]}, {{{2, 8, 9, 9}, DType::F32}}, &pool)[0];
  std::vector<Tensor> out;
  opaque = 0;
  for (const Tensor& t : {h1, h2[0], rm, rv, h3[0], h4, h5, y, gy, g5, g4, gw, g3}) {
    opaque += t.is_opaque() ? 1 : 0;
    out.push_back(t.strided());
  }
  return out;
}

// The same kind of step in mixed precision: bf16 convs (bias and relu fused) and a batch norm on
// their bf16 output with f32 statistics, the casts to and from f32 that autocast puts around the
// f32 part (relu and max pool here), bf16 pooling and the bf16 backward ops, bias gradients summed
// from bf16. Blocked bf16 layouts flow from the conv into batch norm, the cast and the backward.
std::vector<Tensor> bf16_cnn_step(const std::vector<Tensor>& p, int& opaque) {
  constexpr DType bf16 = DType::BF16, f32 = DType::F32;
  const auto c1 = conv_attr(true, INGOT_ACT_RELU), c2 = conv_attr(false, INGOT_ACT_NONE);
  const auto pool = pool_attr();
  auto bn = make_attr<ingot_attr_batch_norm>();
  bn.training = 1, bn.has_affine = 1, bn.eps = 1e-5, bn.momentum = 0.1;
  const Shape act{2, 8, 9, 9}, ch{8};

  const Tensor h1 = run_op(INGOT_OP_CONV2D, {p[0], p[1], p[2]}, {{act, bf16}}, &c1)[0];
  const Tensor rm = p[5].clone(), rv = p[6].clone();
  const std::vector<Tensor> h2 =
      run_op(INGOT_OP_BATCH_NORM, {h1, p[3], p[4], rm, rv}, {{act, bf16}, {ch, f32}, {ch, f32}}, &bn);
  const Tensor h3 = run_op(INGOT_OP_CAST, {h2[0]}, {{act, f32}})[0];
  const Tensor h4 = run_op(INGOT_OP_RELU, {h3}, {{act, f32}})[0];
  const Tensor h5 = run_op(INGOT_OP_MAX_POOL2D, {h4}, {{{2, 8, 4, 4}, f32}, {{2, 8, 4, 4}, DType::I64}}, &pool)[0];
  const Tensor h6 = run_op(INGOT_OP_CAST, {h5}, {{{2, 8, 4, 4}, bf16}})[0];
  const Tensor h7 = run_op(INGOT_OP_CONV2D, {h6, p[7]}, {{{2, 4, 4, 4}, bf16}}, &c2)[0];
  const Tensor h8 = run_op(INGOT_OP_AVG_POOL2D, {h7}, {{{2, 4, 2, 2}, bf16}}, &pool)[0];
  // backward, fed by the forward's (possibly blocked) tensors
  const Tensor g7 = run_op(INGOT_OP_AVG_POOL2D_BWD, {p[8]}, {{{2, 4, 4, 4}, bf16}}, &pool)[0];
  const Tensor g6 = run_op(INGOT_OP_CONV2D_BWD_DATA, {g7, p[7]}, {{{2, 8, 4, 4}, bf16}}, &c2)[0];
  const Tensor gw2 = run_op(INGOT_OP_CONV2D_BWD_WEIGHT, {h6, g7}, {{{4, 8, 3, 3}, bf16}}, &c2)[0];
  const Tensor gb2 = run_op(INGOT_OP_SUM, {g7}, {{{1, 4, 1, 1}, bf16}})[0];
  const std::vector<Tensor> g2 =
      run_op(INGOT_OP_BATCH_NORM_BWD, {p[9], h1, p[3], h2[1], h2[2]}, {{act, bf16}, {ch, bf16}, {ch, bf16}}, &bn);
  const Tensor g1 = run_op(INGOT_OP_RELU_BWD, {g2[0], h1}, {{act, bf16}})[0];
  const Tensor gw1 = run_op(INGOT_OP_CONV2D_BWD_WEIGHT, {p[0], g1}, {{{8, 3, 3, 3}, bf16}}, &c1)[0];
  const Tensor gb1 = run_op(INGOT_OP_SUM, {g1}, {{{1, 8, 1, 1}, f32}})[0];
  // Max pooling on a blocked bf16 conv output, 2x2 and with overlapping 3x3 windows (whose backward
  // adds several gradients into one input), and the backward through the forward's indices.
  // Integer data makes the conv exact on every backend, so the arg-max of each window (ties
  // included: the first in row-major order) is the same everywhere.
  auto pool3 = make_attr<ingot_attr_pool2d>();
  pool3.kernel[0] = pool3.kernel[1] = 3;
  pool3.stride[0] = pool3.stride[1] = 2;
  pool3.padding[0] = pool3.padding[1] = 1;
  const Tensor hp = run_op(INGOT_OP_CONV2D, {p[10], p[11]}, {{act, bf16}}, &c2)[0];
  const std::vector<Tensor> hq =
      run_op(INGOT_OP_MAX_POOL2D, {hp}, {{{2, 8, 5, 5}, bf16}, {{2, 8, 5, 5}, DType::I64}}, &pool3);
  const Tensor gq = run_op(INGOT_OP_MAX_POOL2D_BWD, {p[12], hp, hq[1]}, {{act, bf16}}, &pool3)[0];
  const std::vector<Tensor> hr =
      run_op(INGOT_OP_MAX_POOL2D, {hp}, {{{2, 8, 4, 4}, bf16}, {{2, 8, 4, 4}, DType::I64}}, &pool);
  const Tensor gr = run_op(INGOT_OP_MAX_POOL2D_BWD, {p[13], hp, hr[1]}, {{act, bf16}}, &pool)[0];
  std::vector<Tensor> out;
  opaque = 0;
  for (const Tensor& t : {h1,  h2[0], h2[1], h2[2], rm, rv,  h3,  h5, h7,    h8, g7,    g6, gw2,
                          gb2, g2[0], g2[1], g2[2], g1, gw1, gb1, hp, hq[0], gq, hr[0], gr}) {
    opaque += t.is_opaque() ? 1 : 0;
    out.push_back(t.strided());
  }
  return out;
}

}  // namespace

TEST_CASE("conformance: a CNN step through dispatch matches the reference", "[conformance][chain]") {
  const std::vector<Tensor> params = {
      test::random_tensor({2, 3, 9, 9}, DType::F32, 1),  test::random_tensor({8, 3, 3, 3}, DType::F32, 2),
      test::random_tensor({8}, DType::F32, 3),           test::random_tensor({8}, DType::F32, 4, 0.5, 1.5),
      test::random_tensor({8}, DType::F32, 5),           test::random_tensor({8}, DType::F32, 6),
      test::random_tensor({8}, DType::F32, 7, 0.5, 2.0), test::random_tensor({4, 8, 3, 3}, DType::F32, 8),
      test::random_tensor({2, 4, 2, 2}, DType::F32, 9)};
  std::vector<Tensor> expected;
  int opaque = 0;
  {
    const DispatchOnly only(BackendRegistry::instance().reference().name());
    expected = cnn_step(params, opaque);
  }
  for (const Backend* b : backends_under_test()) {
    if (b->device_kind() != DeviceKind::CPU) continue;  // the chain's tensors live on the host
    INFO("backend " << b->name());
    std::vector<Tensor> got;
    {
      const DispatchOnly only(b->name());
      REQUIRE_NOTHROW(got = cnn_step(params, opaque));
    }
    std::cout << "conformance: CNN step on " << b->name() << ": " << opaque << " of " << got.size()
              << " intermediates in the backend's own layout\n";
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("intermediate " << i << " " << got[i].shape().str());
      INGOT_REQUIRE_CLOSE(got[i], expected[i], 1e-4, 1e-4);
    }
  }
}

TEST_CASE("conformance: a bf16 CNN step through dispatch matches the reference", "[conformance][chain]") {
  const auto bf16 = [](const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
    return test::random_tensor(s, DType::F32, seed, lo, hi).to(DType::BF16);
  };
  const auto ints = [](const Shape& s, uint64_t seed, int lo, int hi) {
    return test::random_tensor(s, DType::I64, seed, lo - 0.49, hi + 0.49).to(DType::BF16);
  };
  const std::vector<Tensor> params = {bf16({2, 3, 9, 9}, 1),
                                      bf16({8, 3, 3, 3}, 2),
                                      bf16({8}, 3),
                                      bf16({8}, 4, 0.5, 1.5),
                                      bf16({8}, 5),
                                      test::random_tensor({8}, DType::F32, 6),
                                      test::random_tensor({8}, DType::F32, 7, 0.5, 2.0),
                                      bf16({4, 8, 3, 3}, 8),
                                      bf16({2, 4, 2, 2}, 9),
                                      bf16({2, 8, 9, 9}, 10),
                                      ints({2, 3, 9, 9}, 11, -2, 2),
                                      ints({8, 3, 3, 3}, 12, -1, 1),
                                      bf16({2, 8, 5, 5}, 13),
                                      bf16({2, 8, 4, 4}, 14)};
  std::vector<Tensor> expected;
  int opaque = 0;
  {
    const DispatchOnly only(BackendRegistry::instance().reference().name());
    expected = bf16_cnn_step(params, opaque);
  }
  for (const Backend* b : backends_under_test()) {
    if (b->device_kind() != DeviceKind::CPU) continue;
    INFO("backend " << b->name());
    std::vector<Tensor> got;
    {
      const DispatchOnly only(b->name());
      REQUIRE_NOTHROW(got = bf16_cnn_step(params, opaque));
    }
    std::cout << "conformance: bf16 CNN step on " << b->name() << ": " << opaque << " of " << got.size()
              << " intermediates in the backend's own layout\n";
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("intermediate " << i << " " << got[i].shape().str() << " " << dtype_name(got[i].dtype()));
      REQUIRE(got[i].dtype() == expected[i].dtype());
      // f32 as the f32 chain; bf16: 4 ulps (a few roundings upstream may each land the other way)
      const bool low = got[i].dtype() == DType::BF16;
      INGOT_REQUIRE_CLOSE(got[i], expected[i], low ? 1.0 / 1024 : 1e-4, low ? 4 * kBf16Ulp : 1e-4);
    }
  }
}

}  // namespace ingot::conformance

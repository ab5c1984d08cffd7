// cpu_onednn blocked layouts through a CNN step: conv -> batch norm -> max pool, forward and
// backward through dispatch, stays blocked (max-pool indices kept as oneDNN's workspace and decoded
// for any other reader) and matches the reference backend; dense inputs to batch norm run blocked.
#include <catch2/catch.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/pool.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

using test::random_tensor;

const Backend* onednn() { return test::plugin_backend_or_skip("cpu_onednn", "cpu_onednn"); }

const Backend& reference() { return BackendRegistry::instance().reference(); }

/// While alive, dispatch sees only backend `name` (and the reference, always enabled).
struct DispatchOnly {
  explicit DispatchOnly(const std::string& name) { BackendRegistry::instance().restrict_to({name}); }
  ~DispatchOnly() { BackendRegistry::instance().restrict_to({}); }
};

Tensor rnd(const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return random_tensor(s, DType::F32, seed, lo, hi);
}

ingot_attr_batch_norm bn_attr() {
  auto a = make_attr<ingot_attr_batch_norm>();
  a.training = 1, a.has_affine = 1, a.eps = 1e-5, a.momentum = 0.1;
  return a;
}

struct Net {
  int64_t n, cin, c, hw;
  std::vector<Tensor> params;  // x, w, b, gamma, beta, grad of the pooled output
};

Net make_net(int64_t n, int64_t cin, int64_t c, int64_t hw, int64_t pooled, uint64_t seed) {
  Net net{n, cin, c, hw, {}};
  net.params = {rnd({n, cin, hw, hw}, seed), rnd({c, cin, 3, 3}, seed + 1),
                rnd({c}, seed + 2),          rnd({c}, seed + 3, 0.5, 1.5),
                rnd({c}, seed + 4),          rnd({n, c, pooled, pooled}, seed + 5)};
  return net;
}

/// conv -> batch norm -> 3x3/2 max pool and back through dispatch; every tensor read back
/// strided. `opaque` names the ones that came out in a backend's own layout.
std::vector<Tensor> cnn_step(const Net& net, int64_t pooled, std::string& opaque) {
  const std::vector<Tensor>& p = net.params;
  const auto conv = test::conv2d_attr(1, 1, 1, 1, true), conv_bwd = test::conv2d_attr(1, 1, 1, 1, false);
  const auto pool = test::pool2d_attr(3, 2, 1, false);
  const auto bn = bn_attr();
  const Shape act{net.n, net.c, net.hw, net.hw}, out{net.n, net.c, pooled, pooled}, ch{net.c};
  const Tensor h = run_op(INGOT_OP_CONV2D, {p[0], p[1], p[2]}, {{act, DType::F32}}, &conv)[0];
  const Tensor rm = zeros(ch), rv = ones(ch);
  const auto y = run_op(INGOT_OP_BATCH_NORM, {h, p[3], p[4], rm, rv},
                        {{act, DType::F32}, {ch, DType::F32}, {ch, DType::F32}}, &bn);
  const auto m = run_op(INGOT_OP_MAX_POOL2D, {y[0]}, {{out, DType::F32}, {out, DType::I64}}, &pool);
  const Tensor gy = run_op(INGOT_OP_MAX_POOL2D_BWD, {p[5], y[0], m[1]}, {{act, DType::F32}}, &pool)[0];
  const auto gh = run_op(INGOT_OP_BATCH_NORM_BWD, {gy, h, p[3], y[1], y[2]},
                         {{act, DType::F32}, {ch, DType::F32}, {ch, DType::F32}}, &bn);
  const Tensor gx = run_op(INGOT_OP_CONV2D_BWD_DATA, {gh[0], p[1]}, {{p[0].shape(), DType::F32}}, &conv_bwd)[0];
  const Tensor gw = run_op(INGOT_OP_CONV2D_BWD_WEIGHT, {p[0], gh[0]}, {{p[1].shape(), DType::F32}}, &conv_bwd)[0];
  const char* names[] = {"h",      "y",      "mean",       "invstd",    "running_var", "pooled", "indices",
                         "grad_y", "grad_h", "grad_gamma", "grad_beta", "grad_x",      "grad_w"};
  std::vector<Tensor> all = {h, y[0], y[1], y[2], rv, m[0], m[1], gy, gh[0], gh[1], gh[2], gx, gw};
  opaque.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].is_opaque()) opaque += std::string(opaque.empty() ? "" : " ") + names[i];
    all[i] = all[i].strided();
  }
  return all;
}

}  // namespace

TEST_CASE("cpu_onednn keeps a conv -> batch norm -> max pool step blocked, forward and backward", "[onednn]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  // 16 channels (whole blocks), 24 (a padded block), 8 (a padded AVX-512 block)
  for (int64_t c : {16, 24, 8}) {
    INFO("channels " << c);
    const Net net = make_net(2, 3, c, 9, 5, 100 + c);
    std::string opaque;
    std::vector<Tensor> expected, got;
    {
      const DispatchOnly only(reference().name());
      expected = cnn_step(net, 5, opaque);
    }
    {
      const DispatchOnly only(be->name());
      got = cnn_step(net, 5, opaque);
    }
    std::cout << "cpu_onednn CNN step, " << c << " channels, in blocked layouts: " << opaque << "\n";
    for (const char* name : {"h", "y", "pooled", "indices", "grad_y", "grad_h"}) {
      INFO(name << " should stay blocked; blocked were: " << opaque);
      CHECK((" " + opaque + " ").find(std::string(" ") + name + " ") != std::string::npos);
    }
    CHECK(be->impl_name(INGOT_OP_BATCH_NORM_BWD).rfind("bnorm_jit", 0) == 0);
    CHECK(be->impl_name(INGOT_OP_MAX_POOL2D_BWD) != "ingot:omp_index_scatter");
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("tensor " << i << " " << got[i].shape().str());
      if (got[i].dtype() == DType::I64) {
        INGOT_REQUIRE_CLOSE(got[i], expected[i], 0.0, 0.0);
      } else {
        INGOT_REQUIRE_CLOSE(got[i], expected[i], 1e-4, 1e-4);
      }
    }
  }
}

TEST_CASE("cpu_onednn max-pool indices kept as its workspace are read by the reference backend", "[onednn]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const auto pool = test::pool2d_attr(2, 2, 0, false);
  const auto conv = test::conv2d_attr(1, 1, 1, 1, false);
  const Tensor x = rnd({2, 4, 8, 8}, 200), w = rnd({16, 4, 3, 3}, 201), gp = rnd({2, 16, 4, 4}, 202);
  const Shape out{2, 16, 4, 4};
  Tensor h;
  std::vector<Tensor> m;
  {
    const DispatchOnly only(be->name());
    h = run_op(INGOT_OP_CONV2D, {x, w}, {{{2, 16, 8, 8}, DType::F32}}, &conv)[0];
    m = run_op(INGOT_OP_MAX_POOL2D, {h}, {{out, DType::F32}, {out, DType::I64}}, &pool);
  }
  REQUIRE(h.is_opaque());
  REQUIRE(m[1].is_opaque());
  // the reference backend gets torch's i64 indices through the plugin's to_strided
  Tensor gx;
  {
    const DispatchOnly only(reference().name());
    gx = run_op(INGOT_OP_MAX_POOL2D_BWD, {gp, h, m[1]}, {{h.shape(), DType::F32}}, &pool)[0];
  }
  CHECK_FALSE(m[1].is_opaque());
  std::vector<Tensor> ref = {Tensor::empty(out), Tensor::empty(out, DType::I64)};
  run_op_on(reference(), INGOT_OP_MAX_POOL2D, {h.strided()}, ref, &pool);
  INGOT_REQUIRE_CLOSE(m[1], ref[1], 0.0, 0.0);
  std::vector<Tensor> ref_gx = {Tensor::empty(h.shape())};
  run_op_on(reference(), INGOT_OP_MAX_POOL2D_BWD, {gp, h, ref[1]}, ref_gx, &pool);
  INGOT_REQUIRE_CLOSE(gx, ref_gx[0], 0.0, 0.0);
}

TEST_CASE("cpu_onednn batch norm on dense 4-d inputs runs blocked and gives a blocked output", "[onednn]") {
  const Backend* be = onednn();
  if (be == nullptr) return;
  const auto bn = bn_attr();
  const Shape s{4, 12, 5, 5}, ch{12};
  const Tensor x = rnd(s, 300), gy = rnd(s, 301), gamma = rnd(ch, 302, 0.5, 1.5), beta = rnd(ch, 303);
  const std::vector<OutputSpec> specs = {{s, DType::F32}, {ch, DType::F32}, {ch, DType::F32}};
  std::vector<Tensor> y, g;
  const Tensor rm = zeros(ch), rv = ones(ch);
  {
    const DispatchOnly only(be->name());
    y = run_op(INGOT_OP_BATCH_NORM, {x, gamma, beta, rm, rv}, specs, &bn);
    g = run_op(INGOT_OP_BATCH_NORM_BWD, {gy, x, gamma, y[1], y[2]}, specs, &bn);
  }
  CHECK(y[0].is_opaque());
  CHECK(g[0].is_opaque());
  CHECK(be->impl_name(INGOT_OP_BATCH_NORM_BWD).rfind("bnorm_jit", 0) == 0);
  std::vector<Tensor> ry = {Tensor::empty(s), Tensor::empty(ch), Tensor::empty(ch)};
  std::vector<Tensor> rg = {Tensor::empty(s), Tensor::empty(ch), Tensor::empty(ch)};
  const Tensor rrm = zeros(ch), rrv = ones(ch);
  run_op_on(reference(), INGOT_OP_BATCH_NORM, {x, gamma, beta, rrm, rrv}, ry, &bn);
  run_op_on(reference(), INGOT_OP_BATCH_NORM_BWD, {gy, x, gamma, ry[1], ry[2]}, rg, &bn);
  for (size_t i = 0; i < 3; ++i) {
    INFO("output " << i);
    INGOT_REQUIRE_CLOSE(y[i].strided(), ry[i], 1e-4, 1e-4);
    INGOT_REQUIRE_CLOSE(g[i].strided(), rg[i], 1e-4, 1e-4);
  }
  INGOT_REQUIRE_CLOSE(rv, rrv, 1e-5, 1e-5);
  // run directly into dense outputs (no layout choice): the blocked result is reordered back
  std::vector<Tensor> dg = {Tensor::empty(s), Tensor::empty(ch), Tensor::empty(ch)};
  run_op_on(*be, INGOT_OP_BATCH_NORM_BWD, {gy, x, gamma, ry[1], ry[2]}, dg, &bn);
  for (size_t i = 0; i < 3; ++i) INGOT_REQUIRE_CLOSE(dg[i], rg[i], 1e-4, 1e-4);
}

TEST_CASE("max_pool2d_values skips the indices only when no graph is recorded", "[onednn]") {
  if (onednn() == nullptr) return;
  Pool2dParams p;
  p.kernel = {2, 2};
  const Tensor x = rnd({2, 16, 8, 8}, 70);
  const Tensor expected = max_pool2d(x, p).y.strided().contiguous();
  {
    NoGradGuard no_grad;
    INGOT_REQUIRE_CLOSE(max_pool2d_values(x, p).strided(), expected, 0.0, 0.0);
  }
  const Tensor w = rnd({2, 16, 8, 8}, 71);
  w.set_requires_grad(true);
  sum(max_pool2d_values(w, p)).backward();  // recorded: indices are computed and used
  const Tensor g = max_pool2d_backward(ones({2, 16, 4, 4}), w.detach(), max_pool2d(w.detach(), p).workspace, p);
  INGOT_REQUIRE_CLOSE(w.grad().strided(), g.strided(), 0.0, 0.0);
}

}  // namespace ingot

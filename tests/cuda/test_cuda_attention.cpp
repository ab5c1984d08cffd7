// The cuda backend's fused attention (k_attention.cu) against the reference, forward and backward,
// f32 / bf16 / f16: D 32 to 128, odd T, Tq != Tk, causal, masks, dropout, strided views, and what
// falls back. Skipped without a GPU; [shared-memory] cases run under gpu-check's racecheck.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cuda_plugin_path.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/op_info.h"
#include "ingot/runtime/registry.h"
#include "require_on_cuda.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};
const Device kCpu = Device::cpu();
constexpr OpKind kFwd = INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION;
constexpr OpKind kBwd = INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;

struct Case {
  int64_t b, h, tq, tk, d, dv;
  int32_t causal = 0;  // 0 none, 1 upper-left, 2 lower-right
  int32_t mask = 0;    // 0 none, 1 bool, 2 additive
  Shape mask_shape{};
  double dropout = 0.0;
  bool strided = false;  // q, k, v as transposed views of [B, H, C, T]
};

std::string describe(const Case& c, DType dt) {
  return fmt::format("{}: B {} H {} Tq {} Tk {} D {} Dv {}, causal {}, mask {} {}, dropout {}{}", dtype_name(dt), c.b,
                     c.h, c.tq, c.tk, c.d, c.dv, c.causal, c.mask, c.mask_shape.str(), c.dropout,
                     c.strided ? ", strided" : "");
}

/// The same values on the host and on the GPU, [b, h, t, c]: contiguous, or a transposed view.
struct Operand {
  Tensor host, gpu;
};

Operand operand(int64_t b, int64_t h, int64_t t, int64_t c, DType dt, uint64_t seed, bool strided, double lo = -1.5,
                double hi = 1.5) {
  if (!strided) {
    const Tensor x = test::random_tensor({b, h, t, c}, dt, seed, lo, hi);
    return {x, x.to(kGpu)};
  }
  const Tensor x = test::random_tensor({b, h, c, t}, dt, seed, lo, hi);
  return {x.transpose(2, 3), x.to(kGpu).transpose(2, 3)};
}

/// A bool mask (row 1 of each [.., Tq, Tk] slice hides every key, the others a scattered few) or
/// an additive one in [-3, 0) with -inf entries (row 0 of each slice entirely).
Operand mask_operand(const Case& c, DType dt) {
  const Shape& s = c.mask_shape;
  const int64_t n = s.numel(), rows = s[2], cols = s[3];
  std::vector<float> v(static_cast<size_t>(n));
  const Tensor noise = test::random_tensor(s, DType::F32, 99, -3.0, 0.0);
  const std::vector<float> r = noise.to_vector<float>();
  for (int64_t e = 0; e < n; ++e) {
    const int64_t i = e / cols % rows, j = e % cols;
    if (c.mask == 1) {
      v[static_cast<size_t>(e)] = (rows > 1 && i == 1) || (i * 7 + j * 3) % 5 == 0 ? 0.f : 1.f;
    } else {
      const bool hidden = (rows > 1 && i == 0) || (i + 2 * j) % 7 == 0;
      v[static_cast<size_t>(e)] = hidden ? -std::numeric_limits<float>::infinity() : r[static_cast<size_t>(e)];
    }
  }
  const Tensor m = Tensor::from_vector(v, s).to(c.mask == 1 ? DType::Bool : dt);
  return {m, m.to(kGpu)};
}

/// |a - b| <= tol + tol * |b|: f32 1e-5 times the square root of the longest reduction behind an
/// output; bf16 and f16 2e-2 (inputs are the same values on both sides; only the f32 sums and the
/// final rounding differ).
double tolerance(DType dt, int64_t reduction) {
  if (dt == DType::F32) return 1e-5 * std::sqrt(static_cast<double>(std::max<int64_t>(reduction, 1)));
  return 2e-2;
}

std::vector<Tensor> on_reference(OpKind op, const std::vector<Tensor>& in, const std::vector<OutputSpec>& outs,
                                 const ingot_attr_attention& attr) {
  std::vector<Tensor> t;
  for (const OutputSpec& o : outs) t.push_back(Tensor::empty(o.shape, o.dtype));
  run_op_on(BackendRegistry::instance().reference(), op, in, t, &attr);
  return t;
}

ingot_attr_attention attr_of(const Case& c) {
  auto a = make_attr<ingot_attr_attention>();
  a.scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  a.causal = c.causal;
  a.mask = c.mask;
  a.dropout_p = c.dropout;
  a.seed = 0x5eed0000u + static_cast<uint64_t>(c.tq * 131 + c.tk);
  a.offset = 7;
  return a;
}

/// Forward and backward on the cuda backend against the reference, for each of f32, bf16, f16.
/// The backward gets the reference forward's o and lse on both sides, so it is checked alone.
void check(const Case& c, bool require_cuda = true) {
  for (const DType dt : {DType::F32, DType::BF16, DType::F16}) {
    INFO(describe(c, dt));
    const ingot_attr_attention attr = attr_of(c);
    const Operand q = operand(c.b, c.h, c.tq, c.d, dt, 1, c.strided),
                  k = operand(c.b, c.h, c.tk, c.d, dt, 2, c.strided);
    const Operand v = operand(c.b, c.h, c.tk, c.dv, dt, 3, c.strided, -1.0, 1.0);
    const Operand go = operand(c.b, c.h, c.tq, c.dv, dt, 4, false, -1.0, 1.0);
    const std::vector<OutputSpec> fwd_out{{Shape{c.b, c.h, c.tq, c.dv}, dt}, {Shape{c.b, c.h, c.tq}, DType::F32}};
    const std::vector<OutputSpec> bwd_out{
        {Shape{c.b, c.h, c.tq, c.d}, dt}, {Shape{c.b, c.h, c.tk, c.d}, dt}, {Shape{c.b, c.h, c.tk, c.dv}, dt}};
    std::vector<Tensor> host_in{q.host, k.host, v.host}, gpu_in{q.gpu, k.gpu, v.gpu};
    Operand mask;
    if (c.mask != 0) {
      mask = mask_operand(c, dt);
      host_in.push_back(mask.host);
      gpu_in.push_back(mask.gpu);
    }
    const std::vector<Tensor> ref = on_reference(kFwd, host_in, fwd_out, attr);
    std::vector<Tensor> bwd_host{go.host, q.host, k.host, v.host, ref[0], ref[1]};
    std::vector<Tensor> bwd_gpu{go.gpu, q.gpu, k.gpu, v.gpu, ref[0].to(kGpu), ref[1].to(kGpu)};
    if (c.mask != 0) {
      bwd_host.push_back(mask.host);
      bwd_gpu.push_back(mask.gpu);
    }
    const std::vector<Tensor> ref_grads = on_reference(kBwd, bwd_host, bwd_out, attr);

    reset_op_counts();
    const std::vector<Tensor> out = run_op(kFwd, gpu_in, fwd_out, &attr);
    const std::vector<Tensor> grads = run_op(kBwd, bwd_gpu, bwd_out, &attr);
    if (require_cuda) test::require_all_on_cuda();

    const double fwd_tol = tolerance(dt, std::max({c.tk, c.d, c.dv}));
    const double lse_tol = tolerance(DType::F32, std::max({c.tk, c.d}));
    const double bwd_tol = tolerance(dt, 4 * std::max({c.tq, c.tk, c.d, c.dv}));
    {
      INFO("o");
      INGOT_REQUIRE_CLOSE(out[0].to(kCpu), ref[0], fwd_tol, fwd_tol);
    }
    {
      INFO("lse");
      INGOT_REQUIRE_CLOSE(out[1].to(kCpu), ref[1], lse_tol, lse_tol);
    }
    const char* names[] = {"grad_q", "grad_k", "grad_v"};
    for (int g = 0; g < 3; ++g) {
      INFO(names[g]);
      INGOT_REQUIRE_CLOSE(grads[static_cast<size_t>(g)].to(kCpu), ref_grads[static_cast<size_t>(g)], bwd_tol, bwd_tol);
    }
  }
}

int64_t ops_on(const std::string& backend) {
  for (const auto& [name, n] : ops_by_backend())
    if (name == backend) return n;
  return 0;
}

TEST_CASE("cuda attention: head sizes 32, 64, 80 and 128, odd T, Tq != Tk", "[cuda][attention]") {
  if (!test::gpu_ready()) return;
  check({1, 2, 17, 33, 32, 32});
  check({2, 1, 130, 17, 64, 64});
  check({1, 2, 33, 130, 80, 80});
  check({1, 1, 130, 130, 128, 128});
  check({1, 2, 17, 17, 128, 64});  // D != Dv
  check({2, 2, 1, 130, 64, 80});   // one query (decode)
  check({1, 1, 130, 1, 32, 32});   // one key
}

TEST_CASE("cuda attention: causal upper-left and lower-right", "[cuda][attention]") {
  if (!test::gpu_ready()) return;
  check({1, 2, 17, 17, 64, 64, 1});
  check({1, 2, 130, 130, 32, 32, 1});
  check({1, 2, 130, 17, 32, 32, 1});    // upper-left, Tq > Tk
  check({1, 2, 17, 130, 64, 64, 2});    // lower-right, the queries are the last 17 positions
  check({1, 1, 130, 17, 80, 80, 2});    // lower-right, Tq > Tk: the first 113 queries see no key
  check({2, 1, 1, 130, 128, 128, 2});   // decode: one query sees every key
  check({1, 1, 33, 130, 128, 128, 1});  // upper-left, Tk > Tq: most keys are never seen
}

TEST_CASE("cuda attention: bool masks that broadcast, rows that see no key", "[cuda][attention][shared-memory]") {
  if (!test::gpu_ready()) return;
  check({2, 2, 17, 33, 32, 32, 0, 1, {2, 1, 1, 33}});
  check({2, 1, 17, 17, 80, 80, 0, 1, {1, 1, 17, 17}});
  check({1, 2, 33, 40, 64, 64, 1, 1, {1, 2, 33, 40}});
}

TEST_CASE("cuda attention: additive masks that broadcast, -inf entries", "[cuda][attention]") {
  if (!test::gpu_ready()) return;
  check({2, 2, 17, 33, 64, 64, 0, 2, {2, 1, 1, 33}});
  check({1, 2, 130, 130, 32, 32, 2, 2, {1, 1, 130, 130}});
  check({1, 1, 33, 17, 128, 128, 0, 2, {1, 1, 33, 1}});
}

TEST_CASE("cuda attention: dropout keeps exactly what the reference keeps", "[cuda][attention]") {
  if (!test::gpu_ready()) return;
  check({2, 2, 33, 33, 64, 64, 1, 0, {}, 0.25});
  check({1, 2, 130, 17, 32, 32, 0, 1, {1, 1, 130, 17}, 0.1});
  check({1, 1, 17, 40, 80, 80, 2, 2, {1, 1, 1, 40}, 0.5, true});
}

TEST_CASE("cuda attention: strided q, k and v", "[cuda][attention][shared-memory]") {
  if (!test::gpu_ready()) return;
  check({2, 2, 17, 33, 32, 32, 0, 0, {}, 0.0, true});
  check({1, 2, 33, 17, 64, 80, 1, 1, {1, 2, 1, 17}, 0.0, true});
}

TEST_CASE("cuda attention: no query, no key", "[cuda][attention]") {
  if (!test::gpu_ready()) return;
  // zero-size outputs may never reach a backend: only the values are checked
  check({1, 2, 0, 17, 32, 32}, false);
  check({1, 2, 17, 0, 32, 32}, false);
}

TEST_CASE("cuda attention: f64 and heads over 128 run on the reference", "[cuda][attention]") {
  if (!test::gpu_ready()) return;
  struct Decline {
    DType dt;
    int64_t d, dv;
  };
  for (const Decline& x : {Decline{DType::F64, 32, 32}, Decline{DType::F32, 160, 32}, Decline{DType::BF16, 64, 192}}) {
    INFO(dtype_name(x.dt) << " D " << x.d << " Dv " << x.dv);
    const Case c{1, 2, 17, 17, x.d, x.dv, 1};
    const ingot_attr_attention attr = attr_of(c);
    const Operand q = operand(1, 2, 17, x.d, x.dt, 1, false), k = operand(1, 2, 17, x.d, x.dt, 2, false);
    const Operand v = operand(1, 2, 17, x.dv, x.dt, 3, false);
    const DType lse_dt = x.dt == DType::F64 ? DType::F64 : DType::F32;
    const std::vector<OutputSpec> outs{{Shape{1, 2, 17, x.dv}, x.dt}, {Shape{1, 2, 17}, lse_dt}};
    const std::vector<Tensor> ref = on_reference(kFwd, {q.host, k.host, v.host}, outs, attr);
    reset_op_counts();
    const std::vector<Tensor> out = run_op(kFwd, {q.gpu, k.gpu, v.gpu}, outs, &attr);
    CHECK(ops_on("cuda") == 0);
    CHECK(ops_on("reference") >= 1);
    REQUIRE(out[0].device() == kGpu);
    INGOT_REQUIRE_CLOSE(out[0].to(kCpu), ref[0], 0.0, 0.0);
  }
}

}  // namespace
}  // namespace ingot

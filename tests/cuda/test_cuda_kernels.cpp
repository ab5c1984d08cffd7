// The cuda kernels' work splits against the CPU, one case per path: reductions (rows by warp or
// block, columns, split into slices and finished), ARGMAX (warp or thread per lane, ties, NaN),
// batch norm (split channel sums), layer norm's weight / bias gradients (blocked column sums),
// softmax by warp, and elementwise (packed, unaligned, coalesced broadcasts). Every op must run
// on the cuda backend; split results must repeat bit for bit. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "cuda_plugin_path.h"
#include "require_on_cuda.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/op_counts.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};
const Device kCpu = Device::cpu();

/// Runs `work` on the GPU and requires that every op it ran executed on the cuda backend (a
/// declined op would run on the host through dispatch's fallback and prove nothing here).
std::vector<Tensor> on_cuda(const std::function<std::vector<Tensor>()>& work) {
  reset_op_counts();
  std::vector<Tensor> results = work();
  test::require_all_on_cuda();
  for (Tensor& t : results) t = t.to(kCpu);
  return results;
}

/// `x` with values rounded to quarters: many exact ties.
Tensor with_ties(const Shape& shape, DType dt, uint64_t seed) {
  return floor(mul(test::random_tensor(shape, DType::F32, seed, -2.0, 2.0), 4.0)).to(dt);
}

/// The CPU's result computed in f64 and rounded to f32: a sum accumulated in double (what the cuda
/// backend does for f32) lands within an ulp of it.
Tensor in_f64(const std::function<Tensor(const Tensor&)>& op, const Tensor& x) {
  return op(x.to(DType::F64)).to(DType::F32);
}

TEST_CASE("cuda kernels: reductions on every path match the CPU and repeat bit for bit", "[cuda][reduce]") {
  if (!test::gpu_ready()) return;
  const Tensor v = test::random_tensor({1000003}, DType::F32, 1);       // one output: split rows
  const Tensor cols = test::random_tensor({4099, 65}, DType::F32, 2);   // over dim 0: split columns
  const Tensor rows = test::random_tensor({3000, 300}, DType::F32, 3);  // over dim 1: a warp per row
  const Tensor wide = test::random_tensor({300, 5000}, DType::F32, 4);  // over dim 1: split blocks
  const Tensor mid = test::random_tensor({6, 700, 40}, DType::F32, 5);  // over dim 1: columns, 2 kept dims
  const Tensor base = test::random_tensor({513, 777}, DType::F32, 6), t = base.transpose(0, 1);  // strides (1, 777)
  const auto got = on_cuda([&] {
    const Tensor vg = v.to(kGpu), cg = cols.to(kGpu), rg = rows.to(kGpu), wg = wide.to(kGpu), mg = mid.to(kGpu);
    const Tensor tg = base.to(kGpu).transpose(0, 1);  // to() copies contiguously: transpose on the GPU
    return std::vector<Tensor>{sum(vg),      sum(vg),       mean(vg),     max(vg),         min(cg, {0}),
                               sum(cg, {0}), sum(cg, {0}),  sum(rg, {1}), max(rg, {1}),    sum(wg, {1}),
                               sum(wg, {1}), mean(mg, {1}), sum(tg, {0}), sum(mg, {0, 2}), sum(tg, {1})};
  });
  const double atol = 1e-5, rtol = 2e-7;  // f32's last bit
  INGOT_REQUIRE_CLOSE(got[0], in_f64([](const Tensor& x) { return sum(x); }, v), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[1], got[0], 0.0, 0.0);  // same slices, same order, same bits
  INGOT_REQUIRE_CLOSE(got[2], in_f64([](const Tensor& x) { return mean(x); }, v), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[3], max(v), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[4], min(cols, {0}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[5], in_f64([](const Tensor& x) { return sum(x, {0}); }, cols), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[6], got[5], 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[7], in_f64([](const Tensor& x) { return sum(x, {1}); }, rows), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[8], max(rows, {1}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[9], in_f64([](const Tensor& x) { return sum(x, {1}); }, wide), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[10], got[9], 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[11], in_f64([](const Tensor& x) { return mean(x, {1}); }, mid), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[12], in_f64([](const Tensor& x) { return sum(x, {0}); }, t), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[13], in_f64([](const Tensor& x) { return sum(x, {0, 2}); }, mid), atol, rtol);
  INGOT_REQUIRE_CLOSE(got[14], in_f64([](const Tensor& x) { return sum(x, {1}); }, t), atol, rtol);
}

TEST_CASE("cuda kernels: half, integer, empty and NaN reductions", "[cuda][reduce]") {
  if (!test::gpu_ready()) return;
  const Tensor h = test::random_tensor({2049, 129}, DType::F16, 7), b = test::random_tensor({200001}, DType::BF16, 8);
  const Tensor i = test::random_tensor({2000, 33}, DType::I32, 9, -1000.0, 1000.0);
  const Tensor i8 = test::random_tensor({101, 7}, DType::I8, 10, -1.0, 1.0);
  const Tensor empty = zeros({0, 5});
  Tensor nan = test::random_tensor({64, 1000}, DType::F32, 11);
  nan.data<float>()[5 * 1000 + 17] = std::numeric_limits<float>::quiet_NaN();
  const auto got = on_cuda([&] {
    const Tensor hg = h.to(kGpu), ig = i.to(kGpu), ng = nan.to(kGpu), eg = empty.to(kGpu);
    return std::vector<Tensor>{sum(hg, {0}),          sum(hg, {1}), sum(b.to(kGpu)), sum(ig, {0}), max(ig, {1}),
                               sum(i8.to(kGpu), {0}), sum(eg, {0}), mean(eg, {0}),   max(ng, {1}), min(ng, {0})};
  });
  // Halves accumulate in float; the f16 / bf16 result is within an ulp of the f64 sum.
  INGOT_REQUIRE_CLOSE(got[0], sum(h.to(DType::F64), {0}).to(DType::F16), 1e-3, 2e-3);
  INGOT_REQUIRE_CLOSE(got[1], sum(h.to(DType::F64), {1}).to(DType::F16), 1e-3, 2e-3);
  INGOT_REQUIRE_CLOSE(got[2], sum(b.to(DType::F64)).to(DType::BF16), 1e-2, 1e-2);
  INGOT_REQUIRE_CLOSE(got[3], sum(i, {0}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[4], max(i, {1}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[5], sum(i8, {0}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[6], zeros({5}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[7], mean(empty, {0}), 0.0, 0.0);  // NaN, like the CPU
  INGOT_REQUIRE_CLOSE(got[8], max(nan, {1}), 0.0, 0.0);     // row 5 is NaN
  INGOT_REQUIRE_CLOSE(got[9], min(nan, {0}), 0.0, 0.0);     // column 17 is NaN
}

TEST_CASE("cuda kernels: argmax takes the first maximum and the first NaN on both paths", "[cuda][reduce]") {
  if (!test::gpu_ready()) return;
  Tensor lanes = with_ties({37, 1000}, DType::F32, 12);  // along dim 1: a warp per lane
  lanes.data<float>()[3 * 1000 + 900] = std::numeric_limits<float>::quiet_NaN();
  lanes.data<float>()[3 * 1000 + 950] = std::numeric_limits<float>::quiet_NaN();
  lanes.data<float>()[4 * 1000 + 5] = std::numeric_limits<float>::quiet_NaN();
  Tensor columns = with_ties({300, 3000}, DType::F32, 13);  // along dim 0: a thread per lane
  columns.data<float>()[100 * 3000 + 7] = std::numeric_limits<float>::quiet_NaN();
  columns.data<float>()[200 * 3000 + 7] = std::numeric_limits<float>::quiet_NaN();
  const Tensor h = with_ties({50, 777}, DType::F16, 14), ints = with_ties({2500, 40}, DType::I32, 15);
  const Tensor one = with_ties({1, 5}, DType::F32, 16);
  const auto got = on_cuda([&] {
    const Tensor lg = lanes.to(kGpu), cg = columns.to(kGpu), hg = h.to(kGpu), ig = ints.to(kGpu);
    return std::vector<Tensor>{
        argmax(lg, 1), argmax(cg, 0), argmax(cg, 1, true),    argmax(hg, 1), argmax(hg.transpose(0, 1), 0),
        argmax(ig, 0), argmax(ig, 1), argmax(one.to(kGpu), 0)};
  });
  INGOT_REQUIRE_CLOSE(got[0], argmax(lanes, 1), 0.0, 0.0);
  CHECK(got[0].to_vector<int64_t>()[3] == 900);
  CHECK(got[0].to_vector<int64_t>()[4] == 5);
  INGOT_REQUIRE_CLOSE(got[1], argmax(columns, 0), 0.0, 0.0);
  CHECK(got[1].to_vector<int64_t>()[7] == 100);
  INGOT_REQUIRE_CLOSE(got[2], argmax(columns, 1, true), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[3], argmax(h, 1), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[4], argmax(h.transpose(0, 1), 0), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[5], argmax(ints, 0), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[6], argmax(ints, 1), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[7], argmax(one, 0), 0.0, 0.0);
}

TEST_CASE("cuda kernels: batch norm from split channel sums matches the CPU", "[cuda][norm]") {
  if (!test::gpu_ready()) return;
  for (DType dt : {DType::F32, DType::F64, DType::F16}) {
    INFO(dtype_name(dt));
    const double tol = dt == DType::F16 ? 2e-2 : 1e-4;
    // Values around 1000 with a spread of 1: the variance must not cancel away.
    const Tensor x = add(test::random_tensor({16, 5, 31, 33}, DType::F32, 17, -1.0, 1.0), 1000.0).to(dt);
    const Tensor gy = test::random_tensor({16, 5, 31, 33}, dt, 18);
    const Tensor w = test::random_tensor({5}, dt, 19, 0.5, 1.5), b = test::random_tensor({5}, dt, 20);
    const Tensor rm = test::random_tensor({5}, dt, 21), rv = test::random_tensor({5}, dt, 22, 0.5, 2.0);
    const Tensor x2 = test::random_tensor({4097, 3}, dt, 23, -2.0, 2.0);  // 2-d: spatial 1
    const Tensor rm_gpu = rm.to(kGpu), rv_gpu = rv.to(kGpu);              // before the CPU's run updates rm_cpu
    const auto got = on_cuda([&] {
      const Tensor xg = x.to(kGpu), wg = w.to(kGpu);
      const BatchNormResult bn = batch_norm(xg, wg, b.to(kGpu), rm_gpu, rv_gpu, true);
      const NormGrads g = batch_norm_backward(gy.to(kGpu), xg, wg, bn.save_mean, bn.save_invstd, true);
      const BatchNormResult ev = batch_norm(xg, wg, b.to(kGpu), rm_gpu, rv_gpu, false);
      const NormGrads ge = batch_norm_backward(gy.to(kGpu), xg, wg, ev.save_mean, ev.save_invstd, false);
      const BatchNormResult plain = batch_norm(x2.to(kGpu), Tensor(), Tensor(), Tensor(), Tensor(), true);
      return std::vector<Tensor>{bn.y,        bn.save_mean, bn.save_invstd, g.grad_x,       g.grad_weight,
                                 g.grad_bias, ev.y,         ge.grad_x,      ge.grad_weight, plain.y};
    });
    const Tensor rm_cpu = rm.clone(), rv_cpu = rv.clone();
    const BatchNormResult bn = batch_norm(x, w, b, rm_cpu, rv_cpu, true);
    const NormGrads g = batch_norm_backward(gy, x, w, bn.save_mean, bn.save_invstd, true);
    const BatchNormResult ev = batch_norm(x, w, b, rm_cpu, rv_cpu, false);
    const NormGrads ge = batch_norm_backward(gy, x, w, ev.save_mean, ev.save_invstd, false);
    INGOT_REQUIRE_CLOSE(got[0], bn.y, tol, tol);
    INGOT_REQUIRE_CLOSE(got[1], bn.save_mean, tol, tol);
    INGOT_REQUIRE_CLOSE(got[2], bn.save_invstd, tol, tol);
    INGOT_REQUIRE_CLOSE(got[3], g.grad_x, tol, tol);
    INGOT_REQUIRE_CLOSE(got[4], g.grad_weight, 100 * tol, tol);  // sums over 5,115 values
    INGOT_REQUIRE_CLOSE(got[5], g.grad_bias, 100 * tol, tol);
    INGOT_REQUIRE_CLOSE(got[6], ev.y, tol, tol);
    INGOT_REQUIRE_CLOSE(got[7], ge.grad_x, tol, tol);
    INGOT_REQUIRE_CLOSE(got[8], ge.grad_weight, 100 * tol, tol);
    INGOT_REQUIRE_CLOSE(got[9], batch_norm(x2, Tensor(), Tensor(), Tensor(), Tensor(), true).y, tol, tol);
    INGOT_REQUIRE_CLOSE(rm_gpu.to(kCpu), rm_cpu, tol, tol);  // running statistics updated in place
    INGOT_REQUIRE_CLOSE(rv_gpu.to(kCpu), rv_cpu, tol, tol);
  }
}

TEST_CASE("cuda kernels: layer norm weight and bias gradients as blocked column sums", "[cuda][norm]") {
  if (!test::gpu_ready()) return;
  for (const Shape& shape : {Shape{8000, 96}, Shape{7, 33}, Shape{3, 5, 1001}}) {
    const int64_t inner = shape[shape.size() - 1];
    const Tensor x = test::random_tensor(shape, DType::F32, 24, -2.0, 2.0),
                 gy = test::random_tensor(shape, DType::F32, 25);
    const Tensor w = test::random_tensor({inner}, DType::F32, 26, 0.5, 1.5),
                 b = test::random_tensor({inner}, DType::F32, 27);
    const auto got = on_cuda([&] {
      const Tensor xg = x.to(kGpu), wg = w.to(kGpu);
      const LayerNormResult ln = layer_norm(xg, {inner}, wg, b.to(kGpu));
      const NormGrads g = layer_norm_backward(gy.to(kGpu), xg, ln.mean, ln.rstd, wg, {inner});
      const NormGrads again = layer_norm_backward(gy.to(kGpu), xg, ln.mean, ln.rstd, wg, {inner});
      return std::vector<Tensor>{ln.y, g.grad_x, g.grad_weight, g.grad_bias, again.grad_weight};
    });
    const LayerNormResult ln = layer_norm(x, {inner}, w, b);
    const NormGrads g = layer_norm_backward(gy, x, ln.mean, ln.rstd, w, {inner});
    INGOT_REQUIRE_CLOSE(got[0], ln.y, 1e-5, 1e-4);
    INGOT_REQUIRE_CLOSE(got[1], g.grad_x, 1e-4, 1e-4);
    INGOT_REQUIRE_CLOSE(got[2], g.grad_weight, 1e-3, 1e-4);
    INGOT_REQUIRE_CLOSE(got[3], g.grad_bias, 1e-3, 1e-4);
    INGOT_REQUIRE_CLOSE(got[4], got[2], 0.0, 0.0);
  }
}

TEST_CASE("cuda kernels: softmax by warp with -inf rows, NaN and strided lanes", "[cuda][softmax]") {
  if (!test::gpu_ready()) return;
  Tensor x = test::random_tensor({1000, 100}, DType::F32, 28, -5.0, 5.0);
  for (int j = 0; j < 100; ++j) x.data<float>()[2 * 100 + j] = -std::numeric_limits<float>::infinity();
  x.data<float>()[3 * 100 + 50] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[4 * 100 + 7] = std::numeric_limits<float>::infinity();
  const Tensor gy = test::random_tensor({1000, 100}, DType::F32, 29);
  const Tensor h = test::random_tensor({33, 1024}, DType::BF16, 30, -5.0, 5.0);
  const auto got = on_cuda([&] {
    const Tensor xg = x.to(kGpu), gg = gy.to(kGpu);
    const Tensor y = softmax(xg, 1), ly = log_softmax(xg, 1);
    return std::vector<Tensor>{
        y, ly, softmax(xg, 0), softmax_backward(y, gg, 1), log_softmax_backward(ly, gg, 1), softmax(h.to(kGpu), -1)};
  });
  const Tensor y = softmax(x, 1), ly = log_softmax(x, 1);
  INGOT_REQUIRE_CLOSE(got[0], y, 1e-6, 1e-5);  // NaN where the CPU has NaN
  INGOT_REQUIRE_CLOSE(got[1], ly, 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(got[2], softmax(x, 0), 1e-6, 1e-5);
  INGOT_REQUIRE_CLOSE(got[3], softmax_backward(y, gy, 1), 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(got[4], log_softmax_backward(ly, gy, 1), 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(got[5], softmax(h, -1), 1e-3, 1e-2);
}

TEST_CASE("cuda kernels: elementwise packed, unaligned and coalesced paths", "[cuda][elementwise]") {
  if (!test::gpu_ready()) return;
  const Tensor a = test::random_tensor({100003}, DType::F16, 31), b = test::random_tensor({100003}, DType::F16, 32);
  const Tensor f = test::random_tensor({4, 6, 1001}, DType::F32, 33), g = test::random_tensor({1001}, DType::F32, 34);
  const Tensor i8 = test::random_tensor({777}, DType::I8, 35, -100.0, 100.0);
  const Tensor d = test::random_tensor({5, 7, 9}, DType::F64, 36);
  const auto got = on_cuda([&] {
    const Tensor ag = a.to(kGpu), bg = b.to(kGpu), fg = f.to(kGpu);
    return std::vector<Tensor>{add(ag, bg),                                          // packed, 3 left for the tail
                               mul(ag.slice(0, 1, 100003), bg.slice(0, 0, 100002)),  // 2-byte offset: unaligned
                               sub(fg, g.to(kGpu)),      // broadcast rows: [4, 6] merge into one dim
                               exp(fg.transpose(0, 2)),  // strided unary
                               neg(i8.to(kGpu)),         // 16 per pack
                               clamp(d.to(kGpu).permute({2, 0, 1}), -0.5, 0.25),
                               softplus(fg, 2.0, 3.0)};
  });
  INGOT_REQUIRE_CLOSE(got[0], add(a, b), 1e-4, 1e-3);  // f16: one rounding of the float result
  INGOT_REQUIRE_CLOSE(got[1], mul(a.slice(0, 1, 100003), b.slice(0, 0, 100002)), 1e-4, 1e-3);
  INGOT_REQUIRE_CLOSE(got[2], sub(f, g), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[3], exp(f.transpose(0, 2)), 1e-6, 1e-6);
  INGOT_REQUIRE_CLOSE(got[4], neg(i8), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[5], clamp(d.permute({2, 0, 1}), -0.5, 0.25), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[6], softplus(f, 2.0, 3.0), 1e-6, 1e-6);
}

}  // namespace
}  // namespace ingot

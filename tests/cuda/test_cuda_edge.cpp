// Edge cases of the cuda backend through core's API: more than 2^31 elements, softmax, reductions
// and norms past the 65,535-block grid limits, overlapping copies, out-of-range indices that must
// raise, and an embedding-sized SCATTER_ADD. Skipped without a GPU. [shared-memory] marks the
// kernels that use shared memory (scripts/gpu-check runs them under racecheck); [large] and [timed]
// are left out of the sanitizer runs, too slow under instrumentation.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <random>

#include "cuda_plugin_path.h"
#include "require_on_cuda.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/op_counts.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};
const Device kCpu = Device::cpu();

using test::gpu_ready;

/// Runs `work` and requires that every op it ran executed on the cuda backend: an op the backend
/// declines would run on the host through dispatch's fallback and prove nothing here.
std::vector<Tensor> on_cuda(const std::function<std::vector<Tensor>()>& work) {
  reset_op_counts();
  std::vector<Tensor> results = work();
  test::require_all_on_cuda();
  return results;
}

std::vector<float> window(const Tensor& t, int64_t begin, int64_t end) {
  return t.slice(0, begin, end).to_vector<float>();
}

TEST_CASE("cuda edge: add, cast and sum over 2^31 + 5 bf16 elements", "[cuda][large]") {
  if (!gpu_ready()) return;
  empty_cache(kGpu);
  const double free_gib = static_cast<double>(memory_budget(kGpu).available) / (1 << 30);
  if (free_gib < 24.0) {
    test::skip(fmt::format("needs 24 GiB of free GPU memory, {:.1f} GiB free", free_gib));
    return;
  }
  constexpr int64_t k31 = int64_t{1} << 31, n = k31 + 5;
  const float p29 = std::ldexp(1.0f, 29), p30 = std::ldexp(1.0f, 30);
  // x is 1 but at four marks on both sides of 2^31; the last two are so large that losing either
  // changes the sum by over 10%. y = x + 0.5 rounds 2^29 + 0.5 to 2^29 in bf16.
  Tensor y = on_cuda([&] {
    const Tensor x = full({n}, 1.0, DType::BF16, kGpu);
    x.slice(0, 0, 1).fill_(2.0);
    x.slice(0, k31 - 1, k31).fill_(3.0);
    x.slice(0, k31, k31 + 1).fill_(p29);
    x.slice(0, n - 1, n).fill_(p30);
    return std::vector<Tensor>{add(x, full({1}, 0.5, DType::BF16, kGpu))};
  })[0];
  REQUIRE(y.numel() == n);
  const double expected = 1.5 * static_cast<double>(n - 4) + 2.5 + 3.5 + p29 + p30;
  auto check_values = [&](const Tensor& t) {
    CHECK(window(t, 0, 3) == std::vector<float>{2.5f, 1.5f, 1.5f});
    CHECK(window(t, int64_t{1} << 30, (int64_t{1} << 30) + 2) == std::vector<float>{1.5f, 1.5f});
    CHECK(window(t, k31 - 2, k31 + 2) == std::vector<float>{1.5f, 3.5f, p29, 1.5f});
    CHECK(window(t, n - 3, n) == std::vector<float>{1.5f, 1.5f, p30});
  };
  check_values(y);
  const Tensor sum_bf16 = on_cuda([&] { return std::vector<Tensor>{sum(y)}; })[0];
  CHECK(sum_bf16.dtype() == DType::BF16);
  CHECK(sum_bf16.item() == Approx(expected).epsilon(1e-2));  // bf16 keeps 8 bits
  const Tensor z = on_cuda([&] { return std::vector<Tensor>{y.to(DType::F32)}; })[0];
  y = Tensor();  // 4 GiB back before the f32 sum
  check_values(z);
  const Tensor sum_f32 = on_cuda([&] { return std::vector<Tensor>{sum(z)}; })[0];
  CHECK(sum_f32.item() == Approx(expected).epsilon(1e-5));
}

TEST_CASE("cuda edge: softmax with more than 65,536 rows", "[cuda][shared-memory][softmax]") {
  if (!gpu_ready()) return;
  const Tensor rows = test::random_tensor({70001, 5}, DType::F32, 21, -4.0, 4.0);   // 70,001 lanes, last axis
  const Tensor lanes = test::random_tensor({7, 66000}, DType::F32, 22, -4.0, 4.0);  // 66,000 lanes of stride 66,000
  const Tensor rows16 = rows.to(DType::F16);
  const auto got = on_cuda([&] {
    return std::vector<Tensor>{softmax(rows.to(kGpu), -1), softmax(lanes.to(kGpu), 0), log_softmax(rows.to(kGpu), 1),
                               softmax(rows16.to(kGpu), -1)};
  });
  INGOT_REQUIRE_CLOSE(got[0].to(kCpu), softmax(rows, -1), 1e-6, 1e-5);
  INGOT_REQUIRE_CLOSE(got[1].to(kCpu), softmax(lanes, 0), 1e-6, 1e-5);
  INGOT_REQUIRE_CLOSE(got[2].to(kCpu), log_softmax(rows, 1), 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(got[3].to(kCpu), softmax(rows16, -1), 1e-3, 1e-2);
}

TEST_CASE("cuda edge: softmax over a row longer than 65,536", "[cuda][shared-memory][softmax]") {
  if (!gpu_ready()) return;
  const Tensor row = test::random_tensor({3, 100003}, DType::F32, 23, -4.0, 4.0);
  const Tensor column = test::random_tensor({70001, 3}, DType::F32, 24, -4.0, 4.0);  // lanes of stride 3
  const auto got = on_cuda([&] {
    return std::vector<Tensor>{softmax(row.to(kGpu), -1), log_softmax(row.to(kGpu), -1), softmax(column.to(kGpu), 0)};
  });
  INGOT_REQUIRE_CLOSE(got[0].to(kCpu), softmax(row, -1), 1e-9, 1e-5);
  INGOT_REQUIRE_CLOSE(got[1].to(kCpu), log_softmax(row, -1), 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(got[2].to(kCpu), softmax(column, 0), 1e-9, 1e-5);
}

TEST_CASE("cuda edge: reductions over a long vector, many rows and columns", "[cuda][shared-memory][reduce]") {
  if (!gpu_ready()) return;
  Tensor v = test::random_tensor({1000003}, DType::F32, 25);
  v.data<float>()[777777] = 2.0f;  // one maximum: argmax has no tie to break
  const Tensor m = test::random_tensor({70001, 17}, DType::F32, 26);
  const Tensor c = test::random_tensor({4099, 513}, DType::F32, 27);
  const auto got = on_cuda([&] {
    const Tensor vg = v.to(kGpu), mg = m.to(kGpu), cg = c.to(kGpu);
    return std::vector<Tensor>{sum(vg),      mean(vg),      max(vg),      argmax(vg),
                               sum(mg, {1}), argmax(mg, 1), sum(cg, {0}), max(cg, {0})};
  });
  INGOT_REQUIRE_CLOSE(got[0].to(kCpu), sum(v), 1e-2, 1e-5);
  INGOT_REQUIRE_CLOSE(got[1].to(kCpu), mean(v), 1e-7, 1e-5);
  INGOT_REQUIRE_CLOSE(got[2].to(kCpu), max(v), 0.0, 0.0);
  CHECK(got[3].item() == 777777.0);
  INGOT_REQUIRE_CLOSE(got[4].to(kCpu), sum(m, {1}), 1e-5, 1e-5);
  INGOT_REQUIRE_CLOSE(got[5].to(kCpu), argmax(m, 1), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(got[6].to(kCpu), sum(c, {0}), 1e-4, 1e-5);
  INGOT_REQUIRE_CLOSE(got[7].to(kCpu), max(c, {0}), 0.0, 0.0);
}

TEST_CASE("cuda edge: layer norm and batch norm past the grid limits", "[cuda][shared-memory][norm]") {
  if (!gpu_ready()) return;
  const Tensor x = test::random_tensor({66000, 16}, DType::F32, 28, -3.0, 3.0);  // 66,000 rows
  const Tensor gy = test::random_tensor({66000, 16}, DType::F32, 29);
  const Tensor w = test::random_tensor({16}, DType::F32, 30, 0.5, 1.5), b = test::random_tensor({16}, DType::F32, 31);
  const Tensor long_row = test::random_tensor({2, 70001}, DType::F32, 32, -3.0, 3.0);
  const Tensor bx = test::random_tensor({16, 3, 67, 67}, DType::F32, 33, -2.0, 2.0);  // 71,824 values per channel
  const Tensor bgy = test::random_tensor({16, 3, 67, 67}, DType::F32, 34);
  const Tensor bw = test::random_tensor({3}, DType::F32, 35, 0.5, 1.5), bb = test::random_tensor({3}, DType::F32, 36);
  const Tensor rm = zeros({3}), rv = ones({3});
  const Tensor rm_gpu = rm.to(kGpu), rv_gpu = rv.to(kGpu);
  const auto got = on_cuda([&] {
    const Tensor xg = x.to(kGpu), wg = w.to(kGpu), bxg = bx.to(kGpu), bwg = bw.to(kGpu);
    const LayerNormResult ln = layer_norm(xg, {16}, wg, b.to(kGpu));
    const NormGrads lg = layer_norm_backward(gy.to(kGpu), xg, ln.mean, ln.rstd, wg, {16});
    const Tensor ln_long = layer_norm(long_row.to(kGpu), {70001}).y;
    const BatchNormResult bn = batch_norm(bxg, bwg, bb.to(kGpu), rm_gpu, rv_gpu, /*training=*/true);
    const NormGrads bg = batch_norm_backward(bgy.to(kGpu), bxg, bwg, bn.save_mean, bn.save_invstd, true);
    return std::vector<Tensor>{ln.y, lg.grad_x, lg.grad_weight, lg.grad_bias, ln_long,
                               bn.y, bg.grad_x, bg.grad_weight, bg.grad_bias};
  });
  const LayerNormResult ln = layer_norm(x, {16}, w, b);
  const NormGrads lg = layer_norm_backward(gy, x, ln.mean, ln.rstd, w, {16});
  const BatchNormResult bn = batch_norm(bx, bw, bb, rm, rv, true);
  const NormGrads bg = batch_norm_backward(bgy, bx, bw, bn.save_mean, bn.save_invstd, true);
  INGOT_REQUIRE_CLOSE(got[0].to(kCpu), ln.y, 1e-5, 1e-4);
  INGOT_REQUIRE_CLOSE(got[1].to(kCpu), lg.grad_x, 1e-4, 1e-4);
  INGOT_REQUIRE_CLOSE(got[2].to(kCpu), lg.grad_weight, 1e-2, 1e-4);  // sums over 66,000 rows
  INGOT_REQUIRE_CLOSE(got[3].to(kCpu), lg.grad_bias, 1e-2, 1e-4);
  INGOT_REQUIRE_CLOSE(got[4].to(kCpu), layer_norm(long_row, {70001}).y, 1e-5, 1e-4);
  INGOT_REQUIRE_CLOSE(got[5].to(kCpu), bn.y, 1e-5, 1e-4);
  INGOT_REQUIRE_CLOSE(got[6].to(kCpu), bg.grad_x, 1e-4, 1e-4);
  INGOT_REQUIRE_CLOSE(got[7].to(kCpu), bg.grad_weight, 1e-2, 1e-4);
  INGOT_REQUIRE_CLOSE(got[8].to(kCpu), bg.grad_bias, 1e-2, 1e-4);
  INGOT_REQUIRE_CLOSE(rm_gpu.to(kCpu), rm, 1e-6, 1e-5);  // running statistics updated in place
  INGOT_REQUIRE_CLOSE(rv_gpu.to(kCpu), rv, 1e-6, 1e-5);
}

TEST_CASE("cuda edge: overlapping copies (x[1:] = x[:-1]) equal the reference's", "[cuda][copy]") {
  if (!gpu_ready()) return;
  // Shifts along dim `d` by one, right (x[1:] = x[:-1]) or left (x[:-1] = x[1:]), in place.
  auto shift = [](const Tensor& x, int64_t d, bool right) {
    const int64_t n = x.size(d);
    const Tensor head = x.slice(d, 0, n - 1), tail = x.slice(d, 1, n);
    (right ? tail : head).copy_(right ? head : tail);
  };
  const int64_t n = (int64_t{1} << 22) + 3;
  const Tensor v = test::random_tensor({n}, DType::F32, 37);
  const Tensor m = test::random_tensor({1025, 513}, DType::F32, 38);
  for (const bool right : {true, false}) {
    INFO((right ? "x[1:] = x[:-1]" : "x[:-1] = x[1:]"));
    const Tensor vg = v.to(kGpu), mg = m.to(kGpu), mtg = m.to(kGpu);
    on_cuda([&] {
      shift(vg, 0, right);
      shift(mg, 0, right);                   // whole rows
      shift(mg, 1, right);                   // within each row
      shift(mtg.transpose(0, 1), 0, right);  // a transposed view: columns of the storage
      return std::vector<Tensor>{};
    });
    const Tensor vc = v.clone(), mc = m.clone(), mtc = m.clone();
    shift(vc, 0, right);
    shift(mc, 0, right);
    shift(mc, 1, right);
    shift(mtc.transpose(0, 1), 0, right);
    const std::vector<float> src = v.to_vector<float>(), got = vg.to_vector<float>();
    CHECK(got[1] == (right ? src[0] : src[2]));  // the closed form, independent of the reference
    CHECK(got[size_t(n) - 2] == (right ? src[size_t(n) - 3] : src[size_t(n) - 1]));
    INGOT_REQUIRE_CLOSE(vg.to(kCpu), vc, 0.0, 0.0);
    INGOT_REQUIRE_CLOSE(mg.to(kCpu), mc, 0.0, 0.0);
    INGOT_REQUIRE_CLOSE(mtg.to(kCpu), mtc, 0.0, 0.0);
  }
}

// The kernel records a bad index in a device-side flag; the error surfaces at the next
// synchronisation, so the REQUIRE block synchronises and reads the result back.
TEST_CASE("cuda edge: an out-of-range GATHER index raises, then the device works on", "[cuda][index]") {
  if (!gpu_ready()) return;
  const Tensor x = test::random_tensor({50, 8}, DType::F32, 39);
  std::vector<int64_t> idx(32, 3);
  idx[13] = 1000003;
  const Tensor bad = Tensor::from_vector(idx, {4, 8});
  REQUIRE_THROWS_WITH(gather(x, 0, bad), Catch::Contains("1000003"));  // the reference raises too
  const Tensor xg = x.to(kGpu), bad_g = bad.to(kGpu);
  REQUIRE_THROWS_WITH(([&] {
                        const Tensor y = gather(xg, 0, bad_g);
                        synchronize(kGpu);
                        (void)y.to(kCpu);
                      })(),
                      Catch::Contains("gather", Catch::CaseSensitive::No) && Catch::Contains("1000003"));
  idx[13] = 49;
  const Tensor good = Tensor::from_vector(idx, {4, 8});
  INGOT_REQUIRE_CLOSE(gather(xg, 0, good.to(kGpu)).to(kCpu), gather(x, 0, good), 0.0, 0.0);
}

TEST_CASE("cuda edge: an out-of-range INDEX_SELECT index raises, then the device works on", "[cuda][index]") {
  if (!gpu_ready()) return;
  const Tensor x = test::random_tensor({50, 8}, DType::F32, 40);
  const Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 7, -2, 49, 3}, {5});
  REQUIRE_THROWS_WITH(index_select(x, 0, bad), Catch::Contains("-2"));
  const Tensor xg = x.to(kGpu), bad_g = bad.to(kGpu);
  REQUIRE_THROWS_WITH(([&] {
                        const Tensor y = index_select(xg, 0, bad_g);
                        synchronize(kGpu);
                        (void)y.to(kCpu);
                      })(),
                      Catch::Contains("index_select", Catch::CaseSensitive::No) && Catch::Contains("-2"));
  const Tensor good = Tensor::from_vector(std::vector<int64_t>{0, 7, 2, 49, 3}, {5});
  INGOT_REQUIRE_CLOSE(index_select(xg, 0, good.to(kGpu)).to(kCpu), index_select(x, 0, good), 0.0, 0.0);
}

// Embedding backward: `rows` gradient rows added into a vocab x width table, every 8th row into
// one hot entry (many updates of one address), the others anywhere.
void check_scatter_add(int64_t vocab, int64_t width, int64_t rows, double max_seconds) {
  std::mt19937_64 rng(41);
  std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
  std::vector<int64_t> idx(static_cast<size_t>(rows * width));
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t target = i % 8 == 0 ? 7 : pick(rng);
    std::fill_n(idx.begin() + i * width, width, target);
  }
  const Tensor index = Tensor::from_vector(idx, {rows, width});
  const Tensor src = test::random_tensor({rows, width}, DType::F32, 42);
  const Tensor table = test::random_tensor({vocab, width}, DType::F32, 43);
  const Tensor table_g = table.to(kGpu), index_g = index.to(kGpu), src_g = src.to(kGpu);
  (void)scatter_add(table_g, 0, index_g, src_g);  // loads the kernels
  synchronize(kGpu);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor out = on_cuda([&] { return std::vector<Tensor>{scatter_add(table_g, 0, index_g, src_g)}; })[0];
  synchronize(kGpu);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("scatter_add took " << seconds << " s");
  CHECK(seconds < max_seconds);
  INGOT_REQUIRE_CLOSE(out.to(kCpu), scatter_add(table, 0, index, src), 1e-4, 1e-5);  // summation order may differ
}

TEST_CASE("cuda edge: SCATTER_ADD of 8k rows into a 50k x 768 table finishes well under a second",
          "[cuda][index][timed]") {
  if (!gpu_ready()) return;
  // The bound separates an O(rows x width) kernel (about a millisecond) from one that loops over
  // every output for every index (minutes); it is not a benchmark.
  check_scatter_add(50000, 768, 8192, 0.5);
}

TEST_CASE("cuda edge: SCATTER_ADD with a repeated index equals the reference", "[cuda][index]") {
  if (!gpu_ready()) return;
  check_scatter_add(5000, 64, 2000, 60.0);  // small enough for memcheck
}

}  // namespace
}  // namespace ingot

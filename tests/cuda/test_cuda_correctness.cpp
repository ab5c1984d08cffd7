// Correctness of the cuda backend where it used to differ from the reference: out-of-range
// indices raise (at the next synchronization, or at the op under INGOT_CUDA_SYNC=1), SCATTER_ADD is
// deterministic and bit-identical, long SORT / TOPK lanes (the radix path) order like the
// reference, GLOBAL_NORM is reproducible, ARANGE rounds like the reference. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "cuda_plugin_path.h"
#include "require_on_cuda.h"
#include "same_bits.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/op_counts.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};
const Device kCpu = Device::cpu();

/// The plugin reads INGOT_CUDA_SYNC once, when it is loaded: set it first. Each ctest entry is its
/// own process; run by hand in one process, a case that needs the other setting is skipped.
bool gpu_with_sync(bool on) {
  if (PluginLoader::instance().find("cuda") == nullptr) {
    if (on) {
      setenv("INGOT_CUDA_SYNC", "1", 1);
    } else {
      unsetenv("INGOT_CUDA_SYNC");
    }
  } else {
    const char* env = std::getenv("INGOT_CUDA_SYNC");
    const bool is_on = env != nullptr && std::strcmp(env, "1") == 0;
    if (is_on != on) {
      test::skip("the cuda plugin was loaded with another INGOT_CUDA_SYNC; run this case alone");
      return false;
    }
  }
  return test::gpu_ready();
}

using test::require_all_on_cuda;

using test::require_same_bits;

Tensor scatter_index(int64_t rows, int64_t width, int64_t bound, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, bound - 1);
  std::vector<int64_t> idx(static_cast<size_t>(rows * width));
  for (auto& v : idx) v = pick(rng) % 5 == 0 ? 2 : pick(rng);  // many repeats of index 2
  return Tensor::from_vector(idx, {rows, width});
}

TEST_CASE("cuda correctness: an out-of-range SCATTER_ADD index raises at the next synchronization", "[cuda][index]") {
  if (!gpu_with_sync(false)) return;
  const Tensor self = test::random_tensor({6, 5}, DType::F32, 1), src = test::random_tensor({4, 5}, DType::F32, 2);
  std::vector<int64_t> idx(20, 1);
  idx[7] = 6;
  const Tensor bad = Tensor::from_vector(idx, {4, 5});
  REQUIRE_THROWS_WITH(scatter_add(self, 0, bad, src), Catch::Contains("index 6 is out of range"));  // the reference
  const Tensor self_g = self.to(kGpu), bad_g = bad.to(kGpu), src_g = src.to(kGpu);
  const Tensor y = scatter_add(self_g, 0, bad_g, src_g);  // queued: nothing has waited for it yet
  REQUIRE_THROWS_WITH(synchronize(kGpu), Catch::Contains("scatter_add: index 6 is out of range for a dim of size 6") &&
                                             Catch::Contains("valid indices are 0 to 5") &&
                                             Catch::Contains("INGOT_CUDA_SYNC=1"));
  synchronize(kGpu);  // reported once, then cleared
  idx[7] = 5;
  const Tensor good = Tensor::from_vector(idx, {4, 5});
  INGOT_REQUIRE_CLOSE(scatter_add(self_g, 0, good.to(kGpu), src_g).to(kCpu), scatter_add(self, 0, good, src), 0.0, 0.0);
  // A copy to the host is a synchronization point too.
  const Tensor z = gather(self_g, 0, bad_g.slice(1, 2, 3).contiguous());
  REQUIRE_THROWS_WITH((void)z.to(kCpu), Catch::Contains("gather: index 6"));
}

TEST_CASE("cuda correctness: INGOT_CUDA_SYNC=1 raises an out-of-range index at the op itself", "[cuda][index]") {
  if (!gpu_with_sync(true)) return;
  const Tensor x = test::random_tensor({50, 8}, DType::F32, 3);
  const Tensor bad = Tensor::from_vector(std::vector<int64_t>{0, 7, 50, 49}, {4});
  const Tensor xg = x.to(kGpu), bad_g = bad.to(kGpu);
  REQUIRE_THROWS_WITH(index_select(xg, 0, bad_g), Catch::Contains("index_select: index 50 is out of range") &&
                                                      Catch::Contains("right after the op"));
  synchronize(kGpu);  // nothing left pending
  const Tensor good = Tensor::from_vector(std::vector<int64_t>{0, 7, 5, 49}, {4});
  INGOT_REQUIRE_CLOSE(index_select(xg, 0, good.to(kGpu)).to(kCpu), index_select(x, 0, good), 0.0, 0.0);
}

TEST_CASE("cuda correctness: SCATTER_ADD is deterministic and bit-identical to the reference", "[cuda][index]") {
  if (!gpu_with_sync(false)) return;
  for (const DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32}) {
    INFO("dtype " << dtype_name(dt));
    const Tensor self = test::random_tensor({300, 33}, dt, 4, -10.0, 10.0);
    const Tensor src = test::random_tensor({2000, 33}, dt, 5, -10.0, 10.0);
    const Tensor index = scatter_index(2000, 33, 300, 6);
    const Tensor expected = scatter_add(self, 0, index, src);
    reset_op_counts();
    const Tensor a = scatter_add(self.to(kGpu), 0, index.to(kGpu), src.to(kGpu));
    const Tensor b = scatter_add(self.to(kGpu), 0, index.to(kGpu), src.to(kGpu));
    require_all_on_cuda();
    require_same_bits(a, b);
    require_same_bits(a, expected);  // same order of additions, same rounding at each step
  }
  // Along the last axis, with a transposed index and a src larger than the index.
  const Tensor self = test::random_tensor({7, 40}, DType::F32, 7);
  const Tensor src = test::random_tensor({7, 90}, DType::F32, 8);
  const Tensor index = scatter_index(60, 7, 40, 9).transpose(0, 1);  // {7, 60}, strides {1, 7}
  require_same_bits(scatter_add(self.to(kGpu), 1, index.to(kGpu), src.to(kGpu)), scatter_add(self, 1, index, src));
}

TEST_CASE("cuda correctness: embedding-sized SCATTER_ADD equals the reference bit for bit", "[cuda][index][timed]") {
  if (!gpu_with_sync(false)) return;
  const int64_t vocab = 50000, width = 768, rows = 8192;
  std::mt19937_64 rng(10);
  std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
  std::vector<int64_t> idx(static_cast<size_t>(rows * width));
  for (int64_t i = 0; i < rows; ++i) std::fill_n(idx.begin() + i * width, width, i % 4 == 0 ? 0 : pick(rng));
  const Tensor index = Tensor::from_vector(idx, {rows, width});
  const Tensor src = test::random_tensor({rows, width}, DType::F32, 11);
  const Tensor table = zeros({vocab, width});
  const Tensor table_g = table.to(kGpu), index_g = index.to(kGpu), src_g = src.to(kGpu);
  (void)scatter_add(table_g, 0, index_g, src_g);
  synchronize(kGpu);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor out = scatter_add(table_g, 0, index_g, src_g);
  synchronize(kGpu);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("scatter_add took " << seconds << " s");
  CHECK(seconds < 0.5);  // separates the sorted O(index) path from an O(outputs x index) loop
  require_same_bits(out, scatter_add(table, 0, index, src));
}

/// Values with ties, -0 / +0, NaNs and infinities, so that every order rule is exercised.
Tensor awkward_values(int64_t lanes, int64_t n, DType dt, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(-50, 50);
  std::vector<double> v(static_cast<size_t>(lanes * n));
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (auto& x : v) {
    const int r = pick(rng);
    const bool floating = is_floating(dt);
    x = r == 50 && floating ? nan : r == 49 && floating ? inf : r == -50 && floating ? -inf : r == 0 ? -0.0 : r;
    if (floating && r > 10 && r < 40) x = r + 0.25 * pick(rng);  // some distinct values too
  }
  return Tensor::from_vector(v, {lanes, n}).to(dt);
}

TEST_CASE("cuda correctness: SORT and TOPK of long lanes order like the reference", "[cuda][sort]") {
  if (!gpu_with_sync(false)) return;
  struct Shape2 {
    int64_t lanes, n;
    DType dt;
  };
  // Radix32 (f32, one lane; f16 and i8 with lanes), Radix64 (f32 with lanes; i64), two passes (f64).
  const std::vector<Shape2> shapes = {{1, 100000, DType::F32}, {40, 5000, DType::F16}, {7, 3001, DType::I8},
                                      {300, 2000, DType::F32}, {1, 70000, DType::I64}, {3, 40000, DType::F64},
                                      {5, 4096, DType::BF16}};
  for (const Shape2& s : shapes) {
    const Tensor x = awkward_values(s.lanes, s.n, s.dt, static_cast<uint64_t>(s.n));
    const Tensor xg = x.to(kGpu);
    for (const bool descending : {false, true}) {
      INFO(s.lanes << " x " << s.n << " " << dtype_name(s.dt) << (descending ? " descending" : " ascending"));
      reset_op_counts();
      const SortResult got = sort(xg, 1, descending, true);
      const SortResult got_t = topk(xg, 17, 1, descending);
      const SortResult got_col = sort(xg.transpose(0, 1), 0, descending, true);  // a strided lane
      require_all_on_cuda();
      const SortResult want = sort(x, 1, descending, true), want_t = topk(x, 17, 1, descending);
      INGOT_REQUIRE_CLOSE(got.indices.to(kCpu), want.indices, 0.0, 0.0);
      INGOT_REQUIRE_CLOSE(got.values.to(kCpu), want.values, 0.0, 0.0);
      INGOT_REQUIRE_CLOSE(got_t.indices.to(kCpu), want_t.indices, 0.0, 0.0);
      INGOT_REQUIRE_CLOSE(got_t.values.to(kCpu), want_t.values, 0.0, 0.0);
      INGOT_REQUIRE_CLOSE(got_col.indices.to(kCpu), want.indices.transpose(0, 1), 0.0, 0.0);
    }
  }
}

TEST_CASE("cuda correctness: GLOBAL_NORM gives the same bits every time and matches the reference", "[cuda][optim]") {
  if (!gpu_with_sync(false)) return;
  std::vector<Tensor> host;
  for (int k = 0; k < 30; ++k) host.push_back(test::random_tensor({1 + 997 * k, 3}, DType::F32, 20 + k));
  host.push_back(test::random_tensor({64, 65}, DType::F32, 60).transpose(0, 1));  // strided
  host.push_back(test::random_tensor({4099}, DType::BF16, 61));
  std::vector<Tensor> dev;
  for (const Tensor& t : host) dev.push_back(t.to(kGpu));
  reset_op_counts();
  const Tensor a = global_norm(dev), b = global_norm(dev);
  require_all_on_cuda();
  require_same_bits(a, b);
  INGOT_REQUIRE_CLOSE(a.to(kCpu), global_norm(host), 0.0, 1e-6);
}

TEST_CASE("cuda correctness: ARANGE equals the reference bit for bit", "[cuda][creation]") {
  if (!gpu_with_sync(false)) return;
  for (const DType dt : {DType::F64, DType::F32}) {
    reset_op_counts();
    const Tensor got = arange(-3.7, 1000.0, 0.1, dt, kGpu);
    require_all_on_cuda();
    require_same_bits(got, arange(-3.7, 1000.0, 0.1, dt));
  }
}

}  // namespace
}  // namespace ingot

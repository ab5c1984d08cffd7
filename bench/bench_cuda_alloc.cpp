// Allocator cost on the GPU: a cached device allocation through core and the cuda plugin
// (Tensor::empty + release, served by the plugin's size-class cache) against cudaMalloc + cudaFree.
#include <string>

#include "bench_cuda_util.h"

namespace ingot::bench {
namespace {

void bm_ingot_cached_alloc(benchmark::State& state, int64_t n) {
  guarded(state, [&] {
    { const Tensor warm = Tensor::empty({n}, DType::F32, kGpu); }  // fills the cache
    for (auto _ : state) {
      const Tensor t = Tensor::empty({n}, DType::F32, kGpu);
      benchmark::DoNotOptimize(t.storage()->data());
    }
  });
}

void bm_cuda_malloc_free(benchmark::State& state, int64_t n) {
  const auto bytes = static_cast<size_t>(n) * 4;
  for (auto _ : state) {
    void* p = nullptr;
    BENCH_CHECK(cudaMalloc(&p, bytes) == cudaSuccess);
    BENCH_CHECK(cudaFree(p) == cudaSuccess);
  }
}

}  // namespace

void register_benchmarks() {
  for (const int64_t n : {int64_t(256), int64_t(1) << 20, int64_t(64) << 20}) {
    const std::string elems = "/" + std::to_string(n);
    benchmark::RegisterBenchmark(("BM_alloc/ingot_cached" + elems).c_str(), bm_ingot_cached_alloc, n);
    benchmark::RegisterBenchmark(("BM_alloc/cuda_malloc_free" + elems).c_str(), bm_cuda_malloc_free, n);
  }
}

}  // namespace ingot::bench

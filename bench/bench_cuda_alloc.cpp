// Allocator cost on the GPU: a cached device allocation through core and the cuda plugin
// (Tensor::empty + release, served by the plugin's size-class cache) against cudaMalloc + cudaFree.
#include "bench_cuda_util.h"

namespace {

using namespace ingot;

void BM_ingot_cached_alloc(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const int64_t n = state.range(0);
  { const Tensor warm = Tensor::empty({n}, DType::F32, bench::kGpu); }  // fills the cache
  for (auto _ : state) {
    const Tensor t = Tensor::empty({n}, DType::F32, bench::kGpu);
    benchmark::DoNotOptimize(t.storage()->data());
  }
}

void BM_cuda_malloc_free(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const auto bytes = static_cast<size_t>(state.range(0)) * 4;
  for (auto _ : state) {
    void* p = nullptr;
    BENCH_CHECK(cudaMalloc(&p, bytes) == cudaSuccess);
    BENCH_CHECK(cudaFree(p) == cudaSuccess);
  }
}

}  // namespace

BENCHMARK(BM_ingot_cached_alloc)->Arg(256)->Arg(1 << 20)->Arg(64 << 20);
BENCHMARK(BM_cuda_malloc_free)->Arg(256)->Arg(1 << 20)->Arg(64 << 20);
BENCHMARK_MAIN();

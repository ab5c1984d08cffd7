// Elementwise bandwidth on the GPU: Ingot's add of two 64 Mi-element f32 tensors (3 x 256 MiB
// moved) against cudaMemcpy device-to-device of 256 MiB (2 x 256 MiB moved), both as GB/s.
// Target: Ingot >= 80% of the copy bandwidth.
#include "bench_cuda_util.h"
#include "ingot/ops/elementwise.h"

namespace {

using namespace ingot;
constexpr int64_t kElems = int64_t(64) << 20;

void BM_ingot_add_f32(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const Tensor a = bench::gpu_random({kElems}, DType::F32), b = bench::gpu_random({kElems}, DType::F32);
  Tensor c = add(a, b);
  bench::sync();
  for (auto _ : state) {
    c = add(a, b);
    bench::sync();
  }
  state.counters["GB/s"] = benchmark::Counter(3.0 * 4 * kElems / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ingot_add_bf16_broadcast(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const Tensor a = bench::gpu_random({kElems / 1024, 1024}, DType::BF16), b = bench::gpu_random({1024}, DType::BF16);
  Tensor c = add(a, b);
  bench::sync();
  for (auto _ : state) {
    c = add(a, b);
    bench::sync();
  }
  state.counters["GB/s"] = benchmark::Counter(2.0 * 2 * kElems / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_cuda_memcpy_d2d(benchmark::State& state) {
  if (!bench::cuda_ready(state)) return;
  const Tensor a = bench::gpu_random({kElems}, DType::F32);
  const Tensor c = Tensor::empty({kElems}, DType::F32, bench::kGpu);
  bench::sync();
  for (auto _ : state) {
    BENCH_CHECK(cudaMemcpy(c.storage()->data(), a.storage()->data(), 4 * kElems, cudaMemcpyDeviceToDevice) == cudaSuccess);
    bench::sync();
  }
  state.counters["GB/s"] = benchmark::Counter(2.0 * 4 * kElems / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_ingot_add_f32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ingot_add_bf16_broadcast)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_cuda_memcpy_d2d)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();

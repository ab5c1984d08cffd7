// Elementwise bandwidth on the GPU: Ingot's add of two 64 Mi-element tensors (reads 2, writes 1)
// against cudaMemcpy device-to-device (reads 1, writes 1), alternating in one process, each as
// GB/s of bytes moved. Target: Ingot >= 80% of the copy's bandwidth.
#include <string>

#include "bench_cuda_util.h"
#include "ingot/ops/elementwise.h"

namespace ingot::bench {
namespace {

constexpr int64_t kElems = int64_t(64) << 20;

/// Ingot's `a + b` (b broadcast along rows when `broadcast`) against a copy of the output's bytes.
void bm_add(benchmark::State& state, DType dt, bool broadcast) {
  guarded(state, [&] {
    const Tensor a = broadcast ? gpu_random({kElems / 1024, 1024}, dt) : gpu_random({kElems}, dt);
    const Tensor b = broadcast ? gpu_random({1024}, dt) : gpu_random({kElems}, dt);
    const Tensor copy = Tensor::empty(a.shape(), dt, kGpu);
    const size_t bytes = static_cast<size_t>(kElems * dtype_size(dt));
    Tensor c;
    PairTimer timer(state, "memcpy");
    timer.run([&] { c = add(a, b); },
              [&] {
                BENCH_CHECK(cudaMemcpyAsync(device_ptr(copy), device_ptr(a), bytes, cudaMemcpyDeviceToDevice,
                                            nullptr) == cudaSuccess);
              });
    // add reads a and b and writes c (b is one row when broadcast); the copy reads and writes once.
    const auto one = static_cast<double>(bytes);
    timer.report((broadcast ? 2.0 : 3.0) * one, 2.0 * one, 1e9, "GB/s", 0.80);
  });
}

}  // namespace

void register_benchmarks() {
  benchmark::RegisterBenchmark("BM_add/f32/64Mi", bm_add, DType::F32, false)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_add/bf16/64Mi_broadcast_row", bm_add, DType::BF16, true)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace ingot::bench

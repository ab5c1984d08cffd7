// Ingot's common memory-bound ops on the GPU, timed through the public API: softmax and layer norm
// over the rows of a 16384 x 4096 tensor (f32, bf16), the sum of 1 GiB of f32, and the host cost
// of one tiny op (10,000 one-element adds queued without a wait, then one wait). bench/torch_gpu_ops.py
// times the same work in PyTorch under the same names; bench/compare --device cuda joins the two.
#include <string>

#include "bench_cuda_util.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/norm.h"
#include "ingot/ops/reduce.h"

namespace ingot::bench {
namespace {

constexpr int64_t kRows = 16384, kCols = 4096;
constexpr int64_t kSumElems = int64_t(256) << 20;  // 1 GiB of f32
constexpr int kTinyCalls = 10000;

const char* short_name(DType dt) { return dt == DType::BF16 ? "bf16" : "f32"; }

/// Bytes of one pass over a kRows x kCols tensor.
double pass_bytes(DType dt) { return static_cast<double>(kRows * kCols * dtype_size(dt)); }

void bm_softmax(benchmark::State& state, DType dt) {
  guarded(state, [&] {
    const Tensor x = gpu_random({kRows, kCols}, dt);
    Tensor y;
    SoloTimer timer(state);
    timer.run([&] { y = softmax(x, 1); });
    timer.report(2.0 * pass_bytes(dt), 1e9, "GB/s");  // reads x, writes y
  });
}

void bm_layer_norm(benchmark::State& state, DType dt) {
  guarded(state, [&] {
    const Tensor x = gpu_random({kRows, kCols}, dt);
    const Tensor w = gpu_random({kCols}, dt), b = gpu_random({kCols}, dt);
    LayerNormResult r;
    SoloTimer timer(state);
    timer.run([&] { r = layer_norm(x, {kCols}, w, b); });
    timer.report(2.0 * pass_bytes(dt), 1e9, "GB/s");  // reads x, writes y (the statistics are small)
  });
}

void bm_sum(benchmark::State& state) {
  guarded(state, [&] {
    const Tensor x = gpu_random({kSumElems}, DType::F32);
    Tensor s;
    SoloTimer timer(state);
    timer.run([&] { s = sum(x); });
    timer.report(4.0 * static_cast<double>(kSumElems), 1e9, "GB/s");
  });
}

void bm_tiny_add(benchmark::State& state) {
  guarded(state, [&] {
    const Tensor a = gpu_random({1}, DType::F32), b = gpu_random({1}, DType::F32);
    Tensor c;
    SoloTimer timer(state);
    timer.run([&] { c = add(a, b); }, kTinyCalls);
    timer.report(0.0, 1.0, "");
  });
}

}  // namespace

void register_benchmarks() {
  const std::string shape = "/" + std::to_string(kRows) + "x" + std::to_string(kCols);
  for (const DType dt : {DType::F32, DType::BF16}) {
    benchmark::RegisterBenchmark(("BM_softmax/" + std::string(short_name(dt)) + shape).c_str(), bm_softmax, dt)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_layer_norm/" + std::string(short_name(dt)) + shape).c_str(), bm_layer_norm, dt)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_sum/f32/1GiB", bm_sum)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_tiny_add/f32/1", bm_tiny_add)->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace ingot::bench

// Fused scaled dot-product attention through Ingot's dispatch (cpu_onednn's tiled kernels): a
// GPT-small-sized causal self-attention, B 8, H 6, T 1024, D 64, forward and backward, f32 and
// bf16. The backward gets the forward's own output and lse, as autograd hands them over.
//
//   OMP_NUM_THREADS=2 bench_attention --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>

#include "ingot/ops/random.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "load_onednn.h"

namespace {

using namespace ingot;

using ingot::bench::load_onednn;

constexpr int64_t kB = 8, kH = 6, kT = 1024, kD = 64;

Tensor input(const Shape& s, DType dt, uint64_t seed) {
  Generator gen(seed);
  return uniform(s, -1.0, 1.0, DType::F32, &gen).to(dt);
}

ingot_attr_attention causal_attr() {
  auto a = make_attr<ingot_attr_attention>();
  a.scale = 1.0 / std::sqrt(static_cast<double>(kD));
  a.causal = 1;
  return a;
}

void attention(benchmark::State& state, bool backward, DType dt) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const auto attr = causal_attr();
  const Shape qkv{kB, kH, kT, kD}, lse{kB, kH, kT};
  const std::vector<Tensor> qkv_in{input(qkv, dt, 1), input(qkv, dt, 2), input(qkv, dt, 3)};
  const std::vector<OutputSpec> fwd_out{{qkv, dt}, {lse, DType::F32}};
  OpKind op = INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION;
  std::vector<Tensor> in = qkv_in;
  std::vector<OutputSpec> out = fwd_out;
  if (backward) {
    const std::vector<Tensor> f = run_op(op, qkv_in, fwd_out, &attr);
    op = INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
    in = {input(qkv, dt, 4), qkv_in[0], qkv_in[1], qkv_in[2], f[0], f[1]};
    out = {{qkv, dt}, {qkv, dt}, {qkv, dt}};
  }
  state.SetLabel(select_backend(op, in, out, &attr).name());
  for (auto _ : state) benchmark::DoNotOptimize(run_op(op, in, out, &attr));
  // the causal half of the Tq x Tk products: 2 (q k, p v) forward, 5 backward
  const double flops = (backward ? 5.0 : 2.0) * 2.0 * kB * kH * kT * kT * kD / 2.0;
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

#define INGOT_ATTENTION_BENCH(label, backward, dt)  \
  BENCHMARK_CAPTURE(attention, label, backward, dt) \
      ->Unit(benchmark::kMillisecond)               \
      ->MeasureProcessCPUTime()                     \
      ->UseRealTime()

INGOT_ATTENTION_BENCH(causal_fwd_f32, false, DType::F32);
INGOT_ATTENTION_BENCH(causal_bwd_f32, true, DType::F32);
INGOT_ATTENTION_BENCH(causal_fwd_bf16, false, DType::BF16);
INGOT_ATTENTION_BENCH(causal_bwd_bf16, true, DType::BF16);

BENCHMARK_MAIN();

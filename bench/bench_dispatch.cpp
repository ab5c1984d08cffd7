// Dispatch overhead: the same oneDNN work run through Ingot (plugin loader, backend selection,
// plan cache, workspace from core's allocator) and called directly on oneDNN, side by side.
// Ops: matmul 512^3 and 2048^3 f32 (and oneDNN's sgemm at 2048^3), conv N=32 C=64 56x56 K=64 3x3 pad 1 (NCHW in and out, so both sides
// reorder to oneDNN's blocked formats), and add on 16 floats (pure per-op cost).
#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "ingot/ops/linalg.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "load_onednn.h"

namespace {

using namespace ingot;
using dnnl::memory;
using tag = memory::format_tag;

using ingot::bench::load_onednn;

Tensor filled(const Shape& s, float v) {
  Tensor t = Tensor::empty(s);
  t.fill_(v);
  return t;
}

struct Direct {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};

Direct& direct() {
  static Direct d;
  return d;
}

/// Writes `v` everywhere (untouched memory would read the kernel's shared zero page, which
/// makes a direct run look faster than it is).
memory fill(memory m, float v) {
  auto* p = static_cast<float*>(m.get_data_handle());
  std::fill(p, p + m.get_desc().get_size() / sizeof(float), v);
  return m;
}

// ---- matmul n^3 (512: dispatch cost; 2048: the throughput check against sgemm) -------
void flops(benchmark::State& state, int64_t n) {
  const double gflop = 2.0 * double(n) * double(n) * double(n) / 1e9;
  state.counters["GFLOP/s"] = benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Matmul_Ingot(benchmark::State& state) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const int64_t n = state.range(0);
  const Tensor a = filled({n, n}, 0.5f), b = filled({n, n}, 0.25f), y = Tensor::empty({n, n});
  const auto attr = make_attr<ingot_attr_matmul>();
  for (auto _ : state) run_op_into(INGOT_OP_MATMUL, {a, b}, {y}, &attr);
  flops(state, n);
}

void BM_Matmul_Direct(benchmark::State& state) {
  Direct& d = direct();
  const int64_t n = state.range(0);
  const memory::desc md({n, n}, memory::data_type::f32, tag::ab);
  auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), d.eng);
  dnnl::matmul prim(pd);
  memory a = fill(memory(md, d.eng), 0.5f), b = fill(memory(md, d.eng), 0.25f), y = fill(memory(md, d.eng), 0.f);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, y}};
  for (auto _ : state) prim.execute(d.strm, args);
  flops(state, n);
}

// oneDNN's own BLAS-style sgemm (row-major, no transposes): the 85 % reference.
void BM_Sgemm_Direct(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), y(size_t(n * n), 0.f);
  for (auto _ : state)
    dnnl::sgemm('N', 'N', n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, y.data(), n);
  flops(state, n);
}

// ---- conv 32x64x56x56, 64 3x3 filters, pad 1 ---------------------------------------------------
const memory::dims kX{32, 64, 56, 56}, kW{64, 64, 3, 3}, kB{64};

/// 3x3, stride 1, padding 1, with bias.
ingot_attr_conv2d conv_attr() { return conv2d_attr(Conv2dParams{.padding = {1, 1}}, true, Activation::None); }

void BM_Conv_Ingot(benchmark::State& state) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const Tensor x = filled({32, 64, 56, 56}, 0.5f), w = filled({64, 64, 3, 3}, 0.01f), b = filled({64}, 0.1f);
  const Tensor y = Tensor::empty({32, 64, 56, 56});
  const auto attr = conv_attr();
  for (auto _ : state) run_op_into(INGOT_OP_CONV2D, {x, w, b}, {y}, &attr);
}

// The plain-oneDNN way to run the same conv on NCHW / OIHW tensors: `any` formats, reorders.
void BM_Conv_Direct(benchmark::State& state) {
  Direct& d = direct();
  const auto f32 = memory::data_type::f32;
  auto cd = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                            memory::desc(kX, f32, tag::any), memory::desc(kW, f32, tag::any),
                                            memory::desc(kB, f32, tag::x), memory::desc(kX, f32, tag::any), {1, 1},
                                            {0, 0}, {1, 1}, {1, 1});
  auto pd = dnnl::convolution_forward::primitive_desc(cd, d.eng);
  dnnl::convolution_forward conv(pd);
  memory x_user = fill(memory({kX, f32, tag::nchw}, d.eng), 0.5f),
         w_user = fill(memory({kW, f32, tag::oihw}, d.eng), 0.01f);
  memory b = fill(memory({kB, f32, tag::x}, d.eng), 0.1f), y_user = fill(memory({kX, f32, tag::nchw}, d.eng), 0.f);
  memory x = fill(memory(pd.src_desc(), d.eng), 0.f), w = fill(memory(pd.weights_desc(), d.eng), 0.f);
  memory y = fill(memory(pd.dst_desc(), d.eng), 0.f);
  dnnl::reorder rx(x_user, x), rw(w_user, w), ry(y, y_user);
  for (auto _ : state) {
    rx.execute(d.strm, x_user, x);
    rw.execute(d.strm, w_user, w);
    conv.execute(d.strm, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}});
    ry.execute(d.strm, y, y_user);
  }
}

// ---- add on 16 floats: the per-op dispatch cost -------------------------------------------------
void BM_TinyAdd_Ingot(benchmark::State& state) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const Tensor a = filled({16}, 1.f), b = filled({16}, 2.f), y = Tensor::empty({16});
  for (auto _ : state) run_op_into(INGOT_OP_ADD, {a, b}, {y});
}

void BM_TinyAdd_IngotAlloc(benchmark::State& state) {
  if (!load_onednn()) return state.SkipWithError("cpu_onednn plugin unavailable");
  const Tensor a = filled({16}, 1.f), b = filled({16}, 2.f);
  for (auto _ : state) benchmark::DoNotOptimize(run_op(INGOT_OP_ADD, {a, b}, {{{16}, DType::F32}}));
}

void BM_TinyAdd_Direct(benchmark::State& state) {
  Direct& d = direct();
  const memory::desc md({16}, memory::data_type::f32, tag::a);
  auto pd = dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_add, md, md, md), d.eng);
  dnnl::binary prim(pd);
  memory a = fill(memory(md, d.eng), 1.f), b = fill(memory(md, d.eng), 2.f), y = fill(memory(md, d.eng), 0.f);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, y}};
  for (auto _ : state) prim.execute(d.strm, args);
}

}  // namespace

BENCHMARK(BM_Matmul_Ingot)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Matmul_Direct)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm_Direct)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv_Ingot)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv_Direct)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TinyAdd_Ingot)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_TinyAdd_IngotAlloc)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_TinyAdd_Direct)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();

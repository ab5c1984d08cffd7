// Shared by the CUDA benchmarks: device tensors, waits, a timer that runs Ingot and a vendor
// library alternately in one process and reports their ratio, and the check for direct calls.
// Each bench_cuda_*.cpp defines register_benchmarks(); cuda_bench_main.cpp is their main().
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "ingot/ops/random.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/tensor/tensor.h"

#define BENCH_CHECK(call)                                                    \
  do {                                                                       \
    if (!(call)) {                                                           \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      std::abort();                                                          \
    }                                                                        \
  } while (0)

namespace ingot::bench {

inline const Device kGpu{DeviceKind::CUDA, 0};

/// Registers this program's benchmarks (each bench_cuda_*.cpp defines it).
void register_benchmarks();

/// Why the cuda backend cannot run here ("" when it can); loads the plugins on first use.
std::string cuda_unavailable_reason();

/// Uniform [-1, 1) values of `dtype` on the GPU (drawn there).
inline Tensor gpu_random(const Shape& s, DType dtype) { return uniform(s, -1.0, 1.0, dtype, nullptr, kGpu); }

/// Device pointer of a contiguous GPU tensor, for the vendor library's side.
inline void* device_ptr(const Tensor& t) { return t.storage()->data(); }

/// Waits for Ingot's queued GPU work through the public API, as a user would.
inline void wait_ingot() { synchronize(kGpu); }

/// Waits for everything queued on the GPU (the vendor library's streams included).
inline void wait_cuda() { BENCH_CHECK(cudaDeviceSynchronize() == cudaSuccess); }

/// Seconds for `calls` back-to-back calls of `fn`, then `wait()`.
template <class F, class W>
double time_calls(int calls, F&& fn, W&& wait) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) fn();
  wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Calls per timed batch for a call of `seconds`: about 20 ms a batch, 1 to 64 calls, so that the
/// one wait per batch is a small part of a short kernel's time.
inline int calls_per_batch(double seconds) {
  return static_cast<int>(std::clamp(std::ceil(0.02 / std::max(seconds, 1e-7)), 1.0, 64.0));
}

/// Runs `body`, turning an exception (an Ingot error, say) into this benchmark's error.
template <class F>
void guarded(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// Ingot and a reference (cuBLAS, cuDNN, cudaMemcpy) doing the same work, timed alternately in
/// each iteration so that both see the same clocks: a batch of calls per side, each batch ending
/// with its side's wait. The iteration time (register with UseManualTime) is Ingot's batch, so
/// that --benchmark_min_time bounds the real time; per-call figures are the counters.
class PairTimer {
 public:
  PairTimer(benchmark::State& state, std::string reference) : state_(state), reference_(std::move(reference)) {}

  template <class I, class R>
  void run(I&& ingot, R&& reference) {
    ingot();  // plans, workspaces, heuristics and first touches stay out of the timing
    wait_ingot();
    reference();
    wait_cuda();
    const int calls = calls_per_batch(std::max(time_calls(1, ingot, wait_ingot), time_calls(1, reference, wait_cuda)));
    bool ingot_first = true;
    for (auto _ : state_) {
      double ti = 0.0, tr = 0.0;
      if (ingot_first) {
        ti = time_calls(calls, ingot, wait_ingot);
        tr = time_calls(calls, reference, wait_cuda);
      } else {
        tr = time_calls(calls, reference, wait_cuda);
        ti = time_calls(calls, ingot, wait_ingot);
      }
      ingot_first = !ingot_first;
      ingot_s_ += ti;
      reference_s_ += tr;
      calls_ += calls;
      state_.SetIterationTime(ti);
    }
  }

  /// Counters: each side's ms per call and rate (its work per call / `scale` per second, named
  /// `unit`: FLOP or bytes moved, which may differ between the sides), ratio = Ingot's rate / the
  /// reference's, and the target ratio.
  void report(double ingot_work, double reference_work, double scale, const std::string& unit, double target) {
    if (calls_ == 0) return;
    const double ti = ingot_s_ / calls_, tr = reference_s_ / calls_;
    const double ingot_rate = ingot_work / scale / ti, reference_rate = reference_work / scale / tr;
    state_.counters["ingot_ms"] = 1e3 * ti;
    state_.counters[reference_ + "_ms"] = 1e3 * tr;
    state_.counters["ingot_" + unit] = ingot_rate;
    state_.counters[reference_ + "_" + unit] = reference_rate;
    state_.counters["ratio"] = ingot_rate / reference_rate;
    state_.counters["target"] = target;
    state_.counters["calls"] = calls_ / static_cast<double>(state_.iterations());
  }

 private:
  benchmark::State& state_;
  std::string reference_;
  double ingot_s_ = 0.0, reference_s_ = 0.0;
  double calls_ = 0.0;
};

/// Ingot alone (joined with PyTorch's figures by bench/compare --device cuda): batches of
/// `calls` calls (0 = about 20 ms a batch), each batch ending with Ingot's wait; the iteration
/// time (UseManualTime) is a batch's, the counters are per call.
class SoloTimer {
 public:
  explicit SoloTimer(benchmark::State& state) : state_(state) {}

  template <class I>
  void run(I&& ingot, int calls = 0) {
    ingot();
    wait_ingot();
    if (calls <= 0) calls = calls_per_batch(time_calls(1, ingot, wait_ingot));
    for (auto _ : state_) {
      const double t = time_calls(calls, ingot, wait_ingot);
      ingot_s_ += t;
      calls_ += calls;
      state_.SetIterationTime(t);
    }
  }

  /// Counters: ms per call and the rate of `work` per call / `scale` per second, named `unit`.
  void report(double work, double scale, const std::string& unit) {
    if (calls_ == 0) return;
    const double t = ingot_s_ / calls_;
    state_.counters["ingot_ms"] = 1e3 * t;
    if (work > 0) state_.counters["ingot_" + unit] = work / scale / t;
    state_.counters["calls"] = calls_ / static_cast<double>(state_.iterations());
  }

 private:
  benchmark::State& state_;
  double ingot_s_ = 0.0;
  double calls_ = 0.0;
};

}  // namespace ingot::bench

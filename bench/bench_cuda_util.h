// Shared by the CUDA benchmarks: load the cuda plugin once, device tensors, synchronisation and
// a check macro for direct CUDA / cuBLAS / cuDNN calls (a failed call aborts the benchmark run).
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ingot/ops/random.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/tensor/tensor.h"

namespace ingot::bench {

inline const Device kGpu{DeviceKind::CUDA, 0};

/// Loads the plugins; false (and a message) when the cuda backend cannot run here.
inline bool cuda_ready(benchmark::State& state) {
  static const std::string why = [] {
    PluginLoader::instance().load_all();
    const PluginRecord* rec = PluginLoader::instance().find("cuda");
    if (rec == nullptr) return std::string("cuda plugin not found");
    return rec->available ? std::string() : rec->reason;
  }();
  if (!why.empty()) state.SkipWithError(("cuda backend unavailable: " + why).c_str());
  return why.empty();
}

/// Uniform [-1, 1) values of `dtype` on the GPU (drawn there).
inline Tensor gpu_random(const Shape& s, DType dtype) { return uniform(s, -1.0, 1.0, dtype, nullptr, kGpu); }

/// Waits for all GPU work of the process (the plugin's stream included).
inline void sync() {
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::fprintf(stderr, "cudaDeviceSynchronize failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    std::abort();
  }
}

}  // namespace ingot::bench

#define BENCH_CHECK(call)                                                        \
  do {                                                                           \
    if (!(call)) {                                                               \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);    \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

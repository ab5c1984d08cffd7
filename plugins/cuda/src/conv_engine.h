// ConvEngine: the seam between the CUDA backend and cuDNN's convolutions. Today's engine uses the
// legacy (deprecated in cuDNN 9) descriptor API in conv_engine_legacy.cpp; a graph-API engine can
// replace it without touching the backend. Algorithms are ranked once per plan key and cached.
#pragma once

#include <memory>

#include "device_context.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

class ConvEngine {
 public:
  virtual ~ConvEngine() = default;
  /// CONV2D, CONV2D_BWD_DATA, CONV2D_BWD_WEIGHT calls this engine runs.
  virtual bool supports(const sdk::OpCall& call) const = 0;
  virtual void run(const sdk::OpCall& call, cudaStream_t stream) = 0;
  virtual void cache_stats(ingot_plan_cache_stats& stats) const = 0;
  /// The cuDNN algorithm of the last call, e.g. "cudnn_legacy:algo_1".
  virtual const char* last_algo() const = 0;
};

/// The cuDNN legacy-API engine (workspace from the device's caching allocator).
std::unique_ptr<ConvEngine> make_legacy_conv_engine(DeviceContext& dev);

}  // namespace ingot::cuda

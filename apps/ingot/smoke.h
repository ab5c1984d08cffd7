// The smoke run of `ingot run` until training lands: matmul and conv2d on the selected backends,
// timed, and checked against the reference backend.
#pragma once

#include <functional>
#include <string>

#include "ingot/config/config.h"
#include "ingot/tensor/device.h"

namespace ingot::cli {

struct SmokeResult {
  std::string op;        ///< "matmul 512x512x512"
  std::string backend;   ///< backend dispatch picked
  double median_ms = 0;
  double gflops = 0;
  double max_error = 0;  ///< max |x - reference| / (1 + |reference|)
};

/// Runs each smoke op `smoke.repeats` times (default 3) after one warm-up and hands each result
/// to `report` as soon as it is ready; stops early when interrupted() turns true.
void run_smoke(const config::Config& cfg, Device device, const std::function<void(const SmokeResult&)>& report);

}  // namespace ingot::cli

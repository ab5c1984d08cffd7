// Device: where a tensor's memory lives (host CPU or a numbered accelerator).
#pragma once

#include <cstdint>
#include <string>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot {

enum class DeviceKind : int32_t { CPU = INGOT_DEVICE_CPU, CUDA = INGOT_DEVICE_CUDA };

/// A device kind and index, written "cpu" or "cuda:1".
struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int32_t index = 0;

  static Device cpu() { return {}; }
  /// Parses "cpu", "cuda", "cuda:N"; throws ConfigError otherwise.
  static Device parse(const std::string& text);
  std::string str() const;
  bool is_cpu() const { return kind == DeviceKind::CPU; }
  friend bool operator==(const Device& a, const Device& b) {
    return a.kind == b.kind && a.index == b.index;
  }
};

}  // namespace ingot

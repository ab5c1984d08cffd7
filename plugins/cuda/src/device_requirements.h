// Which GPUs the plugin serves. Its kernels are built for sm_80 and sm_90 (with their PTX), so a
// device below compute capability 8.0 cannot run them. Pure host logic over what the probe reads,
// so it is tested without a GPU.
#pragma once

#include <string>
#include <vector>

namespace ingot::cuda {

inline constexpr int kMinComputeMajor = 8;

struct DeviceCapability {
  std::string description;  ///< "NVIDIA H200 (sm_90, 139.8 GiB)"
  int major = 0, minor = 0;
};

/// The backend serves CUDA's devices 0 .. served - 1: every device up to the first one below 8.0,
/// so a served index names the same GPU as in CUDA. `problem` says which devices are left out and
/// what to do (empty when all are served).
struct DeviceSelection {
  int served = 0;
  std::string problem;
};

/// `visible` is $CUDA_VISIBLE_DEVICES (NULL when unset): with it set, indices are positions in it.
inline DeviceSelection select_devices(const std::vector<DeviceCapability>& devices, const char* visible) {
  const int count = static_cast<int>(devices.size());
  DeviceSelection s{count, {}};
  std::string below, usable;
  bool usable_left_out = false;  // a supported device after the first unsupported one
  for (int i = 0; i < count; ++i) {
    const DeviceCapability& d = devices[static_cast<size_t>(i)];
    if (d.major >= kMinComputeMajor) {
      usable += (usable.empty() ? "" : ",") + std::to_string(i);
      usable_left_out = usable_left_out || s.served < count;
      continue;
    }
    if (s.served == count) s.served = i;
    below += (below.empty() ? "" : "; ") + std::string("device ") + std::to_string(i) + ": " + d.description +
             " has compute capability " + std::to_string(d.major) + "." + std::to_string(d.minor);
  }
  if (s.served == count) return s;
  s.problem = below + " (this plugin's kernels need 8.0 or newer: they are built for sm_80 and sm_90)";
  if (s.served > 0) s.problem += "; serving devices 0 .. " + std::to_string(s.served - 1) + " only";
  if (usable_left_out) {
    const bool set = visible != nullptr && visible[0] != '\0';
    s.problem += set ? std::string("; to use every supported device, list only those in CUDA_VISIBLE_DEVICES (now \"") +
                           visible + "\"; supported positions " + usable + ")"
                     : "; to use every supported device, set CUDA_VISIBLE_DEVICES=" + usable;
  }
  return s;
}

}  // namespace ingot::cuda

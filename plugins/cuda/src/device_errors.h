// Device-side errors: kernels that find bad input (an index out of range) cannot throw, so they
// record the first such error in a small per-device record; the backend raises it as one
// sdk::Failure at the next synchronization it sees (synchronize, a copy to the host, an event
// wait), or right after the op when INGOT_CUDA_SYNC=1.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace ingot::cuda {

/// What a kernel reports. `code` is 0 while nothing happened; the first kernel to set it (atomically)
/// owns the other fields.
struct DeviceErrorRecord {
  uint32_t code;
  int32_t op;     // INGOT_OP_*
  int64_t index;  // the offending index
  int64_t bound;  // the size of the indexed dim: valid indices are 0 .. bound - 1
};

enum DeviceErrorCode : uint32_t { kNoDeviceError = 0, kIndexOutOfRange = 1 };

#ifdef __CUDACC__
/// Records "index out of range" unless an earlier error is pending; `rec` may be NULL (no channel).
__device__ __forceinline__ void report_index_error(DeviceErrorRecord* rec, int32_t op, int64_t index, int64_t bound) {
  if (rec != nullptr && atomicCAS(&rec->code, uint32_t{kNoDeviceError}, uint32_t{kIndexOutOfRange}) == kNoDeviceError) {
    rec->op = op;
    rec->index = index;
    rec->bound = bound;
  }
}
#endif

/// The one-line message for a record: the op, the index, the valid range, the device, and when it
/// was found (`at_op`: right after the op under INGOT_CUDA_SYNC=1, else at a later synchronization).
std::string device_error_message(const DeviceErrorRecord& rec, int device, bool at_op);

/// Whether INGOT_CUDA_SYNC asks to synchronize and check after every op: "1" (or any value but
/// "", "0", "false", "off", "no"). The backend reads the variable once, when it is created.
bool sync_after_each_op(const char* env_value);

/// One device's record: device memory the kernels write, and a pinned host mirror that each
/// reporting kernel's stream refreshes after it, so that a check at a synchronization point is a
/// host read (no GPU call) unless an error is pending.
class DeviceErrors {
 public:
  /// Allocates and zeroes the record on `device` (made current).
  explicit DeviceErrors(int device);
  ~DeviceErrors();
  DeviceErrors(const DeviceErrors&) = delete;
  DeviceErrors& operator=(const DeviceErrors&) = delete;

  /// The record kernels report into.
  DeviceErrorRecord* record() const { return device_; }
  /// Queues, on `stream` after a reporting kernel, the refresh of the host mirror.
  void watch(cudaStream_t stream);
  /// Throws sdk::Failure (invalid argument) and clears the record when a kernel reported an
  /// error that the host mirror shows; call it after a synchronization.
  void check(bool at_op);

 private:
  int device_index_;
  DeviceErrorRecord* device_ = nullptr;
  volatile uint32_t* mirror_ = nullptr;  // pinned copy of device_->code
};

}  // namespace ingot::cuda

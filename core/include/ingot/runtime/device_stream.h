// Stream: a side stream of an accelerator (torch.cuda.Stream). Work queued on it runs alongside
// the compute stream's, so a host -> device copy can overlap compute; an Event recorded on it and
// waited for by the compute stream orders the two.
#pragma once

#include "ingot/tensor/device.h"

namespace ingot {

class Backend;

class Stream {
 public:
  /// A new side stream of accelerator `device`; throws when its backend offers none.
  explicit Stream(Device device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Whether `device`'s backend offers side streams and events (never on the CPU).
  static bool available(Device device);

  Device device() const { return device_; }
  /// The backend's native handle (a cudaStream_t on CUDA), for ingot_exec_context.stream.
  void* handle() const { return handle_; }

 private:
  Device device_;
  const Backend* backend_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace ingot

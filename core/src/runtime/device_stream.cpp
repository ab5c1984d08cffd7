// Stream: a side stream created and destroyed through the device backend's device table.
#include "ingot/runtime/device_stream.h"

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/device_memory.h"

namespace ingot {

bool Stream::available(Device device) {
  if (device.is_cpu()) return false;
  const Backend& b = device_backend(device);
  return b.offers_streams() && b.offers_events() && b.offers_copy_async();
}

Stream::Stream(Device device) : device_(device) {
  INGOT_CHECK(!device.is_cpu(), "Stream: the CPU has no streams (its work is synchronous)");
  backend_ = &device_backend(device);
  try {
    handle_ = backend_->stream_create(device.index);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", device.str(), e.what()), e.exit_code());
  }
}

Stream::~Stream() {
  if (backend_ != nullptr && handle_ != nullptr) backend_->stream_destroy(device_.index, handle_);
}

}  // namespace ingot

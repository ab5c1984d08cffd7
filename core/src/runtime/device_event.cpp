// Event: an accelerator event through the device backend's device table, or the host clock.
#include "ingot/runtime/device_event.h"

#include <utility>

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/device_stream.h"
#include "ingot/runtime/dispatch.h"

namespace ingot {

Event::Event(Device device) : device_(device) {
  if (device.is_cpu()) return;
  backend_ = &device_backend(device);
  try {
    handle_ = backend_->event_create(device.index);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", device.str(), e.what()), e.exit_code());
  }
}

Event::~Event() { release(); }

Event::Event(Event&& other) noexcept
    : device_(other.device_),
      backend_(std::exchange(other.backend_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)),
      host_time_(other.host_time_),
      recorded_(std::exchange(other.recorded_, false)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    backend_ = std::exchange(other.backend_, nullptr);
    handle_ = std::exchange(other.handle_, nullptr);
    host_time_ = other.host_time_;
    recorded_ = std::exchange(other.recorded_, false);
  }
  return *this;
}

void Event::release() noexcept {
  if (backend_ != nullptr && handle_ != nullptr) backend_->event_destroy(device_.index, handle_);
  handle_ = nullptr;
}

void Event::record(const Stream* stream) {
  if (backend_ == nullptr) {
    host_time_ = std::chrono::steady_clock::now();
  } else {
    INGOT_CHECK(handle_ != nullptr, "Event on {}: used after being moved from", device_.str());
    INGOT_CHECK(stream == nullptr || stream->device() == device_, "Event on {}: record on a stream of {}", device_.str(),
                stream->device().str());
    ingot_exec_context ctx = exec_context();
    ctx.stream = stream != nullptr ? stream->handle() : nullptr;
    backend_->event_record(device_.index, handle_, ctx);
  }
  recorded_ = true;
}

void Event::wait(const Stream* stream) const {
  INGOT_CHECK(recorded_, "Event on {}: wait() before record()", device_.str());
  if (backend_ == nullptr) return;
  backend_->stream_wait_event(device_.index, stream != nullptr ? stream->handle() : nullptr, handle_);
}

void Event::synchronize() const {
  INGOT_CHECK(recorded_, "Event on {}: synchronize() before record()", device_.str());
  if (backend_ != nullptr) backend_->event_synchronize(device_.index, handle_);
}

double Event::elapsed_ms(const Event& end) const {
  INGOT_CHECK(recorded_ && end.recorded_, "Event::elapsed_ms: record both events first (start {}, end {})",
              recorded_ ? "recorded" : "not recorded", end.recorded_ ? "recorded" : "not recorded");
  INGOT_CHECK(device_ == end.device_, "Event::elapsed_ms: events on {} and {}; time events of one device",
              device_.str(), end.device_.str());
  if (backend_ == nullptr) return std::chrono::duration<double, std::milli>(end.host_time_ - host_time_).count();
  return backend_->event_elapsed_ms(device_.index, handle_, end.handle_);
}

}  // namespace ingot

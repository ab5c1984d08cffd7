// SendQueue: a thread that waits for each posted send's delivery, in posting order, and frees its
// copy; a failed delivery is kept and reported by the communicator's next call.
#include "send_queue.h"

#include <exception>
#include <utility>

#include "errors.h"
#include "ingot/plugin/sdk.h"
#include "no_sigpipe.h"

namespace ingot::gloo_ddp {

SendQueue::~SendQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SendQueue::push(int peer, std::vector<char> data, std::unique_ptr<gloo::transport::UnboundBuffer> buffer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(Item{peer, std::move(data), std::move(buffer)});
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  changed_.notify_all();
}

void SendQueue::rethrow() {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.empty()) return;
  std::string message = std::exchange(error_, std::string());
  throw ingot::sdk::Failure(INGOT_ERR_RUNTIME, message);
}

void SendQueue::loop() {
  const NoSigpipe no_sigpipe;  // for the thread's life
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !items_.empty(); });
    if (items_.empty()) return;  // stopping, and everything delivered
    Item item = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    std::string failure;
    try {
      if (!item.buffer->waitSend(timeout_)) failure = "the send was aborted";
    } catch (const std::exception& e) {
      failure = describe_failure("send to rank " + std::to_string(item.peer), e);
    }
    item.buffer.reset();
    lock.lock();
    if (!failure.empty() && error_.empty())
      error_ = "an earlier " + failure;
  }
}

}  // namespace ingot::gloo_ddp

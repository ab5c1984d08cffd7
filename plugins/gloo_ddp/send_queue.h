// SendQueue: point-to-point sends that return once posted. gloo's TCP transport delivers a send
// only when the receiver has posted its recv, so a send that waited for that would deadlock a
// ring where every rank sends before it receives; instead the data is copied, posted, and a
// thread of the queue waits for each delivery, keeping the copy alive until then.
#pragma once

#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ingot::gloo_ddp {

class SendQueue {
 public:
  explicit SendQueue(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  /// Waits for every queued send to be delivered (each up to the timeout), then stops.
  ~SendQueue();
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;

  /// Keeps `data` and its posted buffer until the send to `peer` completes.
  void push(int peer, std::vector<char> data, std::unique_ptr<gloo::transport::UnboundBuffer> buffer);
  /// Throws sdk::Failure with the first failed delivery's message (reported once).
  void rethrow();

 private:
  struct Item {
    int peer = 0;
    std::vector<char> data;  // declared first: the buffer that points into it goes first
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  };
  void loop();

  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Item> items_;
  bool stop_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace ingot::gloo_ddp

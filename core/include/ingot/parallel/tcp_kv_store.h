// TcpKvStore: the key-value store of a group of ranks in several processes or machines (torch's
// TCPStore). Rank 0 serves it at MASTER_ADDR:MASTER_PORT; every rank, rank 0 included, is a
// client. Communicators bootstrap over it (gloo addresses, NCCL's unique id).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "ingot/runtime/kv_store.h"

namespace ingot::parallel {

class KvServer;

class TcpKvStore final : public KvStore {
 public:
  /// With `serve` (rank 0), listens on `port` of every interface (0: a free port, see port())
  /// and serves the store; then connects to host:port, retrying until `connect_timeout` (the
  /// server may start later than its clients). Throws Error naming host:port when no
  /// connection is made in time, or when the port is taken.
  TcpKvStore(const std::string& host, int port, bool serve, std::chrono::milliseconds connect_timeout);
  ~TcpKvStore() override;
  TcpKvStore(const TcpKvStore&) = delete;
  TcpKvStore& operator=(const TcpKvStore&) = delete;

  void set(const std::string& key, std::string value) override;
  /// Throws TimeoutError naming the key when it is not set in time, Error when the server
  /// went away (rank 0 stopped).
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::optional<std::string> try_get(const std::string& key) override;

  /// How long rank 0's destruction waits for the other ranks to disconnect (they may still be
  /// reading what a last collective stored); 5 s unless set. Ranks that failed have disconnected
  /// already, so an error on the way out is not held up by it.
  void linger(std::chrono::milliseconds timeout) { linger_ = timeout; }

  /// The port the store is reached at (the one picked, for port 0).
  int port() const { return port_; }

 private:
  std::string request(char op, const std::string& key, const std::string& body, bool* found);

  std::unique_ptr<KvServer> server_;
  std::string host_;
  int port_ = 0;
  int fd_ = -1;
  std::chrono::milliseconds linger_{5000};
  std::mutex mu_;  // one request at a time on the connection
};

}  // namespace ingot::parallel

// TcpKvStore: a small request/response protocol over one TCP connection per client. A request is
// op (S set, G get, T try_get), the key, and a body (the value, or the get's timeout in ms); the
// reply is a found flag and a value. The server keeps an InProcessKvStore-like map and answers a
// get once its key is set, so waiting happens on the server, one thread per connection.
#include "ingot/parallel/tcp_kv_store.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "ingot/base/error.h"

namespace ingot::parallel {

namespace {

using Clock = std::chrono::steady_clock;

// Writes all of `n` bytes; false when the peer is gone.
bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_string(int fd, const std::string& s) {
  const uint64_t n = s.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, s.data(), s.size());
}

bool read_string(int fd, std::string& s) {
  uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n) || n > (uint64_t{1} << 32)) return false;
  s.resize(n);
  return read_all(fd, s.data(), n);
}

}  // namespace

/// The serving side, owned by rank 0's store.
class KvServer {
 public:
  explicit KvServer(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM, 0);
    const bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    INGOT_CHECK_AS(listen_fd_ >= 0, Error, "key-value store: no socket ({})", std::strerror(errno));
    const int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 clients too
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(listen_fd_, 128) != 0) {
      const std::string why = std::strerror(errno);
      ::close(listen_fd_);
      throw Error(fmt::format(
          "key-value store: rank 0 cannot listen on port {} ({}): is another run using it? pick another "
          "MASTER_PORT (ingot launch --master-port)",
          port, why));
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  /// Waits up to `timeout` until no client is connected.
  void wait_for_clients(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, timeout, [&] { return connected_ == 0; });
  }

  ~KvServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      for (int fd : clients_) ::shutdown(fd, SHUT_RDWR);
    }
    changed_.notify_all();
    acceptor_.join();
    for (std::thread& t : workers_) t.join();
    for (int fd : clients_) ::close(fd);
    ::close(listen_fd_);
  }

  int port() const { return port_; }

 private:
  void accept_loop() {
    while (true) {
      pollfd p{listen_fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      if (ready <= 0) continue;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      clients_.push_back(fd);
      ++connected_;
      workers_.emplace_back([this, fd] {
        serve(fd);
        std::lock_guard<std::mutex> lock(mu_);
        --connected_;
        changed_.notify_all();
      });
    }
  }

  // Answers one client's requests until it disconnects or the server stops.
  void serve(int fd) {
    while (true) {
      char op = 0;
      std::string key, body;
      if (!read_all(fd, &op, 1) || !read_string(fd, key) || !read_string(fd, body)) return;
      std::optional<std::string> value;
      std::unique_lock<std::mutex> lock(mu_);
      if (op == 'S') {
        values_[key] = std::move(body);
        changed_.notify_all();
        value = std::string();
      } else if (op == 'G' || op == 'T') {
        int64_t timeout_ms = 0;
        if (op == 'G' && body.size() == sizeof timeout_ms) std::memcpy(&timeout_ms, body.data(), sizeof timeout_ms);
        const auto deadline = Clock::now() + std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0));
        const auto present = [&] { return stopping_ || values_.count(key) != 0; };
        if (op == 'G' && timeout_ms < 0)
          changed_.wait(lock, present);
        else if (op == 'G')
          changed_.wait_until(lock, deadline, present);
        if (const auto it = values_.find(key); it != values_.end()) value = it->second;
      }
      if (stopping_) return;
      lock.unlock();
      const char found = value ? 1 : 0;
      if (!write_all(fd, &found, 1) || !write_string(fd, value.value_or(std::string()))) return;
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  int connected_ = 0;
  std::map<std::string, std::string> values_;
  std::vector<int> clients_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

TcpKvStore::TcpKvStore(const std::string& host, int port, bool serve, std::chrono::milliseconds connect_timeout)
    : host_(host), port_(port) {
  if (serve) {
    server_ = std::make_unique<KvServer>(port);
    port_ = server_->port();
  }
  INGOT_CHECK_AS(port_ > 0 && port_ <= 65535, ConfigError, "key-value store: port {} is not a TCP port", port_);
  const auto deadline = Clock::now() + connect_timeout;
  std::string last_error = "no attempt";
  while (true) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port_).c_str(), &hints, &found);
    if (rc != 0) {
      last_error = ::gai_strerror(rc);
    } else {
      for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          fd_ = fd;
        } else {
          last_error = std::strerror(errno);
          ::close(fd);
        }
      }
      ::freeaddrinfo(found);
    }
    if (fd_ >= 0) break;
    if (Clock::now() >= deadline)
      throw Error(fmt::format(
          "key-value store: no connection to rank 0 at {}:{} within {} s ({}): did rank 0 start, and are "
          "MASTER_ADDR / MASTER_PORT the same on every rank?",
          host, port_, connect_timeout.count() / 1000.0, last_error));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

TcpKvStore::~TcpKvStore() {
  if (fd_ >= 0) ::close(fd_);
  if (server_ && linger_.count() > 0) server_->wait_for_clients(linger_);
  server_.reset();
}

std::string TcpKvStore::request(char op, const std::string& key, const std::string& body, bool* found) {
  std::lock_guard<std::mutex> lock(mu_);
  char flag = 0;
  std::string value;
  if (!write_all(fd_, &op, 1) || !write_string(fd_, key) || !write_string(fd_, body) || !read_all(fd_, &flag, 1) ||
      !read_string(fd_, value))
    throw Error(fmt::format(
        "key-value store at {}:{} closed the connection while this rank waited for '{}': rank 0 has stopped (see "
        "its error)",
        host_, port_, key));
  *found = flag != 0;
  return value;
}

void TcpKvStore::set(const std::string& key, std::string value) {
  bool found = false;
  request('S', key, value, &found);
}

std::string TcpKvStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  const int64_t ms = timeout.count();
  bool found = false;
  std::string value = request('G', key, std::string(reinterpret_cast<const char*>(&ms), sizeof ms), &found);
  if (!found)
    throw TimeoutError(
        fmt::format("key-value store: key '{}' was not set within {} ms (did every rank start, and call the same "
                    "collectives in the same order?)",
                    key, ms));
  return value;
}

std::optional<std::string> TcpKvStore::try_get(const std::string& key) {
  bool found = false;
  std::string value = request('T', key, std::string(), &found);
  if (!found) return std::nullopt;
  return value;
}

}  // namespace ingot::parallel

// The gloo TCP device: an interface from the environment, or the local address that routes to
// MASTER_ADDR (found by connecting a UDP socket, which sends nothing), or the host's name.
#include "tcp_device.h"

#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>

#include "ingot/plugin/sdk.h"

namespace ingot::gloo_ddp {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// The numeric address of this host's interface toward host:port, or "" when there is no route.
std::string local_address_toward(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.empty() ? "29500" : port.c_str(), &hints, &found) != 0) return "";
  std::string result;
  for (addrinfo* a = found; a != nullptr && result.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char name[NI_MAXHOST] = {};
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        getnameinfo(reinterpret_cast<sockaddr*>(&local), len, name, sizeof name, nullptr, 0, NI_NUMERICHOST) == 0)
      result = name;
    ::close(fd);
  }
  freeaddrinfo(found);
  return result;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "127.0.0.1";
  return name;
}

}  // namespace

std::shared_ptr<gloo::transport::Device> make_tcp_device(std::string& where) {
  gloo::transport::tcp::attr attr;
  std::string iface = env("INGOT_GLOO_IFNAME");
  if (iface.empty()) iface = env("GLOO_SOCKET_IFNAME");
  const std::string master = env("MASTER_ADDR");
  if (!iface.empty()) {
    attr.iface = iface;
    where = "interface " + iface;
  } else if (master.empty()) {
    attr.hostname = "127.0.0.1";
    where = "address 127.0.0.1 (no MASTER_ADDR: every rank on this machine)";
  } else {
    attr.hostname = local_address_toward(master, env("MASTER_PORT"));
    if (attr.hostname.empty()) attr.hostname = host_name();
    where = "address " + attr.hostname + " (toward MASTER_ADDR " + master + ")";
  }
  try {
    return gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw ingot::sdk::Failure(INGOT_ERR_RUNTIME, "gloo cannot open a TCP device on " + where + ": " + e.what() +
                                                     " (set INGOT_GLOO_IFNAME to an interface that reaches the "
                                                     "other ranks)");
  }
}

}  // namespace ingot::gloo_ddp

// The gloo TCP device a rank listens on: which interface or address, from the environment.
#pragma once

#include <memory>
#include <string>

namespace gloo::transport {
class Device;
}

namespace ingot::gloo_ddp {

/// A TCP device on: the interface named by INGOT_GLOO_IFNAME (or gloo's GLOO_SOCKET_IFNAME);
/// else the local address of the route to MASTER_ADDR (127.0.0.1 when MASTER_ADDR is a loopback
/// address); else, without MASTER_ADDR, 127.0.0.1 (every rank on this machine); else this host's
/// name, as PyTorch does. `where` receives a description ("interface eth0", "address 10.0.0.2")
/// for messages. Throws sdk::Failure naming the choice when gloo cannot open it.
std::shared_ptr<gloo::transport::Device> make_tcp_device(std::string& where);

}  // namespace ingot::gloo_ddp
